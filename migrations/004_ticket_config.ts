import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { fk, flag, id, ref, str, tableOptions, text, timestamp, timestamps } from './columns';

export const name = '004_ticket_config';

const pivot = (a: [string, string], b: [string, string]) => ({
  [a[0]]: { ...fk(a[1]), primaryKey: true },
  [b[0]]: { ...fk(b[1]), primaryKey: true },
});

const order = () => ({ type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 });
const colour = (defaultValue: string) => ({ ...str(16, false), defaultValue });
const seconds = (defaultValue: number) => ({ type: DataTypes.INTEGER.UNSIGNED, allowNull: false, defaultValue });

async function indexes(q: QueryInterface, table: string, columns: Array<string | string[]>) {
  for (const c of columns) await q.addIndex(table, Array.isArray(c) ? c : [c]);
}

/**
 * Ticket configuration: statuses, priorities (per department), tags, email templates, canned
 * responses, channels, feedback forms and feedback records. Every filter and sortable column has
 * an index.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.createTable('ticket_statuses', {
    id: id(), name: str(255, false), colour: colour('#ffffff'), auto_close: flag(0), order: order(), ...timestamps(),
  }, tableOptions);
  await indexes(q, 'ticket_statuses', ['name', 'order', 'auto_close', 'created_at', 'updated_at']);

  await q.createTable('ticket_priorities', {
    id: id(), name: str(255, false), colour: colour('#ffffff'), order: order(), ...timestamps(),
  }, tableOptions);
  await indexes(q, 'ticket_priorities', ['name', 'order', 'created_at', 'updated_at']);
  // The departments a priority is offered in (none: every department).
  await q.createTable('priority_departments', pivot(['priority_id', 'ticket_priorities'], ['department_id', 'departments']), tableOptions);
  await q.addIndex('priority_departments', ['department_id']);

  // Tag names are unique (case-insensitive, by the collation): canned responses and tickets name tags.
  await q.createTable('ticket_tags', {
    id: id(), name: { ...str(255, false), unique: true }, colour: colour('#dddddd'), ...timestamps(),
  }, tableOptions);
  await indexes(q, 'ticket_tags', ['created_at', 'updated_at']);

  // One row per template name; brand_id null: the template of every brand.
  await q.createTable('email_templates', {
    id: id(), brand_id: fk('brands', 'CASCADE', true), name: str(64, false), description: text(),
    subject: str(255, false), contents: text(false), ...timestamps(),
  }, tableOptions);
  await indexes(q, 'email_templates', [['name', 'brand_id'], 'brand_id', 'created_at', 'updated_at']);

  await q.createTable('canned_responses', {
    id: id(), name: str(255, false), text: text(false),
    // Canned response categories are not part of the API yet: the column is kept for the list shape.
    category_id: ref(true),
    user_id: fk('users', 'SET NULL', true), public: flag(1), all_groups: flag(1),
    department_id: fk('departments', 'SET NULL', true),
    priority_id: fk('ticket_priorities', 'SET NULL', true),
    status_id: fk('ticket_statuses', 'SET NULL', true),
    ...timestamps(),
  }, tableOptions);
  await indexes(q, 'canned_responses', ['name', 'category_id', 'user_id', 'department_id', 'priority_id', 'status_id', 'created_at', 'updated_at']);
  await q.createTable('canned_response_tags', pivot(['response_id', 'canned_responses'], ['tag_id', 'ticket_tags']), tableOptions);
  await q.addIndex('canned_response_tags', ['tag_id']);
  await q.createTable('canned_response_groups', pivot(['response_id', 'canned_responses'], ['group_id', 'groups']), tableOptions);
  await q.addIndex('canned_response_groups', ['group_id']);

  // Where tickets come from (web, email, api); their settings are the `channel.<id>` settings scope.
  await q.createTable('channels', {
    id: id(), name: { ...str(64, false), unique: true }, enabled: flag(1), class: str(255), ...timestamps(),
  }, tableOptions);

  await q.createTable('feedback_forms', {
    id: id(), name: str(255, false), description: text(), order: order(),
    email_template_id: fk('email_templates', 'SET NULL', true),
    expiry_time: seconds(604800), time_after_resolved: seconds(86400),
    condition_group_type: { type: DataTypes.TINYINT.UNSIGNED, allowNull: false, defaultValue: 0 },
    ...timestamps(),
  }, tableOptions);
  await indexes(q, 'feedback_forms', ['order']);
  await q.createTable('feedback_fields', {
    id: id(), form_id: fk('feedback_forms'), name: str(255, false),
    type: { type: DataTypes.TINYINT.UNSIGNED, allowNull: false }, order: order(), ...timestamps(),
  }, tableOptions);
  await indexes(q, 'feedback_fields', [['form_id', 'order']]);

  // Feedback requests of tickets. ticket_id has no foreign key until the tickets table exists;
  // user_id is the ticket's user, kept here so feedback can be filtered by user.
  await q.createTable('ticket_feedback', {
    id: id(), ticket_id: ref(), user_id: fk('users', 'SET NULL', true), form_id: fk('feedback_forms', 'RESTRICT'),
    rating: { type: DataTypes.TINYINT.UNSIGNED, allowNull: true },
    token: { type: DataTypes.CHAR(32), allowNull: false, unique: true },
    fields_answered: seconds(0), expiry_time: timestamp(), ...timestamps(),
  }, tableOptions);
  await indexes(q, 'ticket_feedback', ['ticket_id', 'user_id', 'form_id', 'rating', 'expiry_time', 'created_at', 'updated_at']);
  await q.createTable('ticket_feedback_values', {
    id: id(), feedback_id: fk('ticket_feedback'), field_id: fk('feedback_fields'), value: text(false), ...timestamps(),
  }, tableOptions);
  await q.addIndex('ticket_feedback_values', ['feedback_id', 'field_id'], { unique: true });
  await q.addIndex('ticket_feedback_values', ['field_id']);
}

export async function down(q: QueryInterface): Promise<void> {
  for (const table of [
    'ticket_feedback_values', 'ticket_feedback', 'feedback_fields', 'feedback_forms', 'channels', 'canned_response_groups',
    'canned_response_tags', 'canned_responses', 'email_templates', 'ticket_tags', 'priority_departments', 'ticket_priorities',
    'ticket_statuses',
  ]) await q.dropTable(table);
  await q.sequelize.query("DELETE FROM translations WHERE record_type IN ('ticket_status', 'ticket_priority', 'ticket_tag', 'canned_response', 'feedback_form', 'feedback_field', 'email_template')");
  await q.sequelize.query("DELETE FROM settings WHERE scope = 'ticket' OR scope LIKE 'channel.%'");
  // The templates departments mapped are gone: the mappings mean nothing now.
  await q.sequelize.query('UPDATE departments SET email_templates = NULL');
}
