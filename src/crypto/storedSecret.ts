import { ValidationError } from '../errors';
import { logger } from '../logger';
import { SECRET_FORMAT_VERSION, SecretKeyMissingError, decryptSecret, encryptSecret } from './secrets';

/** What a response shows for a stored write-only secret; sent back, it keeps the stored one. */
export const SECRET_MASK = '********';

/**
 * A secret encrypted for storage under `purpose`; without SECRET_KEY (production), a 422 saying
 * `refusal` (and the reason in the log), so the request changes nothing.
 */
export function sealSecret(plain: string, purpose: string, refusal: string): string {
  try {
    return encryptSecret(plain, purpose);
  } catch (err) {
    if (!(err instanceof SecretKeyMissingError)) throw err;
    logger.error(err.message);
    throw new ValidationError(refusal);
  }
}

/** The stored form of a sent write-only secret: undefined (absent, or the mask) keeps it, null (or '') removes it. */
export function storedSecret(sent: string | null | undefined, purpose: string, refusal: string): string | null | undefined {
  if (sent === undefined || sent === SECRET_MASK) return undefined;
  if (sent === null || sent === '') return null;
  return sealSecret(sent, purpose, refusal);
}

/**
 * A secret as stored, readable again: decrypted when it is encrypted (`v1:…`), as it is when it was
 * written before its column was encrypted (it is encrypted at its next write). Throws when it does
 * not decrypt (SecretDecryptError: a key rotated away; SecretKeyMissingError).
 */
export function revealSecret(stored: string | null, purpose: string): string | null {
  if (stored === null || stored === '') return null;
  return stored.startsWith(`${SECRET_FORMAT_VERSION}:`) ? decryptSecret(stored, purpose) : stored;
}

/**
 * A stored secret goes only where it was given for. A request that changes where it is sent (its
 * server, port, encryption or protocol; a token endpoint) must send it again, or it is refused
 * (422 naming the first change), changing nothing: otherwise a token that may write the settings
 * but never read the secret (it is write-only) could point them at a server of its own and be sent
 * the secret at the next login. `changed`: the destination fields the request changes; `stored`:
 * whether a secret is stored; `resent`: whether the request sends one (not the mask).
 */
export function assertSecretResent(secret: string, changed: readonly string[], stored: boolean, resent: boolean): void {
  if (!changed.length || !stored || resent) return;
  const name = (s: string) => s.replace(/_/g, ' ');
  throw new ValidationError(`The ${name(secret)} field is required when the ${name(changed[0])} changes: the stored ${name(secret)} is not sent to another server.`);
}

/** Whether a request sends a secret anew: a value, not the mask (which keeps the stored one) or nothing. */
export const resends = (sent: unknown): boolean => typeof sent === 'string' && sent !== '' && sent !== SECRET_MASK;
