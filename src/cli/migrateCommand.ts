import { asksForHelp, type Io } from './args';
import { config } from '../config';
import { ensureDatabase } from '../db/ensureDatabase';
import { migrate, migrationStatus, revertLast } from '../db/migrator';

export const MIGRATE_USAGE = `usage:
  npm run migrate [-- up]     creates the database if needed and applies the pending migrations
  npm run migrate -- down     reverts the last applied migration
  npm run migrate -- status   lists the applied and the pending migrations, changing nothing
`;

/**
 * `migrate [up|down|status]`; returns the exit code: 0 with the usage for `--help`, 2 with it for
 * any other arguments (named), touching nothing.
 */
export async function migrateCommand(argv: string[], io: Io, db = config().database): Promise<number> {
  const [command = 'up', ...rest] = argv;
  if (asksForHelp(command) && !rest.length) {
    io.out(MIGRATE_USAGE);
    return 0;
  }
  if (rest.length || !['up', 'down', 'status'].includes(command)) {
    io.err(`${rest.length ? `Unexpected argument: ${rest[0]}.` : `Unknown command: ${command}.`}\n${MIGRATE_USAGE}`);
    return 2;
  }
  if (command === 'status') {
    const { applied, pending } = await migrationStatus(db);
    io.out([...applied.map((name) => `applied\t${name}\n`), ...pending.map((name) => `pending\t${name}\n`)].join(''));
    io.out(`${applied.length} applied, ${pending.length} pending.\n`);
    return 0;
  }
  if (command === 'down') {
    const reverted = await revertLast(db);
    if (!reverted) {
      io.err('No migration is applied: nothing to revert.\n');
      return 1;
    }
    io.out(`Reverted ${reverted}.\n`);
  } else {
    await ensureDatabase(db);
    const { pending } = await migrationStatus(db);
    await migrate(db);
    // What this run did, then where the database stands (a total alone read the same every time).
    io.out(pending.length ? `Applied ${pending.length} ${pending.length === 1 ? 'migration' : 'migrations'}: ${pending.join(', ')}.\n` : 'Nothing to apply: the database is up to date.\n');
  }
  io.out(`Migrations applied: ${(await migrationStatus(db)).applied.length}\n`);
  return 0;
}
