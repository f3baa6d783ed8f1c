process.env.PROCESS_NAME ??= 'cli';
import { ensureDatabase } from '../db/ensureDatabase';
import { migrate, migrator, revertLast } from '../db/migrator';
import { exitOnStartupError } from '../lib/exitOnStartupError';
import { closeConnections } from './setup';

/** `npm run migrate` applies pending migrations; `npm run migrate -- down` reverts the last one. */
async function main() {
  await ensureDatabase();
  if (process.argv[2] === 'down') await revertLast();
  else await migrate();
  const executed = await migrator().executed();
  process.stdout.write(`Migrations applied: ${executed.length}\n`);
  await closeConnections();
}

main().catch(exitOnStartupError);
