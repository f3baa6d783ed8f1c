process.env.PROCESS_NAME ??= 'cli';
import { exitOnStartupError } from '../lib/exitOnStartupError';
import { wire } from '../wiring';
import { closeConnections, prepareDatabase } from './setup';
import { TOKEN_USAGE, tokenCommand } from './tokenCommand';

async function main(argv: string[]) {
  if (!['create', 'list', 'revoke'].includes(argv[0])) {
    process.stderr.write(TOKEN_USAGE);
    process.exitCode = 2;
    return;
  }
  await prepareDatabase();
  try {
    process.exitCode = await tokenCommand(argv, { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) });
  } finally {
    await closeConnections();
  }
}

wire();
main(process.argv.slice(2)).catch(exitOnStartupError);
