/**
 * A ticket's document in a search engine's index (Mroonga's tables, the Groonga server's), for the
 * row `t` of tickets: its subject, the subjects of the tickets merged into it, and the text of its
 * messages (drafts left out), in the order they were written.
 */
export const DOCUMENT = `CONCAT_WS(' ', t.subject,
    (SELECT GROUP_CONCAT(s.subject SEPARATOR ' ') FROM tickets s WHERE s.merged_into_id = t.id),
    (SELECT GROUP_CONCAT(m.text ORDER BY m.id SEPARATOR ' ') FROM ticket_messages m WHERE m.ticket_id = t.id AND m.is_draft = 0))`;

/** Whether the row `t` of tickets is listed: neither trashed nor merged into another. */
export const IS_LISTED = 't.deleted_at IS NULL AND t.merged_into_id IS NULL';
