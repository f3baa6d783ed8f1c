import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ApiToken } from '../db/models';
import { now } from '../db/entity';
import { select } from '../db/select';
import { tokenVersion, tokens, type CachedToken } from './accessCache';

/** Tokens are 256 random bits, so a fast hash is the right one: SHA-256, hex. */
export const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

export const newTokenValue = (): string => `hd_${randomBytes(32).toString('base64url')}`;

/**
 * Stores a token (its hash only) and returns the token itself, which is shown once. No scopes:
 * full access (auth/scopes.ts); `expiresAt` (UNIX seconds) null: never expires.
 */
export async function createToken(
  name: string, value = newTokenValue(), opts: { scopes?: string[] | null; expiresAt?: number | null } = {},
): Promise<{ token: string; record: ApiToken }> {
  const record = await ApiToken.create({
    name, token_hash: hashToken(value), scopes: opts.scopes?.length ? JSON.stringify(opts.scopes) : null, expires_at: opts.expiresAt ?? null,
  });
  return { token: value, record };
}

/** The ids of tokens this process has verified, by hash: a hash names one token row for good. */
const idsByHash = new Map<string, number>();

/**
 * The id of the stored token `token` was the last time this process verified it (not a check: a
 * rate limit can count its request before authentication has run), or undefined.
 */
export const knownTokenId = (token: string, hash = hashToken(token)): number | undefined => idsByHash.get(hash);

/**
 * The stored token matching `token`, compared in constant time; null when none does.
 * `versionRead`: the token version when the caller has read it already (tokenVersion(res.locals));
 * `hash`: the token's hash when the caller has computed it already (hashToken).
 */
export async function verifyToken(
  token: string, versionRead: Promise<string | null> = tokenVersion(), hash = hashToken(token),
): Promise<CachedToken | null> {
  // A valid token is kept per process while no token changes anywhere (see accessCache: a
  // revocation applies to the next request).
  const version = await versionRead;
  let record = version === null ? undefined : tokens.get(hash, version);
  if (!record) {
    const [row] = await select<Omit<CachedToken, 'scopes'> & { scopes: string | null }>(
      'SELECT id, token_hash, last_used_at, scopes, expires_at FROM api_tokens WHERE token_hash = ?', [hash],
    );
    if (!row) return null;
    record = { id: row.id, token_hash: row.token_hash, last_used_at: row.last_used_at, scopes: row.scopes ? JSON.parse(row.scopes) as string[] : null, expires_at: row.expires_at };
    if (version !== null) tokens.set(hash, version, record);
  }
  const ok = timingSafeEqual(Buffer.from(record.token_hash, 'hex'), Buffer.from(hash, 'hex'));
  if (!ok) return null;
  if (!idsByHash.has(hash)) {
    if (idsByHash.size >= 10_000) idsByHash.clear();
    idsByHash.set(hash, record.id);
  }
  const t = now();
  if (record.expires_at !== null && record.expires_at <= t) return { ...record, expired: true } as CachedToken & { expired: true };
  // Recording use is a courtesy for `token list`: at most once a minute per token (and process).
  // The column is left out of the token version: its update does not make the cache stale.
  if (!record.last_used_at || t - record.last_used_at > 60) {
    record.last_used_at = t;
    await ApiToken.update({ last_used_at: t }, { where: { id: record.id }, hooks: false });
  }
  return record;
}

export async function revokeToken(idOrName: string): Promise<number> {
  const where = /^\d+$/.test(idOrName) ? { id: Number(idOrName) } : { name: idOrName };
  return ApiToken.destroy({ where });
}
