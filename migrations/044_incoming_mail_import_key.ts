import type { QueryInterface } from 'sequelize';

export const name = '044_incoming_mail_import_key';

/**
 * The ledger's import key of a mail with a Message-ID names its sender too (src/mailbox/parse.ts,
 * messageKey: `id:` and the SHA-256 of `<from address> <Message-ID>`): the Message-ID alone made
 * another sender's mail that reused it a duplicate, dropped. The lines written before keep meaning
 * what they did: the key of each (its bare Message-ID) becomes the new key of its sender and
 * Message-ID, so the same mail delivered again after the upgrade is still a duplicate. Keys of
 * mails without a Message-ID (`sha256:` of the raw mail) stay as they are.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`UPDATE incoming_mails SET import_key = CONCAT('id:', SHA2(CONCAT(from_address, ' ', import_key), 256))
    WHERE import_key IS NOT NULL AND from_address IS NOT NULL AND import_key NOT REGEXP '^(sha256|id):[0-9a-f]{64}$'`);
}

/**
 * The bare Message-ID again, for the first line of each Message-ID; a later line of another sender
 * with the same Message-ID gives its key up (the old key cannot tell them apart).
 */
export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`UPDATE incoming_mails m JOIN (SELECT MIN(id) AS id FROM incoming_mails WHERE import_key REGEXP '^id:[0-9a-f]{64}$' GROUP BY message_id) f ON f.id = m.id
    SET m.import_key = m.message_id WHERE m.message_id IS NOT NULL`);
  await q.sequelize.query("UPDATE incoming_mails SET import_key = NULL WHERE import_key REGEXP '^id:[0-9a-f]{64}$'");
}
