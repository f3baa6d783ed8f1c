import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ApiToken } from '../db/models';
import { now } from '../db/entity';

/** Tokens are 256 random bits, so a fast hash is the right one: SHA-256, hex. */
export const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

export const newTokenValue = (): string => `hd_${randomBytes(32).toString('base64url')}`;

/** Stores a token (its hash only) and returns the token itself, which is shown once. */
export async function createToken(name: string, value = newTokenValue()): Promise<{ token: string; record: ApiToken }> {
  const record = await ApiToken.create({ name, token_hash: hashToken(value) });
  return { token: value, record };
}

/** The stored token matching `token`, compared in constant time; null when none does. */
export async function verifyToken(token: string): Promise<ApiToken | null> {
  const hash = hashToken(token);
  const record = await ApiToken.findOne({ where: { token_hash: hash } });
  if (!record) return null;
  const ok = timingSafeEqual(Buffer.from(record.token_hash, 'hex'), Buffer.from(hash, 'hex'));
  if (!ok) return null;
  // Recording use is a courtesy for `token list`: at most once a minute per token.
  const t = now();
  if (!record.last_used_at || t - record.last_used_at > 60) {
    await ApiToken.update({ last_used_at: t }, { where: { id: record.id } });
  }
  return record;
}

export async function revokeToken(idOrName: string): Promise<number> {
  const where = /^\d+$/.test(idOrName) ? { id: Number(idOrName) } : { name: idOrName };
  return ApiToken.destroy({ where });
}
