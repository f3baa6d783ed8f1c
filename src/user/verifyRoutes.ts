import { Router } from 'express';
import { clientIp } from '../http/clientIp';
import { isBanned } from '../http/bans';
import { sendSuccess } from '../http/envelope';
import { HttpError } from '../http/errors';
import { Joi, validate } from '../http/validation';
import { transaction as inTransaction } from '../db/transaction';
import { now } from '../db/entity';
import { findVerifiable } from './verification';
import { hashPassword } from './passwords';

const INVALID = 'This verification link is invalid, already used or expired.';

/**
 * The target of the verification mail's link (no API token: the link is the credential).
 * GET tells whether the link is valid; POST with `password` sets the password, marks the email
 * verified and uses the link up.
 */
export const verifyRouter = Router();

verifyRouter.get('/verify/:token', async (req, res) => {
  const found = await findVerifiable(req.params.token);
  if (!found) throw new HttpError(404, INVALID);
  if (await isBanned(clientIp(req), found.user.type === 'operator' ? 'operator' : 'user')) throw new HttpError(403, 'Your IP address is banned.');
  sendSuccess(res, { email: found.user.email, expires_at: found.record.expires_at }, 'Choose a password to verify your email address.');
});

verifyRouter.post('/verify/:token', async (req, res) => {
  const { password } = validate<{ password: string }>(Joi.object({ password: Joi.string().min(8).max(1024).required() }), req.body);
  const hash = await hashPassword(password);
  await inTransaction(async (transaction) => {
    const found = await findVerifiable(req.params.token, transaction);
    if (!found) throw new HttpError(404, INVALID);
    if (await isBanned(clientIp(req), found.user.type === 'operator' ? 'operator' : 'user')) throw new HttpError(403, 'Your IP address is banned.');
    await found.user.update({ password: hash, email_verified: 1 }, { transaction });
    await found.record.update({ used_at: now() }, { transaction });
  });
  sendSuccess(res, null, 'Your email address is verified and your password is set.');
});
