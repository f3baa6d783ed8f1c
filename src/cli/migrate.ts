process.env.PROCESS_NAME ??= 'cli';
import { exitOnStartupError } from '../lib/exitOnStartupError';
import { migrateCommand } from './migrateCommand';

/** `npm run migrate [-- up|down|status]` (migrateCommand.ts). */
migrateCommand(process.argv.slice(2), { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) })
  .then((code) => { process.exitCode = code; })
  .catch(exitOnStartupError);
