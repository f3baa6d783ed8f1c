import { DataTypes, type QueryInterface } from 'sequelize';

export const name = '046_mailbox_settings_version';

/**
 * A department email's settings version, moved by every change of its settings through the API
 * (src/ticket/departmentEmail.ts). A poll remembers the version it began with and stops, writing
 * nothing of its own (cursor, errors, backoff), once the mailbox has another one (src/mailbox/pollGuard.ts):
 * a poll of the old account no longer imports it to the end and writes its cursor over the reset.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.addColumn('department_emails', 'settings_version', { type: DataTypes.INTEGER.UNSIGNED, allowNull: false, defaultValue: 0 });
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE department_emails DROP COLUMN settings_version');
}
