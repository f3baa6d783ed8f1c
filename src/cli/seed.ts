process.env.PROCESS_NAME ??= 'cli';
import { exitOnStartupError } from '../lib/exitOnStartupError';
import { wire } from '../wiring';
import { closeConnections, prepareDatabase } from './setup';

/** `npm run seed`: migrates if needed, then adds the default records that are missing. */
async function main() {
  await prepareDatabase();
  process.stdout.write('Seed applied.\n');
  await closeConnections();
}

wire();
main().catch(exitOnStartupError);
