import type { Transaction } from 'sequelize';
import type { Ticket, TicketMessage, User } from '../../db/models';

/** What the notifications of a new ticket need of its department. */
export interface OpenedDepartment {
  id: number;
  notify_email_ticket: number;
  notify_frontend_ticket: number;
  email_templates: string | null;
}

/** A ticket createTicket has just written, with its first message, department, channel and assigned operators. */
export interface Opened {
  ticket: Ticket;
  message: TicketMessage;
  department: OpenedDepartment;
  channelName: string;
  assigned: number[];
}

const atHand = new WeakMap<Transaction, Opened>();

/**
 * Runs `work` (the emit of `ticket.created`) with the ticket just written at hand: its subscribers
 * (the notifications) take it from here instead of reading back, in the same transaction, the rows
 * that were just inserted.
 */
export async function withOpened<T>(transaction: Transaction, opened: Opened, work: () => Promise<T>): Promise<T> {
  atHand.set(transaction, opened);
  try {
    return await work();
  } finally {
    atHand.delete(transaction);
  }
}

/** The ticket just opened in this transaction, when it is `ticketId`. */
export const openedAtHand = (transaction: Transaction, ticketId: number): Opened | undefined => {
  const opened = atHand.get(transaction);
  return opened && opened.ticket.id === ticketId ? opened : undefined;
};

/** Tickets just opened (createTicket) without tags, operators or custom field values, with their user (./presenter.ts). */
export const openedBy = new WeakMap<Ticket, User>();

/** Marks a ticket just opened, with nothing linked to it yet, and its user: its presentation reads nothing of them back. */
export function knownAfterCreate(ticket: Ticket, owner: User): void {
  openedBy.set(ticket, owner);
}
