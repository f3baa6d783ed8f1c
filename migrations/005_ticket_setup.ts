import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { fk, flag, id, ref, str, tableOptions, text, timestamp, timestamps } from './columns';

export const name = '005_ticket_setup';

const pivot = (a: [string, string], b: [string, string]) => ({
  [a[0]]: { ...fk(a[1]), primaryKey: true },
  [b[0]]: { ...fk(b[1]), primaryKey: true },
});

const smallint = (allowNull = false) => ({ type: DataTypes.SMALLINT.UNSIGNED, allowNull });
const tinyint = (defaultValue: number) => ({ type: DataTypes.TINYINT.UNSIGNED, allowNull: false, defaultValue });

/**
 * Ticket setup: department create and update (default assignee), department mailboxes (protocol
 * and encryption by name, encrypted passwords, one department per address, poll status), ticket
 * custom fields per department, SLA plans, ticket filters.
 */
export async function up(q: QueryInterface): Promise<void> {
  const sql = (text: string) => q.sequelize.query(text);

  // Departments: the default assignee is an operator; losing the operator clears it.
  await sql('UPDATE departments d LEFT JOIN users u ON u.id = d.default_assignedto AND u.type = \'operator\' SET d.default_assignedto = NULL WHERE d.default_assignedto IS NOT NULL AND u.id IS NULL');
  await q.addConstraint('departments', {
    type: 'foreign key', fields: ['default_assignedto'], references: { table: 'users', field: 'id' }, onDelete: 'SET NULL', onUpdate: 'CASCADE',
    name: 'departments_default_assignedto_fk',
  });
  await q.addIndex('departments', ['order']);

  // Department emails. protocol: 0/1 → 'imap'/'pop3'; encryption 'none', 'ssl' or 'tls'.
  await sql("ALTER TABLE department_emails MODIFY protocol VARCHAR(8) NOT NULL DEFAULT 'imap'");
  await sql("UPDATE department_emails SET protocol = IF(protocol = '1', 'pop3', 'imap')");
  await sql("UPDATE department_emails SET encryption = 'ssl' WHERE encryption IS NULL OR encryption NOT IN ('none', 'ssl', 'tls')");
  await sql("ALTER TABLE department_emails MODIFY encryption VARCHAR(8) NOT NULL DEFAULT 'ssl'");
  // Passwords are AES-256-GCM values (`v1:<key id>:<base64>`, crypto/secrets.ts). Nothing could
  // store a clear one before; should one be there, it is dropped rather than kept readable.
  await sql('ALTER TABLE department_emails MODIFY password VARCHAR(2048) NULL');
  await sql("UPDATE department_emails SET password = NULL WHERE password IS NOT NULL AND password NOT LIKE 'v1:%'");
  await q.addColumn('department_emails', 'last_polled_at', timestamp());
  await q.addColumn('department_emails', 'last_error', text());
  await q.addColumn('department_emails', 'last_error_at', timestamp());
  await q.removeIndex('department_emails', 'department_emails_address');
  await q.addIndex('department_emails', ['address'], { unique: true, name: 'department_emails_address_unique' });

  // Ticket custom fields apply to departments (none listed: every department).
  await q.createTable('custom_field_departments', pivot(['field_id', 'custom_fields'], ['department_id', 'departments']), tableOptions);
  await q.addIndex('custom_field_departments', ['department_id']);

  // SLA plans: a weekly schedule (one window per weekday, minutes after midnight) and targets per
  // priority in minutes. priority_id has no foreign key: priorities arrive in another migration.
  await q.createTable('sla_plans', {
    id: id(), name: str(255, false), description: text(), enabled: flag(1), business_hours: flag(0), timezone: str(64),
    order: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 }, ...timestamps(),
  }, tableOptions);
  for (const c of ['enabled', 'order']) await q.addIndex('sla_plans', [c]);
  await q.createTable('sla_plan_schedules', {
    plan_id: { ...fk('sla_plans'), primaryKey: true },
    day: { type: DataTypes.TINYINT.UNSIGNED, allowNull: false, primaryKey: true },
    start_minute: smallint(), end_minute: smallint(),
  }, tableOptions);
  await q.createTable('sla_plan_targets', {
    plan_id: { ...fk('sla_plans'), primaryKey: true },
    priority_id: { ...ref(), primaryKey: true },
    first_reply: ref(true), resolution: ref(true),
  }, tableOptions);
  await q.addIndex('sla_plan_targets', ['priority_id']);

  // Ticket filters: owner (null = shared), operator groups that see a shared filter, conditions.
  await q.createTable('ticket_filters', {
    id: id(), name: str(255, false), user_id: fk('users', 'CASCADE', true), all_groups: flag(1), condition_group_type: tinyint(0), ...timestamps(),
  }, tableOptions);
  await q.addIndex('ticket_filters', ['user_id']);
  await q.addIndex('ticket_filters', ['all_groups']);
  await q.createTable('ticket_filter_groups', pivot(['filter_id', 'ticket_filters'], ['group_id', 'groups']), tableOptions);
  await q.addIndex('ticket_filter_groups', ['group_id']);
  // One row per condition; `group_no` and `group_type` (0 all, 1 any) place it in its group.
  await q.createTable('ticket_filter_conditions', {
    id: id(), filter_id: fk('ticket_filters'), group_no: smallint(), group_type: tinyint(0), position: smallint(),
    item: str(32, false), operator: str(16, false), value: str(255), field_id: fk('custom_fields', 'CASCADE', true),
  }, tableOptions);
  await q.addIndex('ticket_filter_conditions', ['filter_id', 'group_no', 'position']);
  await q.addIndex('ticket_filter_conditions', ['field_id']);
  // The filter every install starts with (SupportPal's "All Tickets"): shared, every group, no condition.
  const t = Math.floor(Date.now() / 1000);
  await q.bulkInsert('ticket_filters', [{ name: 'All Tickets', user_id: null, all_groups: 1, condition_group_type: 1, created_at: t, updated_at: t }]);
}

export async function down(q: QueryInterface): Promise<void> {
  for (const table of ['ticket_filter_conditions', 'ticket_filter_groups', 'ticket_filters', 'sla_plan_targets', 'sla_plan_schedules', 'sla_plans', 'custom_field_departments']) {
    await q.dropTable(table);
  }
  await q.removeIndex('department_emails', 'department_emails_address_unique');
  await q.addIndex('department_emails', ['address']);
  await q.sequelize.query('ALTER TABLE department_emails DROP COLUMN last_error_at, DROP COLUMN last_error, DROP COLUMN last_polled_at');
  await q.sequelize.query('ALTER TABLE department_emails MODIFY password VARCHAR(255) NULL');
  await q.sequelize.query('ALTER TABLE department_emails MODIFY encryption VARCHAR(8) NULL');
  await q.sequelize.query("UPDATE department_emails SET protocol = IF(protocol = 'pop3', '1', '0')");
  await q.sequelize.query('ALTER TABLE department_emails MODIFY protocol TINYINT UNSIGNED NOT NULL DEFAULT 0');
  await q.removeIndex('departments', ['order']);
  // The index MariaDB made for the foreign key stays when the key is dropped.
  await q.sequelize.query('ALTER TABLE departments DROP FOREIGN KEY departments_default_assignedto_fk, DROP INDEX departments_default_assignedto_fk');
}
