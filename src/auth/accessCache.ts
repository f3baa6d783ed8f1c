import type IORedis from 'ioredis';
import type { Model, ModelStatic, Transaction } from 'sequelize';
import { config } from '../config';
import { redisConnection } from '../queue/connection';

/**
 * A per-process cache of what every API request looks up before it runs: its token (by hash) and
 * whether its address is barred. Entries are tagged with the **access version**, a counter in
 * Redis (`<QUEUE_PREFIX>:access-version`) that every change of `api_tokens`, `ip_bans` or
 * `ip_whitelist` made through the models bumps once it is committed (watchAccessTables), in
 * whichever process made it. A request reads the version (one GET) and uses an entry only if it
 * was stored under that same version, so a revoked token, a new or changed ban or whitelist entry
 * applies to the very next request in every web process.
 *
 * The version is read before the database, so a change that commits while a look-up runs leaves
 * an entry under the old version, which the next request ignores. Only the answers that time
 * cannot change are kept: a valid token (its revocation bumps the version) and "not barred" (a ban
 * only stops applying by its expiry; "barred" is looked up every time). When Redis is not ready the
 * cache is bypassed (every request asks the database, as without a cache). A change that bypasses
 * the models (SQL by hand) is seen at the latest after ENTRY_TTL_MS.
 */
export const ENTRY_TTL_MS = 10_000;
const MAX_ENTRIES = 10_000;

interface Entry<T> { version: string; at: number; value: T }

let client: IORedis | undefined;
const key = () => `${config().queuePrefix}:access-version`;

function redis(): IORedis {
  client ??= redisConnection('counter');
  return client;
}

/** The current access version, or null when Redis cannot say at once (then nothing is cached). */
export async function accessVersion(): Promise<string | null> {
  const c = redis();
  if (c.status !== 'ready') return null;
  try {
    return (await c.get(key())) ?? '0';
  } catch {
    return null;
  }
}

/** Makes every process's cached tokens and ban answers stale. */
export async function bumpAccessVersion(): Promise<void> {
  tokens.clear();
  bans.clear();
  try {
    await redis().incr(key());
  } catch {
    // Redis is away: processes bypass their caches while it is (accessVersion is null).
  }
}

export class VersionedCache<T> {
  private readonly entries = new Map<string, Entry<T>>();

  get(k: string, version: string): T | undefined {
    const e = this.entries.get(k);
    if (!e) return undefined;
    if (e.version !== version || Date.now() - e.at > ENTRY_TTL_MS) {
      this.entries.delete(k);
      return undefined;
    }
    return e.value;
  }

  set(k: string, version: string, value: T): void {
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(k, { version, at: Date.now(), value });
  }

  clear(): void {
    this.entries.clear();
  }
}

export const tokens = new VersionedCache<{ id: number; token_hash: string; last_used_at: number | null }>();
export const bans = new VersionedCache<{ banned: boolean; whitelisted: boolean }>();

/**
 * Bumps the access version after every create, update and delete of the models (single or bulk),
 * after the commit when there is a transaction (a bump before it would let a request cache the
 * state about to change).
 */
export function watchAccessTables(models: Array<ModelStatic<Model>>): void {
  const bump = (options?: { transaction?: Transaction | null }) => {
    if (!options?.transaction) return bumpAccessVersion();
    options.transaction.afterCommit(() => bumpAccessVersion());
    return undefined;
  };
  for (const model of models) {
    for (const hook of ['afterCreate', 'afterUpdate', 'afterDestroy', 'afterUpsert'] as const) {
      model.addHook(hook, (_instance: unknown, options: any) => bump(options));
    }
    for (const hook of ['afterBulkCreate', 'afterBulkUpdate', 'afterBulkDestroy'] as const) {
      model.addHook(hook, (...args: any[]) => bump(args[args.length - 1]));
    }
  }
}

export function closeAccessCache(): void {
  client?.disconnect();
  client = undefined;
}
