import { createHash, randomBytes } from 'node:crypto';
import { Op, type Transaction } from 'sequelize';
import { Brand, User, UserToken } from '../db/models';
import { now } from '../db/entity';
import { config } from '../config';

export const VERIFY_PURPOSE = 'verify_email';

const hash = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * A new single-use verification token for a person; earlier unused ones stop working, so only
 * the link of the latest mail is valid. Only the hash is stored.
 */
export async function issueVerificationToken(userId: number, transaction?: Transaction): Promise<{ token: string; expiresAt: number }> {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = now() + config().verifyTokenTtl;
  await revokeVerificationTokens(userId, transaction);
  await UserToken.create({ user_id: userId, purpose: VERIFY_PURPOSE, token_hash: hash(token), expires_at: expiresAt }, { transaction });
  return { token, expiresAt };
}

/**
 * Makes the person's outstanding verification links invalid (used up), in the caller's
 * transaction: a link is a credential for the address it was mailed to, so it must stop working
 * once that address changes, a password is set some other way, or the person is deactivated.
 */
export async function revokeVerificationTokens(userId: number, transaction?: Transaction): Promise<void> {
  await UserToken.update({ used_at: now() }, { where: { user_id: userId, purpose: VERIFY_PURPOSE, used_at: { [Op.is]: null } }, transaction });
}

/**
 * Whether an update of a person makes their verification links invalid: a new email, a password
 * set through the API, or a deactivation.
 */
export function revokesVerification(person: { email: string }, input: { email?: string; password?: string; active?: number }): boolean {
  return (input.email !== undefined && input.email !== person.email) || input.password !== undefined || input.active === 0;
}

/** The link in the mail, served by this web process (`/account/verify/<token>`). */
export function verificationUrl(token: string): string {
  return `${config().appUrl}/account/verify/${encodeURIComponent(token)}`;
}

/**
 * The person a valid, unused, unexpired token belongs to (locked for the caller's transaction),
 * while they are active: an inactive person's link is invalid, as deactivating makes it (a link
 * mailed before inactive users stopped getting one, or to someone made inactive otherwise).
 */
export async function findVerifiable(token: string, transaction?: Transaction): Promise<{ record: UserToken; user: User } | null> {
  if (!/^[A-Za-z0-9_-]{20,100}$/.test(token)) return null;
  const record = await UserToken.findOne({
    where: { token_hash: hash(token), purpose: VERIFY_PURPOSE, used_at: { [Op.is]: null }, expires_at: { [Op.gt]: now() } },
    transaction, lock: transaction ? transaction.LOCK.UPDATE : undefined,
  });
  if (!record) return null;
  const user = await User.findByPk(record.user_id, { transaction });
  return user && user.active === 1 ? { record, user } : null;
}

/** The brand a person's mail goes out under: the user's own, the default brand for operators. */
export async function brandOf(user: User): Promise<Brand | null> {
  if (user.brand_id) return Brand.findByPk(user.brand_id);
  return Brand.findOne({ where: { enabled: 1 }, order: [['id', 'ASC']] });
}
