import { exitOnStartupError } from '../lib/exitOnStartupError';
import { wire } from '../wiring';
import { closeConnections, prepareDatabase } from './setup';
import { asksForHelp, type Io } from './args';

/**
 * The entry point of a command-line tool (`npm run token -- …`, `npm run attachments -- …`):
 * `--help` (`-h`, `help`) prints the usage and exits 0; an unknown subcommand is named, with the
 * usage, and exits 2; otherwise the database is prepared, the command runs with stdout and stderr,
 * and its result is the exit code.
 */
export function runCommand(subcommands: string[], usage: string, command: (argv: string[], io: Io) => Promise<number>): void {
  const main = async (argv: string[]) => {
    if (asksForHelp(argv[0])) {
      process.stdout.write(usage);
      return;
    }
    if (!subcommands.includes(argv[0])) {
      process.stderr.write(`${argv[0] === undefined ? 'A command is needed.' : `Unknown command: ${argv[0]}.`}\n${usage}`);
      process.exitCode = 2;
      return;
    }
    await prepareDatabase();
    try {
      process.exitCode = await command(argv, { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) });
    } finally {
      await closeConnections();
    }
  };
  wire();
  main(process.argv.slice(2)).catch(exitOnStartupError);
}
