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
 * and the seed. Safe to run any number of times.
 */
export async function prepareDatabase(): Promise<void> {
  await ensureDatabase();
  await migrate();
  await searchEngine().prepare();
  await seed();
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

/**
 * So a new user can call the API at once: API_TOKEN is stored when given, else a first token is
 * made on an install that has none. Returns a token to show, or null when nothing new was made.
 */
export async function ensureFirstToken(): Promise<string | null> {
  const given = config().apiToken;
  if (given) {
    if (await ApiToken.findOne({ where: { token_hash: hashToken(given) } })) return null;
    await createToken('API_TOKEN', given);
    return null;
  }
  if ((await ApiToken.count()) > 0) return null;
  return (await createToken('first token')).token;
}
