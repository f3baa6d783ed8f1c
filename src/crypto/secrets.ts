import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { config, type Config } from '../config';

/**
 * Secrets stored encrypted at rest (mailbox passwords; the mailbox worker decrypts them to log in).
 *
 * AES-256-GCM with a random 96-bit IV per value; the stored text is
 *   `v1:<key id>:<base64 of iv | tag | ciphertext>`
 * where `v1` is the format version and the key id is the first 8 hex digits of the key's SHA-256,
 * so that keys can rotate: `SECRET_KEY` encrypts, and values written under a key listed in
 * `SECRET_KEY_PREVIOUS` still decrypt (they move to the new key when next written). A `purpose`
 * (e.g. `department_emails.password`) is bound to the value as associated data: a ciphertext copied
 * into another column does not decrypt there.
 *
 * Without `SECRET_KEY`: tests use a fixed test key, development a fixed development key (with a
 * loud warning the first time it is used), and production refuses (SecretKeyMissingError): a value
 * encrypted with a key that is in the source code is no secret.
 */

export const SECRET_FORMAT_VERSION = 'v1';
/** What mailbox passwords are bound to. */
export const MAILBOX_PASSWORD = 'department_emails.password';
/** What a brand's SMTP password is bound to. */
export const BRAND_SMTP_PASSWORD = 'brands.smtp_password';

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Production has no SECRET_KEY: nothing can be encrypted or decrypted. */
export class SecretKeyMissingError extends Error {
  constructor() {
    super('SECRET_KEY is not set: secrets (mailbox passwords) cannot be stored or read. Set SECRET_KEY to 32 random bytes (openssl rand -hex 32).');
  }
}

/** A stored value that does not decrypt: unknown key (rotated away), tampered, or not one of ours. */
export class SecretDecryptError extends Error {}

export interface KeyRing {
  /** Encrypts (and decrypts). */
  current: Buffer;
  /** Decrypt only. */
  previous: Buffer[];
}

export const keyId = (key: Buffer): string => createHash('sha256').update(key).digest('hex').slice(0, 8);

/** Keys of test and development installs without SECRET_KEY. Public, hence never used in production. */
export const TEST_KEY = createHash('sha256').update('helpdesk test secret key').digest();
export const DEVELOPMENT_KEY = createHash('sha256').update('helpdesk development secret key (not secret)').digest();

let warned = false;

/** The process's keys, from the configuration (see the rules above). */
export function keyRing(cfg: Pick<Config, 'env' | 'secrets'> = config()): KeyRing {
  const { env, secrets } = cfg;
  if (secrets.key) return { current: secrets.key, previous: secrets.previousKeys };
  if (env === 'test') return { current: TEST_KEY, previous: secrets.previousKeys };
  if (env === 'development') {
    if (!warned) {
      warned = true;
      // The logger imports the configuration; stderr keeps this module free of that cycle.
      process.stderr.write('WARNING: SECRET_KEY is not set. Secrets (mailbox passwords, webhook signing secrets, OAuth2 tokens...) are encrypted with the built-in DEVELOPMENT key, '
        + 'which is public: set SECRET_KEY (openssl rand -hex 32) before storing a real password.\n');
    }
    return { current: DEVELOPMENT_KEY, previous: secrets.previousKeys };
  }
  throw new SecretKeyMissingError();
}

export function encryptWith(key: Buffer, plain: string, purpose: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(purpose, 'utf8'));
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  const payload = Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  return `${SECRET_FORMAT_VERSION}:${keyId(key)}:${payload}`;
}

export function decryptWith(ring: KeyRing, stored: string, purpose: string): string {
  const m = /^v1:([0-9a-f]{8}):([A-Za-z0-9+/]+={0,2})$/.exec(stored);
  if (!m) throw new SecretDecryptError('The stored secret is not in a known format.');
  const key = [ring.current, ...ring.previous].find((k) => keyId(k) === m[1]);
  if (!key) throw new SecretDecryptError(`The stored secret was encrypted with a key that is not configured (key id ${m[1]}).`);
  const raw = Buffer.from(m[2], 'base64');
  if (raw.length < IV_BYTES + TAG_BYTES) throw new SecretDecryptError('The stored secret is truncated.');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(purpose, 'utf8'));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretDecryptError('The stored secret does not decrypt: it was altered, or belongs to another purpose.');
  }
}

/** Encrypts a secret with the current key. */
export const encryptSecret = (plain: string, purpose: string): string => encryptWith(keyRing().current, plain, purpose);

/** Decrypts a stored secret with whichever configured key wrote it. */
export const decryptSecret = (stored: string, purpose: string): string => decryptWith(keyRing(), stored, purpose);

/** Whether a stored value was written under a key other than the current one (re-encrypt it when convenient). */
export function needsReencryption(stored: string): boolean {
  const m = /^v1:([0-9a-f]{8}):/.exec(stored);
  return !m || m[1] !== keyId(keyRing().current);
}
