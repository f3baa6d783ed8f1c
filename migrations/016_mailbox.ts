import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { EXACT, fk, id, ref, str, tableOptions, timestamp, timestamps } from './columns';

export const name = '016_mailbox';

/**
 * The mailbox worker: where each IMAP mailbox was read up to (UIDVALIDITY and the last UID,
 * advanced in the transaction of each import), its failures and when it is polled next (backoff),
 * and the ingestion ledger (`incoming_mails`): one row per mail fetched (or posted to the dry
 * run), with the decision taken and what it produced. `import_key` is set only on the row of the
 * mail that was imported (its Message-ID, or a hash of the raw mail without one): its unique key
 * is what makes one mail, fetched twice or from two mailboxes at once, import once.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.addColumn('department_emails', 'imap_uidvalidity', str(32));
  await q.addColumn('department_emails', 'imap_last_uid', { type: DataTypes.INTEGER.UNSIGNED, allowNull: false, defaultValue: 0 });
  await q.addColumn('department_emails', 'poll_failures', { type: DataTypes.INTEGER.UNSIGNED, allowNull: false, defaultValue: 0 });
  await q.addColumn('department_emails', 'next_poll_at', timestamp());
  // The schedule's scan: remote mailboxes (type 1) due for a poll.
  await q.addIndex('department_emails', ['type', 'next_poll_at'], { name: 'department_emails_polls' });

  await q.createTable('incoming_mails', {
    id: id(),
    department_email_id: fk('department_emails', 'SET NULL', true),
    // IMAP: `<uidvalidity>:<uid>`; POP3: the UIDL. Null for a dry run.
    remote_uid: str(128),
    message_id: { type: `VARCHAR(255) ${EXACT}`, allowNull: true },
    import_key: { type: `VARCHAR(255) ${EXACT}`, allowNull: true },
    from_address: str(255),
    subject: str(998),
    decision: { type: DataTypes.STRING(16), allowNull: false },
    reason: str(1024),
    ticket_id: ref(true),
    ticket_message_id: ref(true),
    size: { type: DataTypes.INTEGER.UNSIGNED, allowNull: false, defaultValue: 0 },
    ...timestamps(),
  }, tableOptions);
  await q.addIndex('incoming_mails', ['import_key'], { unique: true, name: 'incoming_mails_import_key_unique' });
  // POP3: which UIDLs of a mailbox were already taken (and the ledger's mailbox filter).
  await q.addIndex('incoming_mails', ['department_email_id', 'remote_uid'], { name: 'incoming_mails_mailbox_uid' });
  await q.addIndex('incoming_mails', ['decision']);
  await q.addIndex('incoming_mails', ['message_id']);
  await q.addIndex('incoming_mails', ['ticket_id']);
  await q.addIndex('incoming_mails', ['created_at']);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.dropTable('incoming_mails');
  await q.sequelize.query(`ALTER TABLE department_emails DROP INDEX department_emails_polls, DROP COLUMN next_poll_at,
    DROP COLUMN poll_failures, DROP COLUMN imap_last_uid, DROP COLUMN imap_uidvalidity`);
}
