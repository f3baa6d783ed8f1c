import type { Transaction } from 'sequelize';
import { User } from '../db/models';
import type { EventPayloads } from '../events';
import { enqueue } from '../queue/outbox';
import { verificationMail } from './verificationMail';

/**
 * The verification mail that lets a person set a password, when the request asked for it
 * (`user.created`/`updated`, `operator.created`/`updated`): only for someone active without a
 * password. An inactive user or operator gets none: the link would set a password for an account
 * that cannot log in (and deactivating revokes the links already mailed).
 */
export async function verificationIfAsked({ userId, sendEmail }: EventPayloads['user.created'], transaction: Transaction): Promise<void> {
  if (!sendEmail) return;
  const person = await User.findByPk(userId, { attributes: ['id', 'type', 'password', 'active'], transaction });
  if (!person || person.password || person.active !== 1) return;
  await enqueue(transaction, verificationMail, { userId });
}
