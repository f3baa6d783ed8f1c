import { createHash, timingSafeEqual } from 'node:crypto';
import type { Transaction } from 'sequelize';
import { Ticket } from '../../db/models';

/**
 * Sub-addresses that name a ticket: `support+t42-1a2b3c4d5e@example.com` is the department address
 * `support@example.com` with a tag for ticket 42. With MAIL_REPLY_SUBADDRESS on, ticket mail
 * carries it as its Reply-To, so a reply finds its ticket even when the client dropped every
 * threading header and the subject. The check part is derived from the ticket's secret token (a
 * one-way hash, so the address reveals nothing of it) and compared in constant time: a ticket
 * number alone cannot be turned into an address that files mail into it.
 */

const TAG = /^t(\d{1,10})-([a-f0-9]{10})$/;

const checkOf = (ticket: Pick<Ticket, 'id' | 'token'>) =>
  createHash('sha256').update(`reply-address:${ticket.id}:${ticket.token}`).digest('hex').slice(0, 10);

/** `local+tag@domain` → its base address and tag (no tag: the address itself). Lower-cased. */
export function splitSubaddress(address: string): { base: string; tag: string | null } {
  const lower = address.trim().toLowerCase();
  const at = lower.lastIndexOf('@');
  const plus = lower.indexOf('+');
  if (at < 1 || plus < 1 || plus > at) return { base: lower, tag: null };
  return { base: `${lower.slice(0, plus)}${lower.slice(at)}`, tag: lower.slice(plus + 1, at) || null };
}

/** The Reply-To address of a ticket's mail: its department address, tagged with the ticket. */
export function replyAddress(departmentAddress: string, ticket: Pick<Ticket, 'id' | 'token'>): string {
  const { base } = splitSubaddress(departmentAddress);
  const at = base.lastIndexOf('@');
  return `${base.slice(0, at)}+t${ticket.id}-${checkOf(ticket)}${base.slice(at)}`;
}

/** The ticket a tagged address names, when its check matches; else null. */
export async function ticketOfReplyAddress(address: string, transaction?: Transaction): Promise<number | null> {
  const m = TAG.exec(splitSubaddress(address).tag ?? '');
  if (!m) return null;
  const ticket = await Ticket.findByPk(Number(m[1]), { attributes: ['id', 'token'], transaction });
  if (!ticket?.token) return null;
  const expected = Buffer.from(checkOf(ticket));
  const given = Buffer.from(m[2]);
  return expected.length === given.length && timingSafeEqual(expected, given) ? ticket.id : null;
}
