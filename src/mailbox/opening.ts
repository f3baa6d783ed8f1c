import type { Transaction } from 'sequelize';
import { onceInTransaction } from '../db/transaction';
import { emitAll } from '../events';
import { ValidationError } from '../errors';
import { recordMessageIds } from '../ticket/mail/threading';
import { cachedTicketSettings } from '../ticket/ticketSettings';
import { createTickets, type CreateTicketInput } from '../ticket/tickets/service';
import { decided, RejectedImport, type Decision } from './decision';
import { countOpenings } from './flood';
import type { IncomingMessage } from './parse';

/** A mail that opens a ticket (rule 7 of ./ingest.ts): the ticket, and what its decision says. */
export interface Opening {
  mail: IncomingMessage;
  input: CreateTicketInput;
  /** The department address it was sent to. */
  address: string;
  /** Files refused (their sender is told, unless the mail is automatic). */
  refused: string[];
  automatic: boolean;
  /** Said in the decision's reason. */
  notes: string | null;
}

export const isOpening = (o: Decision | Opening): o is Opening => 'input' in o;

/**
 * Opens the tickets of mails, in order, together (createTickets: one statement per kind of row),
 * stores their Message-IDs (one statement) and tells the senders of refused files; returns each
 * mail's decision. A refusal by the ticket service is the mail's when it is the only one
 * (RejectedImport); among several it fails them all (the batch is then imported one by one).
 */
export async function openTickets(openings: Opening[], t: Transaction): Promise<Decision[]> {
  if (!openings.length) return [];
  const settings = await onceInTransaction(t, 'ticket.settings', () => cachedTicketSettings(t));
  let created;
  try {
    created = await createTickets(openings.map((o) => o.input), t, { settings });
  } catch (err) {
    if (!(err instanceof ValidationError) || openings.length > 1) throw err;
    throw new RejectedImport(decided('rejected', `No ticket opened: ${err.message}`));
  }
  await recordMessageIds(openings.flatMap((o, i) => (o.mail.messageId
    ? [{ messageId: o.mail.messageId, ticketId: created[i].ticket.id, ticketMessageId: created[i].message.id, direction: 'in' as const, audience: 'user' as const }]
    : [])), t);
  await countOpenings(openings.map((o, i) => ({ ticketId: created[i].ticket.id, mail: o.mail })), t);
  await emitAll(t, openings.flatMap((o, i) => (o.refused.length && !o.automatic
    ? [{ name: 'mailbox.refused' as const, payload: { ticketId: created[i].ticket.id, address: o.mail.from!.address, refused: 'attachments' as const, messageId: created[i].message.id } }]
    : [])));
  return openings.map((o, i) => decided('new_ticket', [`In the department of ${o.address}`, o.notes].filter(Boolean).join('; '), {
    ticketId: created[i].ticket.id, messageId: created[i].message.id, imported: true,
  }));
}

/**
 * The mails of a transaction that open tickets, held until they are opened together (`flush`):
 * at the end of the batch, or before a later mail could see what they write. `needsFlush(mail)`:
 * a mail that is one of them again (its key), or answers one of them (its In-Reply-To,
 * References or forwarded ids name one's Message-ID), must be decided after they are written; and
 * every mail flushes them before it writes anything itself, so the rows keep the mails' order.
 */
export class PendingOpenings {
  private pending: Array<{ opening: Opening; then: (d: Decision) => Promise<void> }> = [];
  private keys = new Set<string>();
  private ids = new Set<string>();

  constructor(private readonly t: Transaction) {}

  add(opening: Opening, then: (d: Decision) => Promise<void>): void {
    this.pending.push({ opening, then });
    this.keys.add(opening.mail.key);
    if (opening.mail.messageId) this.ids.add(opening.mail.messageId);
  }

  needsFlush(mail: IncomingMessage): boolean {
    return this.keys.has(mail.key) || [...mail.inReplyTo, ...mail.references, ...mail.forwardedIds].some((id) => this.ids.has(id));
  }

  /** Opens the held tickets, then hands each mail its decision (in order). */
  readonly flush = async (): Promise<void> => {
    const held = this.pending;
    if (!held.length) return;
    this.pending = [];
    this.keys = new Set();
    this.ids = new Set();
    const decisions = await openTickets(held.map((h) => h.opening), this.t);
    for (const [i, h] of held.entries()) await h.then(decisions[i]);
  };
}
