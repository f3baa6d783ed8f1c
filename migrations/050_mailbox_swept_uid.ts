import { DataTypes, type QueryInterface } from 'sequelize';

export const name = '050_mailbox_swept_uid';

/**
 * With `delete_downloaded`, the UID up to which an IMAP mailbox's mails have been put away
 * (src/mailbox/imap.ts): what is left there at or below it stays on purpose (refused by a rule,
 * a failed import), and a poll no longer reads its ledger lines again. 0 for the mailboxes polled
 * before: their next poll puts away everything at or below the cursor once, as every poll did.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.addColumn('department_emails', 'imap_swept_uid', { type: DataTypes.INTEGER.UNSIGNED, allowNull: false, defaultValue: 0 });
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE department_emails DROP COLUMN imap_swept_uid');
}
