process.env.PROCESS_NAME ??= 'cli';
import { exitOnStartupError } from './exitOnStartupError';
import { closeConnections, prepareDatabase } from './setup';

/** `npm run seed`: migrates if needed, then adds the default records that are missing. */
async function main() {
  await prepareDatabase();
  process.stdout.write('Seed applied.\n');
  await closeConnections();
}

main().catch(exitOnStartupError);
