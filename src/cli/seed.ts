process.env.PROCESS_NAME ??= 'cli';
import { exitOnStartupError } from '../lib/exitOnStartupError';
import { wire } from '../wiring';
import { closeConnections } from './setup';
import { seedCommand } from './seedCommand';

/** `npm run seed` (seedCommand.ts). */
async function main() {
  try {
    process.exitCode = await seedCommand(process.argv.slice(2), { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) });
  } finally {
    await closeConnections();
  }
}

wire();
main().catch(exitOnStartupError);
