import type { Transaction } from 'sequelize';
import { User } from './db/models';
import type { EventName, FeedSubscriber, Subscriber } from './events';
import { enqueue } from './queue/outbox';
import * as ticketMail from './ticket/mail/subscribers';
import { verificationMail } from './user/verificationMail';
import { queueWebhookDeliveries } from './webhooks/subscriber';

/**
 * The verification mail that lets a person set a password, when the request asked for it: only
 * for someone without a password (and, for an operator, only an active one).
 */
async function verificationIfAsked({ userId, sendEmail }: { userId: number; sendEmail: boolean }, transaction: Transaction) {
  if (!sendEmail) return;
  const person = await User.findByPk(userId, { attributes: ['id', 'type', 'password', 'active'], transaction });
  if (!person || person.password) return;
  if (person.type === 'operator' && person.active !== 1) return;
  await enqueue(transaction, verificationMail, { userId });
}

/**
 * Which side effects each event has. The ticket mails are read through the module object at call
 * time, so the order in which the modules of an import cycle load cannot leave a hole here.
 */
export const SUBSCRIBERS: { [N in EventName]?: Array<Subscriber<N>> } = {
  'user.created': [verificationIfAsked],
  'user.updated': [verificationIfAsked],
  'operator.created': [verificationIfAsked],
  'operator.updated': [verificationIfAsked],
  'ticket.created': [(p, t) => ticketMail.onTicketCreated(p, t)],
  'ticket.updated': [(p, t) => ticketMail.onTicketUpdated(p, t)],
  'message.created': [(p, t) => ticketMail.onMessageCreated(p, t)],
  'message.forwarded': [(p, t) => ticketMail.onMessageForwarded(p, t)],
};

/** Side effects of every event, after those of its name: the deliveries to subscribed webhooks. */
export const EVERY_EVENT: FeedSubscriber[] = [queueWebhookDeliveries];
