import { createHash } from 'node:crypto';
import { SecretDecryptError, decryptSecret, encryptSecret } from '../crypto/secrets';
import { logger } from '../logger';

/**
 * Values of custom fields marked `encrypted` are stored encrypted at rest, as mailbox passwords are
 * (crypto/secrets.ts: AES-256-GCM, key rotation), each bound to its field: a value copied into
 * another field's row does not decrypt there. They are decrypted for the API's responses only.
 */
const purposeOf = (fieldId: number) => `custom_field_values.value:${fieldId}`;

/** What an encrypted value looks like when stored. */
export const SEALED = /^v1:[0-9a-f]{8}:[A-Za-z0-9+/]+={0,2}$/;

export const sealValue = (fieldId: number, plain: string): string => encryptSecret(plain, purposeOf(fieldId));

/**
 * The plain value; null (and a warning naming the field, never the value) when it does not
 * decrypt: written under a key no longer configured, or altered in the database.
 */
export function openValue(fieldId: number, stored: string | null): string | null {
  if (stored === null) return null;
  try {
    return decryptSecret(stored, purposeOf(fieldId));
  } catch (err) {
    if (!(err instanceof SecretDecryptError)) throw err;
    logger.warn({ fieldId, reason: err.message }, 'an encrypted custom field value does not decrypt; it is shown as empty');
    return null;
  }
}

/**
 * What the ticket audit keeps of an encrypted value: a fingerprint of the stored ciphertext (random
 * per write), which shows that the value changed and says nothing of what it is.
 */
export const sealedFingerprint = (stored: string | null): string | null =>
  stored === null ? null : `encrypted:${createHash('sha256').update(stored).digest('hex').slice(0, 12)}`;

/**
 * The largest Textarea value of an encrypted field: the stored form (prefix, base64 of IV, tag and
 * ciphertext) must fit the TEXT column's 65,535 bytes.
 */
export const SEALED_TEXT_MAX_BYTES = Math.floor((65535 - 'v1:00000000:'.length) / 4) * 3 - 12 - 16;
