import type { Transaction } from 'sequelize';
import { User } from '../db/models';
import type { EventPayloads } from '../events';
import { enqueue } from '../queue/outbox';
import { verificationMail } from './verificationMail';

/**
 * The verification mail that lets a person set a password, when the request asked for it
 * (`user.created`/`updated`, `operator.created`/`updated`): only for someone without a password
 * (and, for an operator, only an active one).
 */
export async function verificationIfAsked({ userId, sendEmail }: EventPayloads['user.created'], transaction: Transaction): Promise<void> {
  if (!sendEmail) return;
  const person = await User.findByPk(userId, { attributes: ['id', 'type', 'password', 'active'], transaction });
  if (!person || person.password) return;
  if (person.type === 'operator' && person.active !== 1) return;
  await enqueue(transaction, verificationMail, { userId });
}
