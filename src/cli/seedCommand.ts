import { asksForHelp, type Io } from './args';
import { config } from '../config';
import { ensureFirstToken, prepareDatabase } from './setup';

export const SEED_USAGE = `usage:
  npm run seed                creates the database if needed, applies the pending migrations and adds
                              the default records that are missing (and API_TOKEN's token, when set);
                              the release step of every install and upgrade (docs/operations.md)
`;

/**
 * `seed`; returns the exit code. It takes no arguments: `--help` prints the usage (exit 0), any
 * other is refused (exit 2), both touching nothing. It read none, so `npm run seed -- --help`
 * migrated the database: an upgrade under the running release's processes.
 */
export async function seedCommand(argv: string[], io: Io): Promise<number> {
  if (argv.length) {
    if (asksForHelp(argv[0]) && argv.length === 1) {
      io.out(SEED_USAGE);
      return 0;
    }
    io.err(`Unexpected argument: ${argv[0]}.\n${SEED_USAGE}`);
    return 2;
  }
  await prepareDatabase();
  // API_TOKEN given (a container's first token): stored, as `npm start` does.
  if (config().apiToken) await ensureFirstToken();
  io.out('Seed applied.\n');
  return 0;
}
