import type { Transaction } from 'sequelize';
import { DomainEvent, type Department, type Ticket, type TicketMessage } from './db/models';
import { now } from './db/entity';
import { insertRows } from './db/insertRows';
import { outboxInOneInsert } from './queue/outbox';

/**
 * What domain code says happened, in the transaction that made it happen. Domain services emit
 * events; every event is appended to the `events` table (the feed of `GET /api/core/event`, and
 * what webhooks deliver), then its subscribers turn it into side effects, such as mails and
 * webhook deliveries written to the outbox in the same transaction. This module knows no
 * subscriber: the composition root (src/wiring.ts) registers them. Payloads carry ids and flags,
 * never secrets: the feed and webhooks publish them as they are.
 */
/** Why a ticket changed when no request changed it. */
export type TicketUpdateCause = 'autoclose';

export type MailRefusal = 'locked' | 'replies_disabled' | 'attachments';

/**
 * A ticket change as its audit entry records it (src/ticket/tickets/audit.ts), written in the same
 * transaction: who made it, through which channel, and each field's value before and after. The
 * ticket events carry it as `audit` when the change wrote an entry.
 */
export interface TicketChangeSet {
  action: string;
  actor: { type: string; id: number | null };
  channel: string;
  changes: Record<string, { before: unknown; after: unknown }>;
}

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
  'ticket.created': { ticketId: number; messageId: number; sendUserEmail: boolean; sendOperatorsEmail: boolean; audit?: TicketChangeSet };
  /**
   * Fields of the ticket that changed (`status`, `department`, `assignedto` with the newly assigned
   * operators...); `cause` when no request made the change (`autoclose`: the scheduler closed an
   * inactive ticket).
   */
  'ticket.updated': { ticketId: number; changes: string[]; newlyAssigned: number[]; cause?: TicketUpdateCause; audit?: TicketChangeSet };
  'ticket.merged': { ticketId: number; mergedIds: number[]; audit?: TicketChangeSet };
  'ticket.trashed': { ticketId: number; audit?: TicketChangeSet };
  /**
   * A ticket was deleted for good, with its messages (no `message.deleted` each): the tickets of a
   * user who is deleted, and the tickets merged into them (the ticket API itself only trashes).
   */
  'ticket.deleted': { ticketId: number };
  'ticket.restored': { ticketId: number; audit?: TicketChangeSet };
  /** The scheduler asked the user of a resolved ticket for feedback (`feedbackId`: the request). */
  'ticket.feedback_requested': { ticketId: number; feedbackId: number };
  /**
   * The scheduler found a ticket waiting on its user (a status that closes inactive tickets) with no
   * reply for `waiting_response_time`: the user is reminded (once per last reply).
   */
  'ticket.waiting_response': { ticketId: number };
  /**
   * A reply, note or draft was added (drafts notify nobody); `audit` when the reply changed the
   * ticket (a user's reply reopening it, an operator's first reply moving the due time, CC joining);
   * `userOnMail` for a user's reply by mail from someone else than the ticket's user: whether that
   * user was among its To and Cc.
   */
  'message.created': { ticketId: number; messageId: number; sendUserEmail: boolean; sendOperatorsEmail: boolean; userOnMail?: boolean; audit?: TicketChangeSet };
  /** A forward (message type 2) was created: it goes to its recipients unless it is a draft. */
  'message.forwarded': { ticketId: number; messageId: number };
  /** A message's text or pin changed (PUT), or one of its attachments was deleted; nobody is mailed. */
  'message.updated': { ticketId: number; messageId: number };
  /** A message (a reply, note, forward or draft) was deleted from a ticket. */
  'message.deleted': { ticketId: number; messageId: number };
  /** The SMTP server accepted a mail (`outboxId`: `GET /api/core/mail/{id}`). */
  'mail.delivered': { outboxId: number };
  /** A mail failed for good: every attempt was refused or could not reach the server. */
  'mail.failed': { outboxId: number };
  /** The SMTP server took a mail (`mail.delivered`) but refused some of its recipients: the delivery record's `error` names them. */
  'mail.recipients_refused': { outboxId: number };
  /** A delivery report came back for a mail the SMTP server had accepted (the mailbox worker read it). */
  'mail.bounced': { outboxId: number };
  /** Polling a department mailbox failed (the mailbox worker). */
  'mailbox.error': { departmentEmailId: number };
  /**
   * The mailbox worker refused a mail sent to a ticket, or its files; `address` (its sender) is
   * told why: `locked` (the ticket is locked), `replies_disabled` (the department takes no replies by
   * mail), `attachments` (files refused, the mail itself was added as `messageId`).
   */
  'mailbox.refused': { ticketId: number; address: string; refused: MailRefusal; messageId?: number };
  /** The mailbox worker refused a mail without reading it (too large); its sender is told why (`incomingMailId`: the ledger line). */
  'mailbox.unread_refused': { incomingMailId: number };
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
  'ticket.deleted': 'a ticket was deleted for good, with its messages (its user was deleted, or it was in the trash longer than TICKET_TRASH_RETENTION_DAYS)',
  'ticket.restored': 'a ticket was taken out of the trash',
  'ticket.feedback_requested': 'the user of a resolved ticket was asked for feedback',
  'ticket.waiting_response': 'the user of a ticket waiting for their reply was reminded',
  'message.created': 'a reply or note was added to a ticket',
  'message.forwarded': 'a ticket message was forwarded',
  'message.updated': 'a message was edited or pinned, or one of its attachments deleted',
  'message.deleted': 'a message was deleted from a ticket',
  'mail.delivered': 'the SMTP server accepted a mail',
  'mail.failed': 'a mail failed for good',
  'mail.recipients_refused': 'the SMTP server took a mail but refused some of its recipients',
  'mail.bounced': 'a mail sent was reported undeliverable (a bounce)',
  'mailbox.error': 'polling a department mailbox failed',
  'mailbox.refused': 'an incoming mail (or its files) was refused, and its sender is told why',
  'mailbox.unread_refused': 'an incoming mail was refused unread (too large), and its sender is told why',
};

export const EVENT_NAMES = Object.keys(EVENT_TYPES) as EventName[];

/**
 * What the code that emits an event already holds of the records it names, handed with the event
 * to the subscribers of its name in this process (never stored or published: the payload is the
 * event). A subscriber takes them instead of reading back, in the same transaction, rows that were
 * just written; without them (another emitter) it reads.
 */
export interface EventFacts {
  /** The ticket createTicket has just written, with its first message, department, channel and assigned operators. */
  'ticket.created': {
    ticket: Ticket;
    message: TicketMessage;
    department: Pick<Department, 'id' | 'notify_email_ticket' | 'notify_frontend_ticket' | 'email_templates'>;
    channelName: string;
    assigned: number[];
  };
}

export type FactsOf<N extends EventName> = N extends keyof EventFacts ? EventFacts[N] : never;

export type Subscriber<N extends EventName> = (payload: EventPayloads[N], transaction: Transaction, facts?: FactsOf<N>) => Promise<void>;

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

const named = new Map<EventName, Array<Subscriber<any>>>();
const every: FeedSubscriber[] = [];
let wired = false;

/** Registers a side effect of one event (src/wiring.ts). */
export function subscribe<N extends EventName>(name: N, subscriber: Subscriber<N>): () => void {
  named.set(name, [...(named.get(name) ?? []), subscriber]);
  return () => named.set(name, (named.get(name) ?? []).filter((s) => s !== subscriber));
}

/** Registers a side effect of every event, run after those of its name (src/wiring.ts). */
export function subscribeToAll(subscriber: FeedSubscriber): void {
  every.push(subscriber);
}

/** Declares the subscribers complete: from now on `emit` may run. */
export function subscribersRegistered(): void {
  wired = true;
}

export const areSubscribersRegistered = (): boolean => wired;

/** One event to emit, with what its emitter holds of the records it names (EventFacts). */
export type Emitted = { [N in EventName]: { name: N; payload: EventPayloads[N]; facts?: FactsOf<N> } }[EventName];

export async function emit<N extends EventName>(transaction: Transaction, name: N, payload: EventPayloads[N], facts?: FactsOf<N>): Promise<void> {
  await emitAll(transaction, [{ name, payload, facts } as Emitted]);
}

/**
 * Emits events in order: appends them to the feed (one INSERT), then runs the subscribers of each,
 * event after event; the outbox entries they write go in one INSERT too (a batch of imported mails
 * opens a ticket and creates a user per mail).
 */
export async function emitAll(transaction: Transaction, events: Emitted[]): Promise<void> {
  // A process that emits without its subscribers would write events whose side effects never happen.
  if (!wired) throw new Error(`Event ${events[0]?.name} emitted before the subscribers were registered: the entry point must call wire() (src/wiring.ts)`);
  if (!events.length || silenced.has((transaction as unknown as { id: string }).id)) return;
  const at = now();
  const rows = await insertRows(DomainEvent, events.map((e) => ({ name: e.name, payload: JSON.stringify(e.payload), created_at: at })), transaction);
  await outboxInOneInsert(transaction, async () => {
    for (const [i, e] of events.entries()) {
      for (const subscriber of (named.get(e.name) ?? []) as Array<Subscriber<any>>) await subscriber(e.payload, transaction, e.facts);
      for (const subscriber of every) await subscriber(rows[i], transaction);
    }
  });
}
