import { randomInt } from 'node:crypto';
import type { Transaction } from 'sequelize';
import { now } from '../db/entity';
import { TicketFeedback, type FeedbackForm } from '../db/models';

const TOKEN_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** 32 random letters and digits (about 190 bits): the user's link to the form. */
export function feedbackToken(): string {
  let token = '';
  for (let i = 0; i < 32; i++) token += TOKEN_ALPHABET[randomInt(TOKEN_ALPHABET.length)];
  return token;
}

/**
 * Creates the feedback request of a ticket with its form's expiry (a form's expiry_time 0: it
 * never expires). For the ticket flow (a resolved ticket asks its user for feedback: the
 * scheduler's feedback sweep, src/ticket/housekeeping.ts, passes the resolution's resolved_time).
 */
export async function createFeedbackRequest(
  values: { ticketId: number; userId: number | null; form: FeedbackForm; resolvedTime?: number | null }, transaction?: Transaction,
): Promise<TicketFeedback> {
  return TicketFeedback.create({
    ticket_id: values.ticketId, user_id: values.userId, form_id: values.form.id, rating: null, token: feedbackToken(), fields_answered: 0,
    expiry_time: values.form.expiry_time > 0 ? now() + values.form.expiry_time : null,
    // The resolution it asks about: a unique key with the ticket makes it one request per resolution.
    resolved_time: values.resolvedTime ?? null,
  }, { transaction });
}
