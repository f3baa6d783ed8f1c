process.env.PROCESS_NAME ??= 'cli';
import { exitOnStartupError } from '../lib/exitOnStartupError';
import { wire } from '../wiring';
import { closeConnections, prepareDatabase } from './setup';
import { config } from '../config';
import { ensureFirstToken } from './setup';

/** `npm run seed`: migrates if needed, then adds the default records that are missing (and API_TOKEN, when set). */
async function main() {
  await prepareDatabase();
  // API_TOKEN given (a container's first token): stored, as `npm start` does.
  if (config().apiToken) await ensureFirstToken();
  process.stdout.write('Seed applied.\n');
  await closeConnections();
}

wire();
main().catch(exitOnStartupError);
