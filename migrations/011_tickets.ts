import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { fk, flag, id, str, tableOptions, text, timestamp, timestamps } from './columns';

export const name = '011_tickets';

const pivot = (a: [string, string], b: [string, string]) => ({
  [a[0]]: { ...fk(a[1]), primaryKey: true },
  [b[0]]: { ...fk(b[1]), primaryKey: true },
});

const tinyint = (defaultValue: number) => ({ type: DataTypes.TINYINT.UNSIGNED, allowNull: false, defaultValue });

async function indexes(q: QueryInterface, table: string, columns: Array<string | string[]>) {
  for (const c of columns) await q.addIndex(table, Array.isArray(c) ? c : [c]);
}

/**
 * Tickets, their messages (replies, notes, forwards), attachments, tags, assigned operators,
 * watchers and links. Every list filter and sortable column has an index; `search` reads FULLTEXT
 * indexes on tickets.subject and ticket_messages.text.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.createTable('tickets', {
    id: id(),
    number: str(64, false),
    department_id: fk('departments', 'RESTRICT'),
    department_email_id: fk('department_emails', 'SET NULL', true),
    brand_id: fk('brands', 'RESTRICT'),
    channel_id: fk('channels', 'RESTRICT'),
    // A user's tickets go with the user (SupportPal deletes them too); an internal ticket's user is an operator.
    user_id: fk('users', 'CASCADE'),
    status_id: fk('ticket_statuses', 'RESTRICT'),
    priority_id: fk('ticket_priorities', 'RESTRICT'),
    sla_plan_id: fk('sla_plans', 'SET NULL', true),
    subject: str(255, false),
    // The SLA: the first reply is due by reply_due_time, the resolution by resolve_due_time;
    // due_time is the one that applies (the reply's until an operator first replies).
    reply_due_time: timestamp(), resolve_due_time: timestamp(), due_time: timestamp(),
    first_reply_time: timestamp(), last_reply_time: timestamp(),
    last_reply_by: { type: DataTypes.TINYINT.UNSIGNED, allowNull: true },
    resolved_time: timestamp(), reopened_time: timestamp(),
    // JSON array of addresses.
    cc: text(),
    locked: flag(0), merged: flag(0), internal: flag(0),
    // A ticket merged into another: its messages moved there, its number leads there.
    merged_into_id: fk('tickets', 'SET NULL', true),
    token: { type: DataTypes.CHAR(40), allowNull: false },
    ...timestamps(),
    deleted_at: timestamp(),
  }, tableOptions);
  // Unique: the number generator retries a random format on a collision of this key.
  await q.addIndex('tickets', ['number'], { unique: true, name: 'tickets_number_unique' });
  await indexes(q, 'tickets', [
    'department_id', 'department_email_id', 'brand_id', 'channel_id', 'user_id', 'status_id', 'priority_id', 'sla_plan_id',
    'subject', 'due_time', 'resolved_time', 'last_reply_time', 'locked', 'internal', 'merged', 'merged_into_id', 'deleted_at',
    'created_at', 'updated_at',
  ]);
  await q.sequelize.query('ALTER TABLE tickets ADD FULLTEXT INDEX tickets_subject_search (subject)');

  await q.createTable('ticket_messages', {
    id: id(),
    ticket_id: fk('tickets'),
    // The ticket a message was written on, kept when a merge moves it (an unmerge can move it back).
    original_ticket_id: fk('tickets', 'SET NULL', true),
    channel_id: fk('channels', 'RESTRICT'),
    user_id: fk('users', 'SET NULL', true),
    user_ip_address: str(45),
    by: tinyint(1),
    type: tinyint(0),
    text: text(false),
    is_draft: flag(0),
    pinned: flag(0),
    social_id: str(255),
    // JSON array of the addresses a message was copied to.
    cc: text(),
    // Forwards: JSON {to_address, cc_address, bcc_address, subject, from_address}.
    extra: text(),
    ...timestamps(),
  }, tableOptions);
  await indexes(q, 'ticket_messages', [
    ['ticket_id', 'is_draft', 'type'], 'original_ticket_id', 'channel_id', 'user_id', 'by', 'type', 'created_at', 'updated_at',
  ]);
  await q.sequelize.query('ALTER TABLE ticket_messages ADD FULLTEXT INDEX ticket_messages_text_search (text)');

  await q.createTable('ticket_attachments', {
    id: id(),
    ticket_id: fk('tickets'),
    message_id: fk('ticket_messages', 'CASCADE', true),
    upload_hash: { type: DataTypes.CHAR(64), allowNull: false, references: { model: 'uploads', key: 'hash' }, onDelete: 'RESTRICT', onUpdate: 'CASCADE' },
    original_name: str(255, false),
    ...timestamps(),
  }, tableOptions);
  await indexes(q, 'ticket_attachments', ['ticket_id', 'message_id', 'upload_hash', 'original_name', 'created_at', 'updated_at']);

  // Tags (ticket_tags is the tag table), assigned operators, watching operators.
  await q.createTable('ticket_tag_links', pivot(['ticket_id', 'tickets'], ['tag_id', 'ticket_tags']), tableOptions);
  await q.addIndex('ticket_tag_links', ['tag_id']);
  await q.createTable('ticket_assignees', pivot(['ticket_id', 'tickets'], ['user_id', 'users']), tableOptions);
  await q.addIndex('ticket_assignees', ['user_id']);
  await q.createTable('ticket_watchers', pivot(['ticket_id', 'tickets'], ['user_id', 'users']), tableOptions);
  await q.addIndex('ticket_watchers', ['user_id']);
  // Linked tickets: one row per direction, so either ticket finds the other through its own key.
  await q.createTable('ticket_links', pivot(['ticket_id', 'tickets'], ['linked_ticket_id', 'tickets']), tableOptions);
  await q.addIndex('ticket_links', ['linked_ticket_id']);

  // Feedback records now point at real tickets (none can exist without one).
  await q.sequelize.query('DELETE FROM ticket_feedback WHERE ticket_id NOT IN (SELECT id FROM tickets)');
  await q.addConstraint('ticket_feedback', {
    type: 'foreign key', fields: ['ticket_id'], references: { table: 'tickets', field: 'id' }, onDelete: 'CASCADE', onUpdate: 'CASCADE',
    name: 'ticket_feedback_ticket_fk',
  });
}

export async function down(q: QueryInterface): Promise<void> {
  await q.removeConstraint('ticket_feedback', 'ticket_feedback_ticket_fk');
  for (const table of ['ticket_links', 'ticket_watchers', 'ticket_assignees', 'ticket_tag_links', 'ticket_attachments', 'ticket_messages', 'tickets']) {
    await q.dropTable(table);
  }
  await q.sequelize.query("DELETE FROM custom_field_values WHERE field_id IN (SELECT id FROM custom_fields WHERE kind = 'ticket')");
}
