import { Op } from 'sequelize';
import { ApiToken } from '../db/models';
import { ensureDatabase } from '../db/ensureDatabase';
import { migrate } from '../db/migrator';
import { seed } from '../seed/seed';
import { createToken, hashToken } from '../auth/tokens';
import { config } from '../config';
import { sequelize } from '../db/sequelize';
import { closeCounters } from '../redis/windowCounter';
import { searchEngine } from '../ticket/tickets/search/engine';

/**
 * Creates the database if missing, applies migrations, the search engine's index (SEARCH_ENGINE)
 * and the seed. Safe to run any number of times, and by several processes at once: the index and
 * the seed are made under the migration lock too, so one process makes them and the others find
 * them made (two seeds of a new database at once, `npm start` and `npm run token` in another
 * terminal, deadlocked on the settings' unique key, and one process's start failed).
 */
export async function prepareDatabase(): Promise<void> {
  await ensureDatabase();
  await migrate(config().database, async () => {
    await searchEngine().prepare();
    await seed();
  });
}

/**
 * Closes what a command opened, so that it exits when done: the database pool, and the Redis
 * connections that a write opens (cache versions are bumped after every token or configuration
 * change, in any process).
 */
export async function closeConnections(): Promise<void> {
  closeCounters();
  await sequelize().close();
}

/** The name the token of API_TOKEN is stored under. */
export const GIVEN_TOKEN_NAME = 'API_TOKEN';

/**
 * So a new user can call the API at once: API_TOKEN is stored when given, else a first token is
 * made on an install that has none. Returns a token to show, or null when nothing new was made.
 */
export async function ensureFirstToken(given = config().apiToken): Promise<string | null> {
  if (given) {
    const current = await ApiToken.findOne({ where: { token_hash: hashToken(given) } }) ?? (await createToken(GIVEN_TOKEN_NAME, given)).record;
    // Rotation: a changed API_TOKEN replaces the one stored for it before (tokens of other names stay).
    const replaced = await ApiToken.findAll({ attributes: ['id'], where: { name: GIVEN_TOKEN_NAME, id: { [Op.ne]: current.id } } });
    if (replaced.length) await ApiToken.destroy({ where: { id: replaced.map((t) => t.id) } });
    return null;
  }
  if ((await ApiToken.count()) > 0) return null;
  return (await createToken('first token')).token;
}
