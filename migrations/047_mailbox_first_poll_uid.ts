import { DataTypes, type QueryInterface } from 'sequelize';

export const name = '047_mailbox_first_poll_uid';

/**
 * The last UID an IMAP mailbox had when its first poll listed it (src/mailbox/imap.ts): a mail up
 * to it flagged \Seen was read before the help desk took the mailbox over, and is not imported
 * (the first poll of a mailbox imported every mail of its INBOX, years of read mail, each a ticket
 * and an acknowledgement). 0 for the mailboxes polled before: nothing of theirs is skipped.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.addColumn('department_emails', 'imap_first_poll_uid', { type: DataTypes.INTEGER.UNSIGNED, allowNull: false, defaultValue: 0 });
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE department_emails DROP COLUMN imap_first_poll_uid');
}
