import type { Model, ModelStatic } from 'sequelize';
import { VersionedCache, cacheVersion, type CacheVersion, type VersionSnapshot } from '../db/versionedCache';

/**
 * Per-process caches of what every API request looks up before it runs: its token (by hash) and
 * whether its address is barred. Each is tagged with a version of its own (db/versionedCache.ts):
 * the **token version**, which every change of `api_tokens` made through the models bumps once it
 * is committed, and the **ban version**, likewise for `ip_bans` and `ip_whitelist`. So a revoked
 * token, a new or changed ban or whitelist entry applies to the very next request in every web
 * process; and a ban, which the automatic ban after failed authentications makes while an address
 * is attacking, does not make every process verify every token again.
 *
 * Only the answers that time cannot change are kept: a valid token (its revocation bumps the
 * version) and "not barred" (a ban only stops applying by its expiry; "barred" is looked up every
 * time).
 */
export { ENTRY_TTL_MS } from '../db/versionedCache';

/** A token as a request needs it: scopes parsed once (null: full access), expiry checked per request. */
export interface CachedToken { id: number; token_hash: string; last_used_at: number | null; scopes: string[] | null; expires_at: number | null }

export const tokens = new VersionedCache<CachedToken>();
export const bans = new VersionedCache<{ banned: boolean; whitelisted: boolean }>();

/** The versions' keys in Redis, below QUEUE_PREFIX. */
export const TOKEN_VERSION_KEY = 'token-version';
export const BAN_VERSION_KEY = 'ban-version';

const tokenVersions = cacheVersion(TOKEN_VERSION_KEY, () => tokens.clear());
const banVersions = cacheVersion(BAN_VERSION_KEY, () => bans.clear());

/**
 * A version for one request, read once: all its checks and the caches its work consults share the
 * reading (db/versionedCache.ts VersionSnapshot). `holder` is the request's `res.locals`; its
 * `versions` may hold the reading made with the rate-limit counts (http/rateLimit.ts
 * startAccessChecks). Without a holder, a reading of its own. Null when Redis cannot say at once
 * (then nothing is cached).
 */
const readingOf = (version: CacheVersion) => (holder?: { versions?: VersionSnapshot }): Promise<string | null> =>
  version.current(holder ? (holder.versions ??= new Map()) : undefined);
export const tokenVersion = readingOf(tokenVersions);
export const banVersion = readingOf(banVersions);

/** Makes every process's cached tokens and ban answers stale. */
export const bumpAccessVersions = async (): Promise<void> => {
  await Promise.all([tokenVersions.bump(), banVersions.bump()]);
};

/** Bumps the token version on every change of `tables.tokens`, the ban version on every change of `tables.bans`. */
export function watchAccessTables(tables: { tokens: Array<ModelStatic<Model>>; bans: Array<ModelStatic<Model>> }): void {
  tokenVersions.watch(tables.tokens);
  banVersions.watch(tables.bans);
}
