import { Op, UniqueConstraintError, literal, type Transaction, type WhereOptions } from 'sequelize';
import { now as nowSeconds } from '../db/entity';
import { Department, FeedbackForm, Ticket, TicketFeedback, TicketStatus } from '../db/models';
import { transaction } from '../db/transaction';
import { readSettings } from '../http/settings';
import { enqueue } from '../queue/outbox';
import { createFeedbackRequest } from './feedback';
import { ticketMail } from './mail/job';
import { emailTemplates } from './templateMapping';

/**
 * The ticket sweeps of the scheduler: closing inactive tickets and asking resolved tickets'
 * users for feedback. Each is a bounded query on an index, in batches walked by key (never an
 * offset), and each ticket is handled in a transaction of its own that reads it again under a
 * row lock: running a sweep twice, or in two schedulers at once, changes nothing twice. Sweeps
 * rather than delayed jobs, so a Redis that restarts empty loses nothing: the database says what
 * is due.
 */

export interface SweepOptions {
  /** The moment to sweep at (UNIX seconds); now by default. */
  at?: number;
  /** Tickets per query. */
  batch?: number;
  /** Queries per run; the rest waits for the next run. */
  maxBatches?: number;
}

const positive = (value: string | undefined): number | null => {
  const n = Number(value?.trim());
  return Number.isSafeInteger(n) && n > 0 ? n : null;
};

/** Keyset paging: rows after (time, id). */
const after = (column: string, time: number, id: number): WhereOptions =>
  ({ [Op.or]: [{ [column]: { [Op.gt]: time } }, { [column]: time, id: { [Op.gt]: id } }] }) as WhereOptions;

/**
 * Walks the tickets that `due` matches by (`column`, id) from `start`, in batches, and hands each
 * to `act` in a transaction of its own, read again under a row lock and still due (a second
 * sweep finds nothing left to do). Returns how many `act` reports done.
 */
async function sweep(
  column: 'last_reply_time' | 'resolved_time', due: () => WhereOptions, start: number, options: SweepOptions,
  act: (ticket: Ticket, t: Transaction) => Promise<boolean>,
): Promise<number> {
  const batch = options.batch ?? 100;
  let done = 0;
  let cursor: [number, number] = [start, 0];
  for (let n = 0; n < (options.maxBatches ?? 10); n++) {
    const rows = await Ticket.findAll({
      attributes: ['id', column], where: { [Op.and]: [due(), after(column, cursor[0], cursor[1])] },
      order: [[column, 'ASC'], ['id', 'ASC']], limit: batch,
    });
    for (const row of rows) {
      const acted = await transaction(async (t) => {
        const ticket = await Ticket.findOne({ where: { [Op.and]: [{ id: row.id }, due()] }, transaction: t, lock: t.LOCK.UPDATE });
        return ticket ? act(ticket, t) : false;
      });
      if (acted) done++;
    }
    if (rows.length < batch) break;
    const last = rows[rows.length - 1];
    cursor = [last[column] ?? 0, last.id];
  }
  return done;
}

/** Whether a department maps a template for the kind (-1 disables it). */
async function departmentMaps(departmentId: number, key: string, t: Transaction): Promise<boolean> {
  const department = await Department.findByPk(departmentId, { attributes: ['id', 'email_templates'], transaction: t });
  return (emailTemplates(department?.email_templates ?? null)[key] ?? -1) > 0;
}

/**
 * Closes inactive tickets: in a status with `auto_close`, out of the trash, not locked, not merged
 * into another, with no reply (user or operator; notes do not count) for `inactive_close_time`
 * seconds (the ticket setting; 0 never). They get the `default_resolved_status` and a
 * resolved_time, lose their due time, and their user gets user_ticket_autoclose when the
 * department maps it. Returns how many were closed.
 */
export async function closeInactiveTickets(options: SweepOptions = {}): Promise<number> {
  const at = options.at ?? nowSeconds();
  const settings = await readSettings('ticket');
  const seconds = positive(settings.inactive_close_time);
  const resolved = positive(settings.default_resolved_status);
  if (!seconds || !resolved) return 0;
  const statuses = (await TicketStatus.findAll({ attributes: ['id'], where: { auto_close: 1, id: { [Op.ne]: resolved } } })).map((s) => s.id);
  if (!statuses.length) return 0;
  const cutoff = at - seconds;
  // tickets_autoclose (status_id, deleted_at, last_reply_time): a range per auto-close status.
  const due = (): WhereOptions => ({
    status_id: { [Op.in]: statuses }, deleted_at: null, last_reply_time: { [Op.lte]: cutoff }, locked: 0, merged_into_id: null,
  });

  return sweep('last_reply_time', due, 0, options, async (ticket, t) => {
    await ticket.update({ status_id: resolved, resolved_time: at, due_time: null }, { transaction: t });
    if (!ticket.internal && (await departmentMaps(ticket.department_id, 'user_ticket_autoclose', t))) {
      await enqueue(t, ticketMail, { kind: 'user_ticket_autoclose', ticketId: ticket.id });
    }
    return true;
  });
}

/** How far back the feedback sweep looks past a resolution's due moment (a scheduler that was down catches up within it). */
export const FEEDBACK_LOOKBACK_SECONDS = 7 * 86400;

/**
 * Feedback requests: a ticket resolved (the `default_resolved_status`, with a resolved_time) for
 * the feedback form's `time_after_resolved` gets one request per resolution, made with
 * `createFeedbackRequest` and mailed with the form's email template (user_feedback_request).
 * The form is the first by order; a form without a template asks nobody (there would be no way
 * to answer). Internal tickets, trashed ones and tickets merged into another are left out, and
 * so are resolutions older than FEEDBACK_LOOKBACK_SECONDS past their due moment. A ticket
 * reopened before its request went out loses it: the mail job deletes the unanswered request
 * instead of sending it. Returns how many requests were made.
 */
export async function sendFeedbackRequests(options: SweepOptions = {}): Promise<number> {
  const at = options.at ?? nowSeconds();
  const settings = await readSettings('ticket');
  const resolved = positive(settings.default_resolved_status);
  const form = await FeedbackForm.findOne({ order: [['order', 'ASC'], ['id', 'ASC']] });
  if (!resolved || !form || !form.email_template_id) return 0;
  const upper = at - form.time_after_resolved;
  const lower = upper - FEEDBACK_LOOKBACK_SECONDS;
  // tickets_status_resolved (status_id, resolved_time): one bounded range.
  const due = (): WhereOptions => ({
    [Op.and]: [
      { status_id: resolved, resolved_time: { [Op.gt]: lower, [Op.lte]: upper }, deleted_at: null, merged_into_id: null, internal: 0 },
      literal('NOT EXISTS (SELECT 1 FROM ticket_feedback f WHERE f.ticket_id = `Ticket`.`id` AND f.resolved_time = `Ticket`.`resolved_time`)'),
    ],
  });

  return sweep('resolved_time', due, lower, options, async (ticket, t) => {
    let feedback: TicketFeedback;
    try {
      feedback = await createFeedbackRequest({ ticketId: ticket.id, userId: ticket.user_id, form, resolvedTime: ticket.resolved_time }, t);
    } catch (err) {
      if (err instanceof UniqueConstraintError) return false; // another sweep made it
      throw err;
    }
    await enqueue(t, ticketMail, { kind: 'user_feedback_request', ticketId: ticket.id, feedbackId: feedback.id });
    return true;
  });
}
