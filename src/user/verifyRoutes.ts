import { Router, type Request } from 'express';
import type { Transaction } from 'sequelize';
import { config } from '../config';
import { clientIp } from '../http/clientIp';
import { isBanned } from '../http/bans';
import { sendSuccess } from '../http/envelope';
import { HttpError } from '../http/errors';
import { throttle } from '../http/throttle';
import { Joi, validate } from '../lib/validation';
import { transaction as inTransaction } from '../db/transaction';
import { now } from '../db/entity';
import { findVerifiable } from './verification';
import { hashPassword } from './passwords';

const INVALID = 'This verification link is invalid, already used or expired.';

/** The link's token and its person, or the 404/403 the request gets instead. */
async function verifiable(req: Request, transaction?: Transaction) {
  const found = await findVerifiable(String(req.params.token), transaction);
  if (!found) throw new HttpError(404, INVALID);
  if (await isBanned(clientIp(req), found.user.type === 'operator' ? 'operator' : 'user')) throw new HttpError(403, 'Your IP address is banned.');
  return found;
}

/**
 * The target of the verification mail's link (no API token: the link is the credential).
 * GET tells whether the link is valid; POST with `password` sets the password, marks the email
 * verified and uses the link up. Both are throttled per client address (guessing links).
 */
export const verifyRouter = Router();
const attempts = throttle('verify', () => config().verifyAttempts);

verifyRouter.get('/verify/:token', attempts, async (req, res) => {
  const found = await verifiable(req);
  sendSuccess(res, { email: found.user.email, expires_at: found.record.expires_at }, 'Choose a password to verify your email address.');
});

verifyRouter.post('/verify/:token', attempts, async (req, res) => {
  // The link is checked before the password is hashed: argon2 is slow on purpose, and a bogus
  // link must not make the server pay for it.
  await verifiable(req);
  const { password } = validate<{ password: string }>(Joi.object({ password: Joi.string().min(8).max(1024).required() }), req.body);
  const hash = await hashPassword(password);
  await inTransaction(async (transaction) => {
    // Again, locked: the link may have been used while the password was hashed.
    const found = await verifiable(req, transaction);
    await found.user.update({ password: hash, email_verified: 1 }, { transaction });
    await found.record.update({ used_at: now() }, { transaction });
  });
  sendSuccess(res, null, 'Your email address is verified and your password is set.');
});
