import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { EXACT, fk, id, tableOptions, timestamp } from './columns';

export const name = '013_notifications';

/**
 * Ticket mail: the Message-IDs of the mails of each ticket (`mail_message_ids`: the ids this help
 * desk sent, direction `out`, and those the mailbox worker received, `in`), so a reply is threaded
 * into its ticket by In-Reply-To/References; the resolution a feedback request belongs to (one
 * request per resolution); and the indexes of the scheduler's sweeps.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.createTable('mail_message_ids', {
    id: id(),
    // Without angle brackets; compared exactly (ids are case-sensitive on the left of the @).
    message_id: { type: `VARCHAR(255) ${EXACT}`, allowNull: false },
    ticket_id: fk('tickets'),
    ticket_message_id: fk('ticket_messages', 'SET NULL', true),
    direction: { type: DataTypes.STRING(3), allowNull: false },
    created_at: timestamp(false),
  }, tableOptions);
  await q.addIndex('mail_message_ids', ['message_id'], { unique: true, name: 'mail_message_ids_message_id_unique' });
  // The thread of a ticket: its first and latest ids (ordered by id within the ticket).
  await q.addIndex('mail_message_ids', ['ticket_id']);
  await q.addIndex('mail_message_ids', ['ticket_message_id']);

  // Auto-close: tickets of the auto-close statuses, out of the trash, by last reply.
  await q.addIndex('tickets', ['status_id', 'deleted_at', 'last_reply_time'], { name: 'tickets_autoclose' });
  // Feedback requests: resolved tickets by resolution time.
  await q.addIndex('tickets', ['status_id', 'resolved_time'], { name: 'tickets_status_resolved' });

  // The resolution (the ticket's resolved_time) a feedback request was made for: one per resolution.
  await q.addColumn('ticket_feedback', 'resolved_time', timestamp());
  await q.addIndex('ticket_feedback', ['ticket_id', 'resolved_time'], { unique: true, name: 'ticket_feedback_resolution_unique' });
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE ticket_feedback DROP INDEX ticket_feedback_resolution_unique, DROP COLUMN resolved_time');
  await q.sequelize.query('ALTER TABLE tickets DROP INDEX tickets_status_resolved, DROP INDEX tickets_autoclose');
  await q.dropTable('mail_message_ids');
}
