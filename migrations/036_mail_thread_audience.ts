import { QueryTypes, type QueryInterface } from 'sequelize';

export const name = '036_mail_thread_audience';

/**
 * Whose conversation each stored Message-ID belongs to (`audience`), so that a ticket's mail names
 * in In-Reply-To and References only mails its recipients have (src/ticket/mail/threading.ts):
 *
 * - `user`: mails to the ticket's user and its CC addresses, and the mails they send in;
 * - `operator:<id>`: one operator's notifications, and that operator's replies by mail;
 * - `forward`: forwards to third parties, and their answers. A forward is a conversation of its
 *   own: it names no mail of the ticket, and an answer to it is told by this value (it was told
 *   by the forward's message, whose reference a deleted message clears).
 *
 * Before, a mail named the ticket's latest mail whoever received it: a forward carried the
 * customer's thread in its References, so a vendor's answer, which quotes them back, read as the
 * customer's thread and joined the ticket as a CC (its text a public reply, copied to the CCs).
 *
 * Existing rows: forwards and the mails received are told from their ticket message (a forward,
 * an answer to one filed as a user's note, an operator's reply, else a user's); the mails sent,
 * from the outbox entry of their delivery (`mail_deliveries.message_id`, the job's kind and
 * recipient: a user's mail or notice, one operator's, a forward). A row neither tells stays NULL,
 * which every conversation's thread takes, as before. The thread index (ticket, audience) replaces
 * the index on the ticket alone (the foreign key uses it).
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`ALTER TABLE mail_message_ids
    ADD COLUMN audience VARCHAR(40) NULL,
    ADD INDEX mail_message_ids_thread (ticket_id, audience),
    DROP INDEX mail_message_ids_ticket_id`);
  await fillAudiences(q);
}

/** Ids per statement of the fill: each locks the rows of its range only for its own short run. */
const RANGE = 50_000;

/**
 * The audiences of the rows stored before this migration, one range of ids per statement (a
 * statement over the whole table would lock every row it reads until its end: 44 s for 1.5 million
 * rows on a 2-core machine with other work running, while a mailbox worker still running on
 * another node waits to store ids).
 */
export async function fillAudiences(q: QueryInterface): Promise<void> {
  await inRanges(q, 'mail_message_ids', `UPDATE mail_message_ids m JOIN ticket_messages tm ON tm.id = m.ticket_message_id
    SET m.audience = CASE
      WHEN tm.type = 2 THEN 'forward'
      WHEN tm.type = 1 AND tm.by = 1 THEN 'forward'
      WHEN tm.by = 0 THEN CONCAT('operator:', tm.user_id)
      ELSE 'user' END
    WHERE m.id BETWEEN ? AND ? AND (tm.type = 2 OR m.direction = 'in')`);
  // The mails sent, by their deliveries (the Message-ID in angle brackets, as the SMTP transport
  // reports it), each a lookup of the unique Message-ID.
  const kind = "JSON_VALUE(o.payload, '$.kind')";
  await inRanges(q, 'mail_deliveries', `UPDATE mail_deliveries d
    JOIN outbox o ON o.id = d.outbox_id
    JOIN mail_message_ids m ON m.message_id = SUBSTRING(d.message_id, 2, CHAR_LENGTH(d.message_id) - 2) COLLATE utf8mb4_bin
    SET m.audience = CASE
      WHEN ${kind} = 'forward' THEN 'forward'
      WHEN ${kind} LIKE 'operator\\_%' THEN CONCAT('operator:', JSON_VALUE(o.payload, '$.recipientId'))
      ELSE 'user' END
    WHERE d.id BETWEEN ? AND ? AND d.message_id LIKE '<%>' AND o.name = 'ticket.mail' AND m.audience IS NULL
      AND (${kind} = 'forward' OR ${kind} LIKE 'user\\_%' OR (${kind} LIKE 'operator\\_%' AND JSON_VALUE(o.payload, '$.recipientId') IS NOT NULL))`);
}

/** Runs `sql` (its two placeholders: the first and last id) over the ids of `table`, RANGE at a time. */
async function inRanges(q: QueryInterface, table: string, sql: string): Promise<void> {
  const [{ lo, hi }] = await q.sequelize.query<{ lo: number | null; hi: number | null }>(`SELECT MIN(id) AS lo, MAX(id) AS hi FROM ${table}`, { type: QueryTypes.SELECT });
  if (lo === null || hi === null) return;
  for (let from = Number(lo); from <= Number(hi); from += RANGE) await q.sequelize.query(sql, { replacements: [from, from + RANGE - 1] });
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`ALTER TABLE mail_message_ids
    ADD INDEX mail_message_ids_ticket_id (ticket_id),
    DROP INDEX mail_message_ids_thread,
    DROP COLUMN audience`);
}
