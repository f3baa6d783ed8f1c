import type { Transaction } from 'sequelize';
import { DomainEvent } from './db/models';
import { now } from './db/entity';
import { EVERY_EVENT, SUBSCRIBERS } from './notifications';

/**
 * What domain code says happened, in the transaction that made it happen. Domain services emit
 * events; every event is appended to the `events` table (the feed of `GET /api/core/event`, and
 * what webhooks deliver), then subscribers (notifications.ts) turn it into side effects, such as
 * mails and webhook deliveries written to the outbox in the same transaction. Payloads carry ids
 * and flags, never secrets: the feed and webhooks publish them as they are.
 */
export interface EventPayloads {
  'user.created': { userId: number; sendEmail: boolean };
  'user.updated': { userId: number; sendEmail: boolean };
  'user.deleted': { userId: number };
  'operator.created': { userId: number; sendEmail: boolean };
  'operator.updated': { userId: number; sendEmail: boolean };
  'operator.deleted': { userId: number };
  'organisation.created': { organisationId: number };
  'organisation.updated': { organisationId: number };
  'organisation.deleted': { organisationId: number };
  'article.created': { articleId: number };
  'article.updated': { articleId: number };
  'article.deleted': { articleId: number };
  /** A ticket was opened (by the API or by mail); `messageId` is its first message. */
  'ticket.created': { ticketId: number; messageId: number; sendUserEmail: boolean; sendOperatorsEmail: boolean };
  /** Fields of the ticket that changed (`status`, `department`, `assignedto` with the newly assigned operators...). */
  'ticket.updated': { ticketId: number; changes: string[]; newlyAssigned: number[] };
  'ticket.merged': { ticketId: number; mergedIds: number[] };
  'ticket.trashed': { ticketId: number };
  /** A reply, note or draft was added (drafts notify nobody). */
  'message.created': { ticketId: number; messageId: number; sendUserEmail: boolean; sendOperatorsEmail: boolean };
  /** A forward (message type 2) was created: it goes to its recipients unless it is a draft. */
  'message.forwarded': { ticketId: number; messageId: number };
  /** The SMTP server accepted a mail (`outboxId`: `GET /api/core/mail/{id}`). */
  'mail.delivered': { outboxId: number };
  /** A mail failed for good: every attempt was refused or could not reach the server. */
  'mail.failed': { outboxId: number };
  /** A delivery report came back for a mail the SMTP server had accepted (the mailbox worker read it). */
  'mail.bounced': { outboxId: number };
  /** Polling a department mailbox failed (the mailbox worker). */
  'mailbox.error': { departmentEmailId: number };
}

export type EventName = keyof EventPayloads;

/**
 * Every event type with what it means: webhooks subscribe to these names and the OpenAPI document
 * lists them. A Record, so that a new event that is not listed here fails to compile.
 */
export const EVENT_TYPES: Record<EventName, string> = {
  'user.created': 'a user was created',
  'user.updated': 'a user was updated',
  'user.deleted': 'a user was deleted',
  'operator.created': 'an operator was created',
  'operator.updated': 'an operator was updated',
  'operator.deleted': 'an operator was deleted',
  'organisation.created': 'an organisation was created',
  'organisation.updated': 'an organisation was updated',
  'organisation.deleted': 'an organisation was deleted',
  'article.created': 'a self-service article was created',
  'article.updated': 'a self-service article was updated',
  'article.deleted': 'a self-service article was deleted',
  'ticket.created': 'a ticket was opened',
  'ticket.updated': 'fields of a ticket changed',
  'ticket.merged': 'tickets were merged into a ticket',
  'ticket.trashed': 'a ticket was moved to the trash',
  'message.created': 'a reply or note was added to a ticket',
  'message.forwarded': 'a ticket message was forwarded',
  'mail.delivered': 'the SMTP server accepted a mail',
  'mail.failed': 'a mail failed for good',
  'mail.bounced': 'a mail sent was reported undeliverable (a bounce)',
  'mailbox.error': 'polling a department mailbox failed',
};

export const EVENT_NAMES = Object.keys(EVENT_TYPES) as EventName[];

export type Subscriber<N extends EventName> = (payload: EventPayloads[N], transaction: Transaction) => Promise<void>;

/** A subscriber to every event: it gets the stored row (its id, name and payload). */
export type FeedSubscriber = (event: DomainEvent, transaction: Transaction) => Promise<void>;

/** Ids of transactions (savepoints share their parent's) whose events are not written. */
const silenced = new Set<string>();

/**
 * Runs work whose transaction will be rolled back whatever it does (a dry run) without writing
 * its events: a rolled-back insert would leave a gap in the feed's ids, which holds every reader
 * back for the settle time.
 */
export async function withoutEvents<T>(transaction: Transaction, work: () => Promise<T>): Promise<T> {
  const id = (transaction as unknown as { id: string }).id;
  silenced.add(id);
  try {
    return await work();
  } finally {
    silenced.delete(id);
  }
}

export async function emit<N extends EventName>(transaction: Transaction, name: N, payload: EventPayloads[N]): Promise<void> {
  if (silenced.has((transaction as unknown as { id: string }).id)) return;
  const event = await DomainEvent.create({ name, payload: JSON.stringify(payload), created_at: now() }, { transaction });
  for (const subscriber of (SUBSCRIBERS[name] ?? []) as Array<Subscriber<N>>) await subscriber(payload, transaction);
  for (const subscriber of EVERY_EVENT) await subscriber(event, transaction);
}
