import type { QueryInterface } from 'sequelize';
import { fk, id, ref, str, tableOptions, text, timestamp } from './columns';

export const name = '021_audit';

/**
 * Ticket audit history (`GET /api/ticket/ticket/{id}/audit`): one row per change of a ticket,
 * written by the ticket service in the transaction of the change: who (actor type and id), through
 * which channel, when, and each changed field's value before and after (JSON). A ticket's rows go
 * with the ticket.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.createTable('ticket_audits', {
    id: id(),
    ticket_id: fk('tickets'),
    action: str(32, false),
    actor_type: str(16, false),
    actor_id: ref(true),
    channel: str(16, false),
    changes: { ...text(false) },
    created_at: timestamp(false),
  }, tableOptions);
  // The history of one ticket in order: the ticket's rows by id.
  await q.addIndex('ticket_audits', ['ticket_id', 'id'], { name: 'ticket_audits_history' });
}

export async function down(q: QueryInterface): Promise<void> {
  await q.dropTable('ticket_audits');
}
