import type { QueryInterface } from 'sequelize';

export const name = '098_ticket_message_merges';

/**
 * The ticket each merged message came from (`ticket_message_merges`), so that a merge undone (a
 * person's delete gives the tickets of others merged into theirs back: users/service.ts,
 * unmergeOthersFrom) gives each ticket back the messages it brought. `original_ticket_id`, the
 * ticket a message was written on, said so only for the messages written on the ticket merged:
 * one split into it from another ticket before the merge kept that other ticket's id, was given
 * back to no one and was deleted with the person's ticket.
 *
 * A row per message moved by a merge, where it has none already (a ticket merged into the source
 * before is merged into the target too, and gets its own messages back); removed when the
 * message is given back, and with the message. A table of its own: a column of `ticket_messages`
 * cannot be added in place (its FULLTEXT index), and a rebuild of millions of messages would
 * stop the upgrade for minutes. A message merged before this migration has no row:
 * original_ticket_id stands in for it. By `from_ticket_id` too: a merge undone reads the rows of
 * the tickets it gives back (without it, a person of many tickets read every row: at 1M, the
 * busy customer's 62,549 tickets made the optimiser scan them all).
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`CREATE TABLE ticket_message_merges (
    message_id INT UNSIGNED NOT NULL PRIMARY KEY,
    from_ticket_id INT UNSIGNED NOT NULL,
    KEY ticket_message_merges_from (from_ticket_id),
    CONSTRAINT ticket_message_merges_message FOREIGN KEY (message_id) REFERENCES ticket_messages (id) ON DELETE CASCADE
  ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('DROP TABLE ticket_message_merges');
}
