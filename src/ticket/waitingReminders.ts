import { Op, QueryTypes, literal, type Transaction, type WhereOptions } from 'sequelize';
import { config } from '../config';
import { now as nowSeconds } from '../db/entity';
import { TicketStatus, type Ticket } from '../db/models';
import { sequelize } from '../db/sequelize';
import { readSettings } from '../db/settings';
import { emit } from '../events';
import { housekeeping } from '../scheduler/task';
import { positive, sweep, waitingStatuses, type SweepOptions } from './sweep';

/** How far back the reminder sweep looks past a wait's due moment (a scheduler that was down catches up within it). */
export const WAITING_LOOKBACK_SECONDS = 7 * 86400;

/**
 * "We are waiting for your response": a ticket that waits on its user (a status with `auto_close`,
 * SupportPal's "close inactive tickets") and has had no reply (notes do not count) for the
 * `waiting_response_time` ticket setting (0: never) is reminded once per last reply, announced by a
 * `ticket.waiting_response` event (the notifications mail user_ticket_waitingresponse when the
 * department maps it). The same tickets as auto-close: out of the trash, not locked, not merged
 * into another, and not internal (there is no user to remind). A ticket already due to be closed
 * (`inactive_close_time` passed) is closed, not reminded; so is a wait more than
 * WAITING_LOOKBACK_SECONDS past its due moment (an upgrade or a scheduler down for longer does not
 * remind about old tickets). Returns how many tickets were reminded.
 */
export async function remindWaitingUsers(options: SweepOptions = {}): Promise<number> {
  const at = options.at ?? nowSeconds();
  const settings = await readSettings('ticket');
  const wait = positive(settings.waiting_response_time);
  if (!wait) return 0;
  const resolved = positive(settings.default_resolved_status);
  const statuses = await waitingStatuses(resolved);
  if (!statuses.length) return 0;
  const upper = at - wait;
  const closeAfter = positive(settings.inactive_close_time);
  // Past inactive_close_time the auto-close takes the ticket (at - closeAfter is its cutoff, inclusive).
  const lower = Math.max(upper - WAITING_LOOKBACK_SECONDS, closeAfter ? at - closeAfter : 0);
  if (lower >= upper) return 0;
  // tickets_autoclose (status_id, deleted_at, last_reply_time): a bounded range per status.
  const due = (): WhereOptions => ({
    [Op.and]: [
      {
        status_id: { [Op.in]: statuses }, deleted_at: null, last_reply_time: { [Op.gt]: lower, [Op.lte]: upper },
        locked: 0, merged_into_id: null, internal: 0,
      },
      // Not reminded of this last reply. A scalar subquery on the reminder's primary key (a lookup per
      // candidate): as NOT EXISTS, MariaDB materialised the whole reminders table on every sweep.
      literal('NOT ((SELECT r.last_reply_time FROM ticket_waiting_reminders r WHERE r.ticket_id = `Ticket`.`id`) <=> `Ticket`.`last_reply_time`)'),
    ],
  });

  return sweep('last_reply_time', due, lower, options, async (ticket, t) => {
    await recordReminder(ticket, at, t);
    await emit(t, 'ticket.waiting_response', { ticketId: ticket.id });
    return true;
  });
}

/** The ticket's one row: the last reply it was reminded of (the sweep holds the ticket's row lock). */
async function recordReminder(ticket: Ticket, at: number, transaction: Transaction): Promise<void> {
  await sequelize().query(
    `INSERT INTO ticket_waiting_reminders (ticket_id, last_reply_time, created_at) VALUES (:ticket, :reply, :at)
     ON DUPLICATE KEY UPDATE last_reply_time = VALUES(last_reply_time), created_at = VALUES(created_at)`,
    { replacements: { ticket: ticket.id, reply: ticket.last_reply_time, at }, transaction, type: QueryTypes.INSERT },
  );
}

/**
 * Whether a reminder still stands when its mail is sent: the ticket still waits on its user (an
 * auto-close status, not locked) and nobody has replied since the reminder was made.
 */
export async function stillWaiting(ticket: Ticket): Promise<boolean> {
  if (ticket.locked || ticket.deleted_at || ticket.merged_into_id) return false;
  const [status, reminded] = await Promise.all([
    TicketStatus.findByPk(ticket.status_id, { attributes: ['id', 'auto_close'] }),
    sequelize().query<{ last_reply_time: number }>('SELECT last_reply_time FROM ticket_waiting_reminders WHERE ticket_id = :id', {
      replacements: { id: ticket.id }, type: QueryTypes.SELECT,
    }),
  ]);
  return status?.auto_close === 1 && reminded[0]?.last_reply_time === ticket.last_reply_time;
}

export const waitingRemindersJob = housekeeping('tickets.waiting', {
  every: () => config().ticketSweepEveryMs, counted: 'reminded', message: 'users reminded of tickets waiting for them', work: () => remindWaitingUsers(),
});
