import { Op, UniqueConstraintError, literal, type WhereOptions } from 'sequelize';
import { config } from '../config';
import { now as nowSeconds } from '../db/entity';
import { FeedbackForm, type TicketFeedback } from '../db/models';
import { readSettings } from '../db/settings';
import { emit } from '../events';
import { housekeeping } from '../scheduler/task';
import { createFeedbackRequest } from './feedbackRequest';
import { positive, sweep, type SweepOptions } from './sweep';

/** How far back the feedback sweep looks past a resolution's due moment (a scheduler that was down catches up within it). */
export const FEEDBACK_LOOKBACK_SECONDS = 7 * 86400;

/**
 * Feedback requests: a ticket resolved (the `default_resolved_status`, with a resolved_time) for
 * the feedback form's `time_after_resolved` gets one request per resolution, made with
 * `createFeedbackRequest` and announced by a `ticket.feedback_requested` event (the notifications
 * mail it with the form's email template, user_feedback_request).
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
    await emit(t, 'ticket.feedback_requested', { ticketId: ticket.id, feedbackId: feedback.id });
    return true;
  });
}

export const feedbackRequestsJob = housekeeping('tickets.feedback', {
  every: () => config().ticketSweepEveryMs, counted: 'requested', message: 'feedback requests made', work: () => sendFeedbackRequests(),
});
