import { Op, type WhereOptions } from 'sequelize';
import { config } from '../config';
import { now as nowSeconds } from '../db/entity';
import { readSettings } from '../db/settings';
import { housekeeping } from '../scheduler/task';
import { positive, sweep, waitingStatuses, type SweepOptions } from './sweep';
import { updateTicket } from './tickets/service';

/**
 * Closes inactive tickets: in a status with `auto_close`, out of the trash, not locked, not merged
 * into another, with no reply (user or operator; notes do not count) for `inactive_close_time`
 * seconds (the ticket setting; 0 never). They get the `default_resolved_status` through the
 * ticket service, as any change does: a `ticket.updated` event with the cause `autoclose` (the
 * feed, webhooks, and the user_ticket_autoclose mail when the department maps it). Returns how
 * many were closed.
 */
export async function closeInactiveTickets(options: SweepOptions = {}): Promise<number> {
  const at = options.at ?? nowSeconds();
  const settings = await readSettings('ticket');
  const seconds = positive(settings.inactive_close_time);
  const resolved = positive(settings.default_resolved_status);
  if (!seconds || !resolved) return 0;
  const statuses = await waitingStatuses(resolved);
  if (!statuses.length) return 0;
  const cutoff = at - seconds;
  // tickets_autoclose (status_id, deleted_at, last_reply_time): a range per auto-close status.
  const due = (): WhereOptions => ({
    status_id: { [Op.in]: statuses }, deleted_at: null, last_reply_time: { [Op.lte]: cutoff }, locked: 0, merged_into_id: null,
  });

  return sweep('last_reply_time', due, 0, options, async (ticket, t) => {
    await updateTicket(ticket, { statusId: resolved }, t, { at, cause: 'autoclose' });
    return true;
  });
}

export const autoCloseJob = housekeeping('tickets.autoclose', {
  every: () => config().ticketSweepEveryMs, counted: 'closed', message: 'inactive tickets closed', work: () => closeInactiveTickets(),
});
