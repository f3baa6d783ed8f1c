import { DOCUMENT as WHOLE_DOCUMENT, IS_LISTED } from './document';

/**
 * A ticket's text in the Mroonga index (./mroonga.ts), in pieces of bounded size. Groonga indexes
 * a column's value whole: a value changed is tokenised again, old and new, however little of it
 * changed. With the whole thread in one document, each message appended cost a pass over every
 * message before it (at 1M tickets, 2.6 ms a message at first, 25.9 ms after 2,250). So the
 * document (`ticket_search`, `ticket_search_hidden`) holds the subject, the subjects merged into
 * the ticket and the thread's first piece; later pieces are rows of `ticket_search_pieces`, one
 * per piece, whether the ticket is listed or not. A message appended is written into the piece it
 * falls in, so its cost is bounded by a piece, not the thread.
 *
 * A message's piece is set by the text before it: `FLOOR(r / PIECE_BYTES)`, where `r` is the sum
 * of `LENGTH(text) + 1` over the ticket's earlier messages (drafts left out, in id order). The
 * trigger keeps that sum as the document's `thread_length`; a document written again computes
 * it with a window over the messages. Both give each message the same piece, so a document is the
 * same however it was written. A piece holds the messages that start within its PIECE_BYTES: at
 * most that, plus its last message's overrun (a message larger than a piece ends its piece).
 *
 * A piece's key is `ticket id × 2^32 + piece` (piece 1 and up): a ticket's pieces are one range
 * of the primary key. Its row also keeps its first message (`first_id`) and that message's `r`
 * (`start_bytes`), so that a change late in a long thread reads the messages from its piece on
 * only (changeMessage); 0 in a row an older version wrote, which is then not used.
 */
export const PIECES = 'ticket_search_pieces';
export const PIECE_BYTES = 16_384;
const SHIFT = 4_294_967_296;

/** The columns of a piece's start, by name: their definitions. */
export const PIECE_START_COLUMNS: Record<string, string> = { first_id: 'INT UNSIGNED NOT NULL DEFAULT 0', start_bytes: 'BIGINT UNSIGNED NOT NULL DEFAULT 0' };

export const piecesTable = `CREATE TABLE IF NOT EXISTS ${PIECES} (
    piece_key BIGINT UNSIGNED NOT NULL PRIMARY KEY,
    body LONGTEXT NOT NULL,
    ${Object.entries(PIECE_START_COLUMNS).map(([c, d]) => `${c} ${d},`).join(' ')}
    FULLTEXT INDEX ${PIECES}_body (body) COMMENT 'normalizer "NormalizerAuto"'
  ) ENGINE=Mroonga DEFAULT CHARSET=utf8mb4`;

/** The ticket a piece's key belongs to (SQL, for the row `alias` of the pieces). */
export const ticketOfPiece = (alias: string) => `${alias}.piece_key DIV ${SHIFT}`;

/**
 * The messages of the tickets `messages` names (a condition on `m`), drafts left out, each with
 * its `r` (`p.r`: `offset`, SQL, plus the bytes of the messages named before it), its piece and
 * its text (`p.piece`, `pm.text`). The window runs per ticket, in id order, over the messages'
 * ids and lengths only: with the text in its rows it sorted them in an on-disk temporary table
 * (a fill of every document this way at 1M: 76 s so, 62 s without).
 */
const withPieces = (messages: string, offset = '0') => {
  const r = `${offset} + SUM(LENGTH(m.text) + 1) OVER (PARTITION BY m.ticket_id ORDER BY m.id) - LENGTH(m.text) - 1`;
  return `(SELECT m.ticket_id, m.id, LENGTH(m.text) + 1 AS bytes, ${r} AS r, FLOOR((${r}) / ${PIECE_BYTES}) AS piece
    FROM ticket_messages m WHERE ${messages} AND m.is_draft = 0) p STRAIGHT_JOIN ticket_messages pm ON pm.id = p.id`;
};

/**
 * `FROM` for the documents of the tickets `t` (a condition on them) whose messages `messages`
 * names: each ticket with its thread's first piece (`z.first`) and length (`z.length`).
 */
const documentsFrom = (tickets: string, messages: string) => `tickets t LEFT JOIN (
    SELECT p.ticket_id, GROUP_CONCAT(IF(p.piece = 0, pm.text, NULL) ORDER BY p.id SEPARATOR ' ') AS first, SUM(p.bytes) AS length
    FROM ${withPieces(messages)} GROUP BY p.ticket_id) z ON z.ticket_id = t.id
  WHERE ${tickets}`;

/** A ticket's document: its subject, the subjects merged into it, the first piece of its thread. */
const DOCUMENT = `CONCAT_WS(' ', t.subject,
    (SELECT GROUP_CONCAT(s.subject SEPARATOR ' ') FROM tickets s WHERE s.merged_into_id = t.id), z.first)`;

/** Where a document goes: `table`, for the listed tickets or the others, and its kept columns (`columns`, the values from `values`, both lists as SQL). */
export interface DocumentTable { table: string; listed: boolean; columns: string; values: string }

/**
 * The documents of the tickets `tickets` names (their messages: `messages`, a condition on `m`),
 * into `o.table`. `verb`: INSERT or REPLACE.
 */
export const writeDocuments = (o: DocumentTable & { verb: 'INSERT' | 'REPLACE'; tickets: string; messages: string }) =>
  `${o.verb} INTO ${o.table} (ticket_id, body, thread_length, ${o.columns})
    SELECT t.id, ${DOCUMENT}, IFNULL(z.length, 0), ${o.values}
    FROM ${documentsFrom(`${o.tickets} AND ${o.listed ? '' : 'NOT '}(${IS_LISTED})`, o.messages)}`;

/**
 * The same with each ticket's whole thread, as one GROUP_CONCAT per ticket: the first fill's,
 * about three times as fast as the window over many tickets. Right for every thread of at most
 * PIECE_BYTES (`thread_length`), which is all in its first piece; the fill then writes the longer
 * ones again with writeDocuments.
 */
export const writeWholeDocuments = (o: DocumentTable & { tickets: string }) =>
  `REPLACE INTO ${o.table} (ticket_id, body, thread_length, ${o.columns})
    SELECT t.id, ${WHOLE_DOCUMENT}, IFNULL((SELECT SUM(LENGTH(m.text) + 1) FROM ticket_messages m WHERE m.ticket_id = t.id AND m.is_draft = 0), 0), ${o.values}
    FROM tickets t WHERE ${o.tickets} AND ${o.listed ? '' : 'NOT '}(${IS_LISTED})`;

/**
 * The pieces after the first of the tickets whose messages `messages` names (a condition on `m`),
 * or from piece `from` on (SQL, at least 1): only those pieces' texts are read. `offset` (SQL):
 * the bytes of the thread before the messages named, when they are not the whole thread (one
 * ticket's, from a message on).
 */
export const writePieces = (verb: 'INSERT' | 'REPLACE', messages: string, from = '1', offset = '0') => `${verb} INTO ${PIECES} (piece_key, body, first_id, start_bytes)
    SELECT p.ticket_id * ${SHIFT} + p.piece, GROUP_CONCAT(pm.text ORDER BY p.id SEPARATOR ' '), MIN(p.id), MIN(p.r)
    FROM ${withPieces(messages, offset)} WHERE p.piece >= ${from} GROUP BY p.ticket_id, p.piece`;

/** Removes the pieces of the tickets `from` to `to` (SQL expressions). */
export const deletePieces = (from: string, to = from) => `DELETE FROM ${PIECES} WHERE piece_key BETWEEN ${from} * ${SHIFT} AND ${to} * ${SHIFT} + ${SHIFT - 1}`;

/** The variables changeMessage's statements use, declared at the top of the trigger. */
export const CHANGE_VARIABLES = 'DECLARE r BIGINT UNSIGNED; DECLARE f INT UNSIGNED; DECLARE s BIGINT UNSIGNED;';

/**
 * Trigger statements for a change of message `row` (`NEW` or `OLD`) within its ticket: its text
 * edited, it published from a draft or made one, or it deleted. The pieces before the message's
 * own hold only messages before it, which did not change: the thread is written again from the
 * message's piece on. Within the first piece that is the document and every piece (`whole`:
 * statements that write them); after it, the pieces from the message's on, and `thread_length`
 * moved by the bytes `added` and `removed` (SQL), in whichever table holds the document. Before,
 * any such change wrote every piece again, each tokenised anew.
 *
 * The message's `r`, and the window that writes the pieces, start at the last piece whose first
 * message is not after it (`f`, its `r` `s`; the pieces' first ids and starts both grow with the
 * piece, so their MAX is that piece's): the messages of the thread before that piece are not
 * read. They were read twice (the sum, then the window), about 5 µs a message: 5 of the 15 ms
 * of an edit of the last message of a 1,001-message thread at 1M. With no such piece (the
 * message in the first, or the pieces an older version's), from the thread's first message.
 */
export const changeMessage = (o: { row: 'NEW' | 'OLD'; listed: string; hidden: string; whole: string; added: string; removed: string }) => {
  const ticket = `${o.row}.ticket_id`;
  // Added before removed: thread_length is unsigned, and never less than what it removes.
  const length = (table: string) => `UPDATE ${table} SET thread_length = thread_length + (${o.added}) - (${o.removed}) WHERE ticket_id = ${ticket};`;
  return `
    SELECT IFNULL(MAX(first_id), 0), IFNULL(MAX(start_bytes), 0) INTO f, s FROM ${PIECES}
      WHERE piece_key BETWEEN ${ticket} * ${SHIFT} + 1 AND ${ticket} * ${SHIFT} + ${SHIFT - 1} AND first_id BETWEEN 1 AND ${o.row}.id;
    SET r = s + (SELECT IFNULL(SUM(LENGTH(m.text) + 1), 0) FROM ticket_messages m WHERE m.ticket_id = ${ticket} AND m.is_draft = 0 AND m.id >= f AND m.id < ${o.row}.id);
    IF r < ${PIECE_BYTES} THEN ${o.whole}
    ELSE
      ${length(o.listed)}
      ${length(o.hidden)}
      DELETE FROM ${PIECES} WHERE piece_key BETWEEN ${ticket} * ${SHIFT} + FLOOR(r / ${PIECE_BYTES}) AND ${ticket} * ${SHIFT} + ${SHIFT - 1};
      ${writePieces('INSERT', `m.ticket_id = ${ticket} AND m.id >= f`, `FLOOR(r / ${PIECE_BYTES})`, 's')};
    END IF;`;
};

/**
 * Trigger statements that append message `NEW` to its ticket's text: to the document while the
 * thread is within its first piece, else to its piece's row (made by the first message in it).
 * `thread_length` moves on either way. Only the table that holds the document is written (a
 * ticket without one, none can be but a table emptied by hand, gets none here). `len` is a
 * variable the trigger declares.
 */
export const appendMessage = (listed: string, hidden: string) => {
  const into = (table: string) => `
      IF len < ${PIECE_BYTES} THEN
        UPDATE ${table} SET body = CONCAT(body, ' ', NEW.text), thread_length = len + LENGTH(NEW.text) + 1 WHERE ticket_id = NEW.ticket_id;
      ELSE
        UPDATE ${table} SET thread_length = len + LENGTH(NEW.text) + 1 WHERE ticket_id = NEW.ticket_id;
        INSERT INTO ${PIECES} (piece_key, body, first_id, start_bytes) VALUES (NEW.ticket_id * ${SHIFT} + FLOOR(len / ${PIECE_BYTES}), NEW.text, NEW.id, len)
          ON DUPLICATE KEY UPDATE body = CONCAT(body, ' ', VALUES(body));
      END IF;`;
  return `
    SET len = (SELECT thread_length FROM ${listed} WHERE ticket_id = NEW.ticket_id);
    IF len IS NOT NULL THEN ${into(listed)}
    ELSE
      SET len = (SELECT thread_length FROM ${hidden} WHERE ticket_id = NEW.ticket_id);
      IF len IS NOT NULL THEN ${into(hidden)}
      END IF;
    END IF;`;
};
