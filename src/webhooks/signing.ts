import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** What webhook secrets are bound to when stored encrypted (crypto/secrets.ts). */
export const WEBHOOK_SECRET_PURPOSE = 'webhooks.secret';

export const SIGNATURE_HEADER = 'X-Helpdesk-Signature';
export const DELIVERY_HEADER = 'X-Helpdesk-Delivery';
export const EVENT_HEADER = 'X-Helpdesk-Event';

/** A new signing secret: 256 random bits. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64url')}`;

const hmac = (secret: string, timestamp: number, body: string) => createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex');

/**
 * The signature header of a delivery: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`.
 * The timestamp is signed with the body, so a receiver can refuse an old delivery replayed.
 */
export const signatureHeader = (secret: string, timestamp: number, body: string): string => `t=${timestamp},v1=${hmac(secret, timestamp, body)}`;

/**
 * What a receiver does (and the tests): true when `header` signs `body` with `secret` and its
 * timestamp is within `toleranceSeconds` of `nowSeconds`. Compared in constant time.
 */
export function verifySignature(secret: string, header: string | undefined, body: string, toleranceSeconds = 300, nowSeconds = Math.floor(Date.now() / 1000)): boolean {
  if (!header) return false;
  const parts = Object.fromEntries(header.split(',').map((p) => p.trim().split('=', 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || !/^[0-9a-f]{64}$/.test(parts.v1 ?? '')) return false;
  if (Math.abs(nowSeconds - t) > toleranceSeconds) return false;
  return timingSafeEqual(Buffer.from(hmac(secret, t, body), 'hex'), Buffer.from(parts.v1, 'hex'));
}
