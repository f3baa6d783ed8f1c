import type { QueryInterface } from 'sequelize';
import { fk, tableOptions, timestamp } from './columns';

export const name = '041_ticket_waiting_reminders';

/**
 * The "waiting for your response" reminders (src/ticket/waitingReminders.ts): per ticket, the last
 * reply the user was reminded of. A ticket is reminded once per last reply: a new reply moves
 * `tickets.last_reply_time` past the row's, and the next wait is reminded again.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.createTable('ticket_waiting_reminders', {
    ticket_id: { ...fk('tickets'), primaryKey: true },
    last_reply_time: timestamp(false),
    created_at: timestamp(false),
  }, tableOptions);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.dropTable('ticket_waiting_reminders');
}
