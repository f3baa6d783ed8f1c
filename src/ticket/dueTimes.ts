import type { Transaction } from 'sequelize';
import { Ticket } from '../db/models';
import { lockById } from '../db/load';
import { saveChanges } from '../db/saveChanges';
import { emit } from '../events';
import { cachedTicketSettings } from './ticketSettings';
import { recordAudit, unsavedChanges } from './tickets/audit';
import { NO_DUE_TIMES, currentDueTime, slaDueTimes } from './tickets/due';

export interface TicketDueTimes {
  reply_due_time: number | null;
  resolve_due_time: number | null;
  due_time: number | null;
}

/**
 * Recomputes a ticket's SLA times from its plan's targets for its priority, counted from its
 * creation on the plan's clock (the ticket service's `slaDueTimes`): the first reply is due by
 * reply_due_time, the resolution by resolve_due_time, and due_time is the one that applies (the
 * reply's until an operator first replies, then the resolution's; none while resolved). No plan,
 * or no target for the priority: no due times. Locks the ticket row; returns the times written,
 * or null for a missing ticket. A change is audited as the work's actor and is a `ticket.updated`
 * event (`changes: ['due_time']`, with the audit), as the same change made by an update is.
 *
 * Not subscribed to `ticket.updated`: `updateTicket` recomputes the same times inside the update
 * when the priority or the plan changes (where a `reply_due_time` sent in the same request must
 * win). This is for work outside an update (a plan's targets edited, a repair).
 */
export async function recomputeDueTimes(ticketId: number, transaction: Transaction): Promise<TicketDueTimes | null> {
  const ticket = await lockById(Ticket, ticketId, transaction, 'update');
  if (!ticket) return null;
  const due = ticket.sla_plan_id
    ? await slaDueTimes(ticket.sla_plan_id, ticket.priority_id, ticket.created_at, (await cachedTicketSettings(transaction)).defaultTimezone, transaction)
    : NO_DUE_TIMES;
  const times: TicketDueTimes = { ...due, due_time: ticket.resolved_time ? null : currentDueTime({ first_reply_time: ticket.first_reply_time, ...due }) };
  if (times.reply_due_time !== ticket.reply_due_time || times.resolve_due_time !== ticket.resolve_due_time || times.due_time !== ticket.due_time) {
    ticket.set(times);
    const changes = unsavedChanges(ticket);
    await saveChanges(ticket, transaction);
    const audit = await recordAudit(ticket.id, 'updated', changes, transaction);
    await emit(transaction, 'ticket.updated', { ticketId: ticket.id, changes: ['due_time'], newlyAssigned: [], audit });
  }
  return times;
}
