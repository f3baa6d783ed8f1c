import { Op, type Transaction } from 'sequelize';
import { config } from '../config';
import { now } from '../db/entity';
import { IncomingMail } from '../db/models';
import { onceInTransaction } from '../db/transaction';
import type { IncomingMessage } from './parse';
import { senderOf, ticketsOpenedBy } from './lookups';

/** The in-transaction tally: mails of `t` per ticket and sender, and tickets opened per sender, that the ledger does not hold yet. */
const tallyOf = (t: Transaction) => onceInTransaction(t, 'mailbox.flood', async () => new Map<string, number>());

const keyOf = (ticketId: number, sender: string) => `${ticketId} ${sender}`;

/**
 * Counts mails that opened tickets in `t` toward their tickets' limits: a batch writes their
 * ledger lines at its end, and a later mail of the batch may answer one of them.
 */
export async function countOpenings(opened: Array<{ ticketId: number; mail: IncomingMessage }>, t: Transaction): Promise<void> {
  if (!config().mailbox.floodLimit) return;
  const tally = await tallyOf(t);
  for (const { ticketId, mail } of opened) {
    const key = keyOf(ticketId, senderOf(mail));
    tally.set(key, (tally.get(key) ?? 0) + 1);
  }
}

/**
 * The new-ticket flood limit: past MAIL_FLOOD_NEW_TICKETS tickets opened by mail from one address
 * in MAIL_FLOOD_WINDOW_SECONDS, a mail still opens its ticket (nothing is lost; the operators hear
 * of it) but its sender is not answered, as for an automatic mail. A robot that answers every
 * acknowledgement with a new mail of a new subject, sending no RFC 3834 headers, opened a ticket
 * and got an answer for each, for ever; now it stops getting answers, and so stops.
 *
 * Counted from the ingestion ledger (the sender's `new_ticket` lines within the window: a range of
 * `incoming_mails_sender`) and the mails of the current transaction (a batch writes its lines at
 * its end).
 */
export async function openingFloodReason(mail: IncomingMessage, t: Transaction): Promise<string | null> {
  const { floodNewTickets, floodWindowSeconds } = config().mailbox;
  if (!floodNewTickets) return null;
  const from = senderOf(mail);
  const tally = await tallyOf(t);
  const key = `opened ${from}`;
  const inTransaction = tally.get(key) ?? 0;
  tally.set(key, inTransaction + 1);
  const earlier = (await ticketsOpenedBy([from], now() - floodWindowSeconds, t)).get(from) ?? 0;
  const count = earlier + inTransaction + 1;
  if (count <= floodNewTickets) return null;
  return `flood protection: ticket ${count} opened by ${from} within ${floodWindowSeconds} s, over MAIL_FLOOD_NEW_TICKETS (${floodNewTickets}): the sender is not answered`;
}

/**
 * Flood protection: the loop breaker for what no header gives away. Two auto-responders copied on
 * one ticket that send no RFC 3834 headers answer each other through it for ever: each one's mail
 * is a reply, copied to the other (`user_user_ticket_reply`, a mail a person wrote, which the
 * notification cap does not count). Past MAIL_FLOOD_LIMIT mails from one address into one ticket
 * in MAIL_FLOOD_WINDOW_SECONDS, a mail is still filed (nothing is lost: an operator reads it in
 * the ticket, the ledger says why it was quiet) but, as an automatic mail, notifies nobody and
 * changes no status: nothing goes out because of it, so the loop stops.
 *
 * Counted from the ingestion ledger (`incoming_mails`): the mails from the address that were
 * filed into the ticket, opened it or were refused by it within the window, and those of the
 * current transaction (a batch writes its lines' tickets only at its end), the mails that opened
 * tickets in it included (countOpenings).
 */
export async function floodReason(ticketId: number, mail: IncomingMessage, t: Transaction): Promise<string | null> {
  const { floodLimit, floodWindowSeconds } = config().mailbox;
  if (!floodLimit) return null;
  const from = senderOf(mail);
  const tally = await tallyOf(t);
  const key = keyOf(ticketId, from);
  const inTransaction = tally.get(key) ?? 0;
  tally.set(key, inTransaction + 1);
  const earlier = await IncomingMail.count({
    where: {
      ticket_id: ticketId, from_address: from, decision: { [Op.in]: ['new_ticket', 'reply', 'rejected'] },
      created_at: { [Op.gte]: now() - floodWindowSeconds },
    },
    transaction: t,
  });
  const count = earlier + inTransaction + 1;
  if (count <= floodLimit) return null;
  return `flood protection: mail ${count} from ${from} into the ticket within ${floodWindowSeconds} s, over MAIL_FLOOD_LIMIT (${floodLimit}): nobody notified`;
}
