import { VersionedCache, cacheVersion, type VersionSnapshot } from '../db/versionedCache';

/**
 * A per-process cache of what every API request looks up before it runs: its token (by hash) and
 * whether its address is barred, tagged with the **access version** (db/versionedCache.ts), which
 * every change of `api_tokens`, `ip_bans` or `ip_whitelist` made through the models bumps once it
 * is committed. So a revoked token, a new or changed ban or whitelist entry applies to the very
 * next request in every web process.
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

/** The access version's key in Redis, below QUEUE_PREFIX. */
export const ACCESS_VERSION_KEY = 'access-version';

const access = cacheVersion(ACCESS_VERSION_KEY, () => {
  tokens.clear();
  bans.clear();
});

/** The current access version, or null when Redis cannot say at once (then nothing is cached). */
export const accessVersion = () => access.current();

/**
 * The access version for one request, read once: its ban check and its token check share it (one
 * Redis round trip, not two), and so do the caches its work consults (db/versionedCache.ts
 * VersionSnapshot). `holder` is the request's `res.locals`; its `versions` may hold the reading
 * made with the rate-limit counts (http/rateLimit.ts startAccessChecks).
 */
export function requestAccessVersion(holder: { versions?: VersionSnapshot }): Promise<string | null> {
  return access.current((holder.versions ??= new Map()));
}

/** Makes every process's cached tokens and ban answers stale. */
export const bumpAccessVersion = () => access.bump();

export const watchAccessTables: typeof access.watch = (models) => access.watch(models);
