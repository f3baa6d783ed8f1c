process.env.PROCESS_NAME ??= 'cli';
import { exitOnStartupError } from '../lib/exitOnStartupError';
import { wire } from '../wiring';
import { closeConnections, prepareDatabase } from './setup';
import { ATTACHMENTS_USAGE, attachmentsCommand } from './attachmentsCommand';

async function main(argv: string[]) {
  if (!['move', 'sweep'].includes(argv[0])) {
    process.stderr.write(ATTACHMENTS_USAGE);
    process.exitCode = 2;
    return;
  }
  await prepareDatabase();
  try {
    process.exitCode = await attachmentsCommand(argv, { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) });
  } finally {
    await closeConnections();
  }
}

wire();
main(process.argv.slice(2)).catch(exitOnStartupError);
