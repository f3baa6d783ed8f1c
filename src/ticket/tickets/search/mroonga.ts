import { QueryTypes, type Transaction } from 'sequelize';
import { config } from '../../../config';
import { select } from '../../../db/select';
import { sequelize } from '../../../db/sequelize';
import { joined as list, sqlCondition, sqlFragment, sqlText, trusted, type BoundCondition } from '../../../db/sql';
import { logger } from '../../../logger';
import { FILTER_COLUMNS } from './columns';
import { appendMessage, CHANGE_VARIABLES, changeMessage, deletePieces, PIECE_BYTES, PIECE_START_COLUMNS, PIECES, piecesTable, ticketOfPiece, writeDocuments, writePieces, writeWholeDocuments, type DocumentTable } from './threadPieces';
import { counterSums, filterSize, filterWords, indexableFilters, SMALL_FILTER, WINDOW_MAX_REACH, WINDOW_PER_TICKET, type IdFilter } from './filterStart';
import { groongaInteger as integer, groongaQuery, groongaString as commandValue } from './groongaQuery';
import type { ColumnFilter, ListedPage, ListedSearch, SearchEngine } from './engine';

/**
 * SEARCH_ENGINE=mroonga: MariaDB's Mroonga storage engine (Groonga inside the server) holds one
 * document per ticket: its subject, the subjects of the tickets merged into it, and the text of
 * its messages (drafts left out), in `ticket_search` while the ticket is listed and in
 * `ticket_search_hidden` while it is trashed or merged; a long thread's text past its first
 * piece is in `ticket_search_pieces` (./threadPieces.ts: a message's write is bounded by a piece,
 * not the thread). Triggers on `tickets` and `ticket_messages` keep them in the statement that
 * writes a ticket or a message, whatever writes it (the API, the mailbox worker, a merge, a
 * hand-written UPDATE or DELETE).
 *
 * Beside the text, each document keeps some of the ticket's columns (./columns.ts), and the same
 * values as words of an indexed `filter_words`, so that the list's page and exact count for words
 * with field terms and column filters are one Groonga `select` (`listedPage`), started from the
 * words or from a filter, whichever holds fewer tickets. Two tables rather than a `listed` column:
 * the list's searches are over the listed tickets, which then need no filter at all.
 *
 * What differs from InnoDB: every word must be in one piece of the ticket (the subject and the
 * first piece of its thread, or one later piece), not all in one message; a phrase may run from
 * one message into the next. Mroonga tables are not transactional: a write rolled back after its
 * statement ran leaves the index as the statement left it until the ticket is written again
 * (dropping the three tables makes the next start fill them again).
 * A Galera cluster replicates InnoDB only: this engine is for one server.
 */

const LISTED = 'ticket_search';
const HIDDEN = 'ticket_search_hidden';
const TRIGGERS = [
  'ticket_search_ticket_insert', 'ticket_search_ticket_update', 'ticket_search_ticket_delete',
  'ticket_search_message_insert', 'ticket_search_message_update', 'ticket_search_message_delete',
];
/** Bytes of GROUP_CONCAT's answer, at least, on a connection of SEARCH_ENGINE=mroonga (the server's max_allowed_packet bounds it too). */
const GROUP_CONCAT_MAX = 16 * 1024 * 1024;
/** Tickets per statement of the first fill. */
const FILL_CHUNK = 20_000;
/**
 * The ticket's columns kept beside its text (./columns.ts), so that a search's field terms and the
 * list's filters are checked inside Groonga, and the same values as words of `filter_words`, whose
 * index a select may start from (./filterStart.ts).
 */
const DOCUMENT_COLUMNS = FILTER_COLUMNS;
const COLS = [...DOCUMENT_COLUMNS, 'filter_words'].join(', ');
const colsOf = (alias: string) => [...DOCUMENT_COLUMNS.map((c) => `${alias}.${c}`), filterWords(alias)].join(', ');

const q = (sql: string, replacements?: Record<string, unknown> | unknown[]) => sequelize().query(sql, { replacements, type: QueryTypes.RAW });

/** Both document tables: the listed tickets' and the others'. */
const DOCUMENT_TABLES: DocumentTable[] = [true, false].map((listed) => ({ table: listed ? LISTED : HIDDEN, listed, columns: COLS, values: colsOf('t') }));

/** The statements that write the documents of the tickets `tickets` names (their messages: `messages`), listed and hidden. */
const documents = (verb: 'INSERT' | 'REPLACE', tickets: string, messages: string) => DOCUMENT_TABLES.map((d) => writeDocuments({ ...d, verb, tickets, messages }));

/** Trigger statements that write ticket `id`'s document again, in the table its state puts it in (its pieces stay). */
const rebuild = (id: string) => `
  DELETE FROM ${LISTED} WHERE ticket_id = ${id};
  DELETE FROM ${HIDDEN} WHERE ticket_id = ${id};
  ${documents('INSERT', `t.id = ${id}`, `m.ticket_id = ${id}`).join(';\n  ')};`;

/** Trigger statements that write ticket `id`'s document and pieces again (its messages changed). */
const rebuildThread = (id: string) => `${rebuild(id)}
  ${deletePieces(id)};
  ${writePieces('INSERT', `m.ticket_id = ${id}`)};`;

/**
 * Set, on its connection, while statements move messages and tickets between tickets
 * (movingMessages): the message update trigger then leaves a moved row's two threads to the
 * mover, and the ticket update trigger a merged ticket's target (whose document holds its
 * subject), which the mover writes once after the statements. Each row's trigger wrote both
 * whole threads again, so a merge cost O(messages moved × thread): 13 s for 251 messages into a
 * thread of 1,001 at 10k tickets; and each ticket merged in wrote its target's document again.
 */
const MOVING = '@ticket_search_moving';

/** The thread's bytes an update of a message adds and removes (a draft's are in no thread). */
const EDIT_ADDED = 'IF(NEW.is_draft = 0, LENGTH(NEW.text) + 1, 0)';
const EDIT_REMOVED = 'IF(OLD.is_draft = 0, LENGTH(OLD.text) + 1, 0)';

/** Whether a trigger's NEW row changed any kept column (then written to the document, the text untouched). */
const COLUMNS_CHANGED = DOCUMENT_COLUMNS.map((c) => `NOT (NEW.${c} <=> OLD.${c})`).join(' OR ');
const SET_COLUMNS = [...DOCUMENT_COLUMNS.map((c) => `${c} = NEW.${c}`), `filter_words = ${filterWords('NEW')}`].join(', ');

const TRIGGER_SQL: Record<string, string> = {
  ticket_search_ticket_insert: `AFTER INSERT ON tickets FOR EACH ROW
    IF NEW.deleted_at IS NULL AND NEW.merged_into_id IS NULL THEN REPLACE INTO ${LISTED} (ticket_id, body, ${COLS}) VALUES (NEW.id, NEW.subject, ${colsOf('NEW')});
    ELSE REPLACE INTO ${HIDDEN} (ticket_id, body, ${COLS}) VALUES (NEW.id, NEW.subject, ${colsOf('NEW')}); END IF`,
  ticket_search_ticket_update: `AFTER UPDATE ON tickets FOR EACH ROW BEGIN
    IF NOT (NEW.subject <=> OLD.subject) OR NOT (NEW.deleted_at <=> OLD.deleted_at) OR NOT (NEW.merged_into_id <=> OLD.merged_into_id) THEN
      ${rebuild('NEW.id')}
    ELSEIF ${COLUMNS_CHANGED} THEN
      UPDATE ${LISTED} SET ${SET_COLUMNS} WHERE ticket_id = NEW.id;
      UPDATE ${HIDDEN} SET ${SET_COLUMNS} WHERE ticket_id = NEW.id;
    END IF;
    IF NOT (NEW.subject <=> OLD.subject AND NEW.merged_into_id <=> OLD.merged_into_id) AND ${MOVING} IS NULL THEN
      IF OLD.merged_into_id IS NOT NULL THEN ${rebuild('OLD.merged_into_id')} END IF;
      IF NEW.merged_into_id IS NOT NULL AND NOT (NEW.merged_into_id <=> OLD.merged_into_id) THEN ${rebuild('NEW.merged_into_id')} END IF;
    END IF;
  END`,
  ticket_search_ticket_delete: `AFTER DELETE ON tickets FOR EACH ROW BEGIN
    DELETE FROM ${LISTED} WHERE ticket_id = OLD.id;
    DELETE FROM ${HIDDEN} WHERE ticket_id = OLD.id;
    ${deletePieces('OLD.id')};
    IF OLD.merged_into_id IS NOT NULL THEN ${rebuild('OLD.merged_into_id')} END IF;
  END`,
  // A new message is appended to the piece it falls in (no read of the others); an edit, a draft
  // published or withdrawn and a delete write the thread from the message's piece on; a move
  // writes both threads again (once for the whole statement under movingMessages). A draft's own
  // edit writes nothing (drafts are not indexed). The text compared as bytes: the column's
  // collation holds `a` equal to `A ` (case, trailing spaces), whose lengths differ.
  ticket_search_message_insert: `AFTER INSERT ON ticket_messages FOR EACH ROW BEGIN
    DECLARE len BIGINT UNSIGNED;
    IF NEW.is_draft = 0 THEN ${appendMessage(LISTED, HIDDEN)}
    END IF;
  END`,
  ticket_search_message_update: `AFTER UPDATE ON ticket_messages FOR EACH ROW BEGIN
    ${CHANGE_VARIABLES}
    IF NOT (NEW.ticket_id <=> OLD.ticket_id) THEN
      IF ${MOVING} IS NULL THEN ${rebuildThread('NEW.ticket_id')} ${rebuildThread('OLD.ticket_id')} END IF;
    ELSEIF NOT (CAST(NEW.text AS BINARY) <=> CAST(OLD.text AS BINARY) AND NEW.is_draft <=> OLD.is_draft) AND NOT (NEW.is_draft = 1 AND OLD.is_draft = 1) THEN
      ${changeMessage({ row: 'NEW', listed: LISTED, hidden: HIDDEN, whole: rebuildThread('NEW.ticket_id'), added: EDIT_ADDED, removed: EDIT_REMOVED })}
    END IF;
  END`,
  ticket_search_message_delete: `AFTER DELETE ON ticket_messages FOR EACH ROW BEGIN
    ${CHANGE_VARIABLES}
    IF OLD.is_draft = 0 THEN ${changeMessage({ row: 'OLD', listed: LISTED, hidden: HIDDEN, whole: rebuildThread('OLD.ticket_id'), added: '0', removed: 'LENGTH(OLD.text) + 1' })}
    END IF;
  END`,
};

const columnDefinition = (c: string) => (c === 'filter_words' ? `${c} VARCHAR(255) NOT NULL DEFAULT ''`
  : c === 'thread_length' ? `${c} BIGINT UNSIGNED NOT NULL DEFAULT 0` : `${c} INT UNSIGNED NOT NULL DEFAULT 0`);
const wordsIndex = (name: string) => `FULLTEXT INDEX ${name}_filter_words (filter_words) COMMENT 'tokenizer "TokenDelimit"'`;
const table = (name: string) => `CREATE TABLE IF NOT EXISTS ${name} (
    ticket_id INT UNSIGNED NOT NULL PRIMARY KEY,
    body LONGTEXT NOT NULL,
    ${['thread_length', ...COLS.split(', ')].map(columnDefinition).join(', ')},
    FULLTEXT INDEX ${name}_body (body) COMMENT 'normalizer "NormalizerAuto"',
    ${wordsIndex(name)}
  ) ENGINE=Mroonga DEFAULT CHARSET=utf8mb4`;

/** Writes every ticket's document and pieces again (the first fill), a chunk of ids per statement. */
export async function fillMroongaIndex(log: (line: string) => void = (l) => logger.info(l)): Promise<void> {
  const [{ max }] = await select<{ max: number | null }>('SELECT MAX(id) AS max FROM tickets');
  const started = Date.now();
  for (let from = 1; from <= Number(max ?? 0); from += FILL_CHUNK) {
    const range = { from, to: from + FILL_CHUNK - 1 };
    // REPLACE: a trigger may have written a ticket of the range since the fill began.
    for (const d of DOCUMENT_TABLES) await q(writeWholeDocuments({ ...d, tickets: 't.id BETWEEN :from AND :to' }), range);
    await q(deletePieces(':from', ':to'), range);
    // The threads longer than a piece (few), in pieces.
    const long = await select<{ id: number }>(
      `SELECT ticket_id AS id FROM ${LISTED} WHERE ticket_id BETWEEN :from AND :to AND thread_length > ${PIECE_BYTES}
        UNION ALL SELECT ticket_id FROM ${HIDDEN} WHERE ticket_id BETWEEN :from AND :to AND thread_length > ${PIECE_BYTES}`, range,
    );
    if (long.length) {
      const ids = { ids: long.map((r) => r.id) };
      for (const sql of documents('REPLACE', 't.id IN (:ids)', 'm.ticket_id IN (:ids)')) await q(sql, ids);
      await q(writePieces('REPLACE', 'm.ticket_id IN (:ids)'), ids);
    }
    if (range.to % 200_000 === 0) log(`search index: ${range.to} tickets (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  }
}

async function existingTriggers(): Promise<Map<string, string>> {
  const rows = await select<{ name: string; body: string }>(
    'SELECT TRIGGER_NAME AS name, ACTION_STATEMENT AS body FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME IN (:names)', { names: TRIGGERS },
  );
  return new Map(rows.map((r) => [r.name, r.body]));
}

/**
 * What a web process started on its own (the Procfile's line) lacks of the index `npm start`,
 * `npm run seed` and `npm run migrate` prepare: the plugin, the index's tables, its triggers.
 */
async function unpreparedMroonga(): Promise<string | null> {
  if (!(await pluginLoaded())) return "SEARCH_ENGINE=mroonga needs MariaDB's Mroonga plugin, which this server has not loaded (docs/performance.md, Search)";
  const names = [LISTED, HIDDEN, PIECES];
  const tables = new Set((await select<{ name: string }>(
    'SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (:names)', { names },
  )).map((r) => r.name));
  const triggers = await existingTriggers();
  const missing = [...names.filter((n) => !tables.has(n)), ...TRIGGERS.filter((t) => !triggers.has(t))];
  if (!missing.length) return null;
  return `SEARCH_ENGINE=mroonga, but the database has no Mroonga index yet (no ${missing.join(', ')}): run \`npm run seed\` (or \`npm run migrate\`), which prepares it, as \`npm start\` does`;
}

/** Under a named lock, so that processes starting together do not create the index twice. */
async function locked<T>(fn: () => Promise<T>): Promise<T> {
  const name = `search_index_${config().database.name}`;
  return sequelize().transaction(async (transaction) => {
    const [row] = await select<{ got: number }>('SELECT GET_LOCK(?, 600) AS got', [name], { transaction });
    if (Number(row?.got) !== 1) throw new Error('Could not take the search index lock within 600 seconds');
    try { return await fn(); } finally { await select('SELECT RELEASE_LOCK(?)', [name], { transaction }); }
  });
}

/**
 * Mroonga's `mroonga_command` function (Groonga's own commands from SQL), which the list's page
 * and count use: created when missing (the plugin's install.sql does the same).
 */
async function ensureCommandFunction(): Promise<void> {
  try {
    await select("SELECT mroonga_command('status') AS s");
  } catch (err) {
    if ((err as { parent?: { errno?: number } }).parent?.errno !== 1305) throw err;
    try {
      await q("CREATE FUNCTION IF NOT EXISTS mroonga_command RETURNS STRING SONAME 'ha_mroonga.so'");
    } catch (created) {
      throw new Error(`SEARCH_ENGINE=mroonga needs Mroonga's mroonga_command function: run CREATE FUNCTION mroonga_command RETURNS STRING SONAME 'ha_mroonga.so' as an administrator (${(created as Error).message})`);
    }
  }
}

/**
 * Adds the kept columns, `filter_words` (with its index) and `thread_length` to index tables made
 * before them; returns the tables that need the kept columns filled, and whether `thread_length`
 * was added (then every document is written again: they hold whole threads), both after the
 * triggers that write them are in place. The ALTERs are in place on Mroonga: an empty column, an
 * index built from what it holds.
 */
async function addDocumentColumns(): Promise<{ altered: string[]; threads: boolean }> {
  const have = await select<{ t: string; c: string }>(
    'SELECT TABLE_NAME AS t, COLUMN_NAME AS c FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (:names)', { names: [LISTED, HIDDEN] },
  );
  const indexes = await select<{ t: string; i: string }>(
    'SELECT DISTINCT TABLE_NAME AS t, INDEX_NAME AS i FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (:names)', { names: [LISTED, HIDDEN] },
  );
  const altered: string[] = [];
  let threads = false;
  for (const name of [LISTED, HIDDEN]) {
    const missing = ['thread_length', ...COLS.split(', ')].filter((c) => !have.some((h) => h.t === name && h.c === c));
    const changes = missing.map((c) => `ADD COLUMN ${columnDefinition(c)}`);
    if (!indexes.some((x) => x.t === name && x.i === `${name}_filter_words`)) changes.push(`ADD ${wordsIndex(name)}`);
    if (changes.length) await q(`ALTER TABLE ${name} ${changes.join(', ')}`);
    if (missing.some((c) => c !== 'thread_length')) altered.push(name);
    if (missing.includes('thread_length')) threads = true;
  }
  return { altered, threads };
}

/**
 * Adds the columns of a piece's start (threadPieces.ts) to a pieces table made before them; true
 * when it did (then every piece is written again, with them, after the triggers that keep them).
 */
async function addPieceColumns(): Promise<boolean> {
  const have = (await select<{ c: string }>(
    'SELECT COLUMN_NAME AS c FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = :name', { name: PIECES },
  )).map((r) => r.c);
  const missing = Object.keys(PIECE_START_COLUMNS).filter((c) => !have.includes(c));
  if (missing.length) await q(`ALTER TABLE ${PIECES} ${missing.map((c) => `ADD COLUMN ${c} ${PIECE_START_COLUMNS[c]}`).join(', ')}`);
  return missing.length > 0;
}

/** Copies the kept columns from the tickets into a table's documents, a chunk of ids per statement. */
async function fillDocumentColumns(name: string, log: (line: string) => void = (l) => logger.info(l)): Promise<void> {
  const [{ max }] = await select<{ max: number | null }>('SELECT MAX(id) AS max FROM tickets');
  const started = Date.now();
  for (let from = 1; from <= Number(max ?? 0); from += FILL_CHUNK) {
    const range = { from, to: from + FILL_CHUNK - 1 };
    await q(`UPDATE ${name} s JOIN tickets t ON t.id = s.ticket_id SET ${[...DOCUMENT_COLUMNS.map((c) => `s.${c} = t.${c}`), `s.filter_words = ${filterWords('t')}`].join(', ')}
      WHERE s.ticket_id BETWEEN :from AND :to`, range);
    if (range.to % 200_000 === 0) log(`search index: ${name}'s columns to ticket ${range.to} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  }
}

/** A trigger's statement as information_schema.TRIGGERS shows it (what follows FOR EACH ROW). */
const triggerBody = (name: string) => TRIGGER_SQL[name].split(/FOR EACH ROW\s+/)[1].trim();

/** Whether the server has loaded MariaDB's Mroonga plugin. */
async function pluginLoaded(): Promise<boolean> {
  const [engine] = await select<{ support: string }>("SELECT SUPPORT AS support FROM information_schema.ENGINES WHERE ENGINE = 'Mroonga'");
  return !!engine && ['YES', 'DEFAULT'].includes(engine.support);
}

/**
 * The index tables, triggers and function, created when missing (a trigger written differently
 * before is replaced); a new index is filled from the tickets (the triggers first, so that no
 * write made meanwhile is missed).
 */
async function prepareMroonga(): Promise<void> {
  if (!(await pluginLoaded())) {
    throw new Error("SEARCH_ENGINE=mroonga needs MariaDB's Mroonga plugin: apt-get install mariadb-plugin-mroonga, then INSTALL SONAME 'ha_mroonga' (docs/performance.md, Search)");
  }
  await ensureCommandFunction();
  await locked(async () => {
    const [{ n }] = await select<{ n: number }>('SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (:names)', { names: [LISTED, HIDDEN, PIECES] });
    await q(table(LISTED));
    await q(table(HIDDEN));
    await q(piecesTable);
    const starts = await addPieceColumns();
    const { altered: unfilled, threads } = await addDocumentColumns();
    const have = await existingTriggers();
    const replaced = TRIGGERS.filter((t) => have.get(t)?.trim() !== triggerBody(t));
    // CREATE OR REPLACE: a trigger is swapped in one statement, no write goes unseen meanwhile.
    for (const t of replaced) await q(`CREATE OR REPLACE TRIGGER ${t} ${TRIGGER_SQL[t]}`);
    // Written afresh: a new index; one made before the pieces (its documents hold whole threads)
    // or before their starts were kept; one whose triggers were written differently (an older
    // version's, or one that a process of it put back since), which may have left columns,
    // filter_words, the thread's length or its pieces behind. Else the columns an older index
    // lacked are filled.
    if (Number(n) < 3 || threads || starts || replaced.some((t) => have.has(t))) await fillMroongaIndex();
    else for (const name of unfilled) await fillDocumentColumns(name);
  });
}

/** The ids a filter names, as one comma-separated list (SQL yielding the text; `0` for none). */
const idListText = (f: IdFilter): BoundCondition => ('ids' in f
  ? sqlCondition`${(f.ids.length ? f.ids : [0]).map(integer).join(',')}`
  // The statement is in parentheses already (a derived table takes no second pair).
  : sqlCondition`IFNULL((SELECT GROUP_CONCAT(r.id) FROM ${f.rows} r), '0')`);

/**
 * One filter in Groonga's script syntax, checked on a result record by record: SQL that yields its
 * text (ids a statement selects are read in the same statement). Any of several ids is
 * `(c == 1 || c == 2)`: Groonga's in_values() costs twice as much per match.
 */
function groongaFilter(f: ColumnFilter): BoundCondition {
  if (!(FILTER_COLUMNS as readonly string[]).includes(f.column)) throw new Error(`not a kept column: ${f.column}`);
  if ('op' in f) return sqlCondition`${`${f.column} ${f.op} ${integer(f.value)}`}`;
  return sqlCondition`CONCAT(${`(${f.column} == `}, REPLACE(${idListText(f)}, ',', ${` || ${f.column} == `}), ')')`;
}

/**
 * The same filter looked up in the index of `filter_words` (`filter_words @ "status_id:3"`):
 * its tickets without reading any other record. As the text of a `--filter` value (quotes escaped).
 */
const indexedFilter = (f: IdFilter): BoundCondition => sqlCondition`CONCAT(
  ${`(filter_words @ \\"${f.column}:`}, REPLACE(${idListText(f)}, ',', ${`\\" || filter_words @ \\"${f.column}:`}), ${'\\")'})`;

/** No filter to start from (an impossible size). */
const NONE = '1e18';

/**
 * A page of listed tickets (their rows) and their exact count, in one statement of Groonga
 * `select`s (through `mroonga_command`): Groonga finds the words' matches, checks the filters on
 * them and counts them (the size of its result set: no row goes through MariaDB, unlike a
 * COUNT(*), which reads every match through the handler); the page's ids then join `tickets`.
 * A ticket whose later pieces (./threadPieces.ts) hold the words is a match too: those tickets'
 * ids are read from the pieces' index in SQL (few tickets have pieces) and looked up by key in
 * the same selects (`query(...) || _key == <id> || ...`), whose filters then apply to them alike.
 *
 * Sorting every match for a page is half the cost of a common word (700,000 keys at 1M tickets):
 * so the page is first looked for among the newest (or oldest) ids only, a window of
 * `WINDOW_PER_TICKET` ids per ticket the page reaches (`_key >= max(id) - w`), where Groonga checks
 * the words on a few records. When the window holds at least `start + limit` matches, those are
 * the page (every id outside it comes after them in the order), and the count is a `select`
 * without a sort; otherwise one `select` counts and sorts every match.
 *
 * Where the count (and the sorting select) starts: from the words (their matches, then each filter
 * checked on them one by one), or from the smallest filter found in the index of `filter_words`,
 * then the words looked up among its tickets, then the other filters checked one by one: the
 * rule of ./filterStart.ts (startsFromFilter), written here in SQL. Filter sizes come from the
 * list's counters; a filter that every listed ticket passes (it holds `total`) is not checked.
 *
 * One derived table (LIMIT 1: materialised, each expression run once) holds the filters' texts
 * and sizes, the number check and the window; JSON_TABLE reads the ids of the answer that follows
 * from it. MariaDB evaluates only the branch of IF() and CASE it takes. `--cache no`: Groonga's
 * result cache is one for the whole server, keyed by the command alone, so two databases with the
 * same table names would answer each other's searches from it.
 */
async function listedPage(s: ListedSearch): Promise<ListedPage | null> {
  const query = groongaQuery(s.booleanQuery);
  // No match escalation: a lookup that finds nothing exact is not retried as a prefix one (Groonga's
  // default for the first lookup of a select, which found user_id:12 for user_id:1 in filter_words).
  const head = `select --cache no --match_escalation_threshold -1 --table ${LISTED}`;
  const page = ` --sort_keys ${s.desc ? '-_key' : '_key'} --offset ${integer(s.offset)} --limit ${integer(s.limit)} --output_columns _key`;
  const countOnly = ' --limit 0 --output_columns _key';
  // In a filter, the words are query()'s second argument: a script string inside the command's value.
  const words = commandValue(`query("body", ${commandValue(query)})`).slice(1, -1);
  // Or a ticket with a later piece that holds them (./threadPieces.ts): `|| _key == <id>` for each,
  // found in the same statement (`mo.more`: empty when none; a key lookup each in the select).
  const wordsOrPieces = (more: string) => sqlCondition`CONCAT(${`(${words}`}, ${trusted(more)}, ')')`;
  const piecesFrom = sqlFragment`(SELECT IFNULL((SELECT GROUP_CONCAT(DISTINCT CONCAT(' || _key == ', ${trusted(ticketOfPiece('p'))}) SEPARATOR '')
    FROM ${trusted(PIECES)} p WHERE MATCH (body) AGAINST (${query} IN BOOLEAN MODE)), '') AS more) mo`;
  const reach = s.offset + s.limit;
  const width = reach * WINDOW_PER_TICKET;
  const windowed = reach <= WINDOW_MAX_REACH;
  const indexable = indexableFilters(s.filters);
  const sizes = indexable.map(filterSize);
  const text = (v: string) => sqlCondition`${v}`;
  /** The checked filters (but `except`) as one --filter value, joined with && (CONCAT_WS leaves out a NULL: a filter every listed ticket passes). */
  const and = (items: BoundCondition[]) => sqlCondition`CONCAT_WS(' && ', ${list(items)})`;

  // w, the one derived table (LIMIT 1: materialised, each of its expressions run once): each
  // filter's text (checked: c<i>; looked up in the index: x<j>), the indexable filters' sizes (n<j>,
  // with the counters' total and the filters' joint size), the number check, the window's answer.
  const checkedText = s.filters.map((f) => {
    const j = indexable.indexOf(f as IdFilter);
    return j >= 0 && sizes[j].counter ? sqlCondition`IF(${trusted(`k.n${j}`)} = k.total, NULL, ${groongaFilter(f)})` : groongaFilter(f);
  });
  const parts: BoundCondition[] = [];
  const column = (name: string, c: BoundCondition) => parts.push(sqlFragment`${c} AS ${trusted(name)}`);
  checkedText.forEach((c, i) => column(`c${i}`, c));
  indexable.forEach((f, j) => column(`x${j}`, indexedFilter(f)));
  column('numbered', sqlCondition`(SELECT COUNT(*) FROM tickets WHERE number = ${s.term})`);
  column('more', trusted('mo.more'));
  column('words', wordsOrPieces('mo.more'));
  let counters = sqlFragment``;
  if (indexable.length) {
    counters = sqlFragment`, (SELECT ${list(counterSums(sizes))} FROM ticket_list_counts WHERE state = 0) k`;
    parts.push(trusted('k.*'));
    sizes.forEach((z, j) => { if (z.count) column(`n${j}`, z.count); });
  }
  // The window: among the ids at the list's end only (the filters' texts again: one level has no aliases).
  const edge = s.desc ? sqlCondition`(SELECT GREATEST(CAST(MAX(id) AS SIGNED) - ${width}, 0) FROM tickets)` : sqlCondition`(SELECT CAST(MIN(id) AS SIGNED) + ${width} FROM tickets)`;
  column('result', windowed
    ? sqlCondition`mroonga_command(CONCAT(${`${head} --filter "_key ${s.desc ? '>=' : '<='} `}, IFNULL(${edge}, 0), ' && ', ${and([wordsOrPieces('mo.more'), ...checkedText])}, ${`"${page}`}))`
    : sqlCondition`NULL`);

  const checked = (except?: number) => s.filters.flatMap((_, i) => (i === except ? [] : [trusted(`w.c${i}`)]));
  /**
   * The select starting from the words' matches, each filter then checked on them; with tickets
   * whose later pieces hold the words, the words and those keys in the filter instead.
   */
  const fromWords = (tail: string) => {
    const matched = `${head} --match_columns body --query ${commandValue(query)}`;
    const alone = s.filters.length ? sqlCondition`CONCAT(${`${matched} --filter "`}, ${and(checked())}, ${`"${tail}`})` : text(matched + tail);
    return sqlCondition`IF(w.more = '', ${alone}, CONCAT(${`${head} --filter "`}, ${and([trusted('w.words'), ...checked()])}, ${`"${tail}`}))`;
  };
  /** The select starting from indexed filter j's tickets, the words then looked up among them, the other filters checked. */
  const fromFilter = (j: number, tail: string) => sqlCondition`CONCAT(${`${head} --filter "`},
    ${and([trusted(`w.x${j}`), trusted('w.words'), ...checked(s.filters.indexOf(indexable[j]))])}, ${`"${tail}`})`;
  // Where the select starts (0: the words; j + 1: indexed filter j): the smallest filter that holds fewer tickets than the words.
  let start = sqlCondition`0`;
  if (indexable.length) {
    const share = windowed ? `IFNULL(JSON_VALUE(w.result, '$[0][0][0]'), 0) / ${width}` : '0';
    const candidate = (j: number) => trusted(`IF(w.n${j} <= ${SMALL_FILTER} OR w.n${j} * w.joint < ${share} * w.total * w.total, w.n${j}, ${NONE})`);
    const smallest = sqlCondition`LEAST(${list([trusted(NONE), ...indexable.map((_, j) => candidate(j))])})`;
    start = sqlCondition`CASE ${smallest} WHEN ${trusted(NONE)} THEN 0 ${list(indexable.map((_, j) => sqlFragment`WHEN ${candidate(j)} THEN ${trusted(String(j + 1))}`), ' ')} END`;
  }
  const startingAt = (tail: string) => (indexable.length
    ? sqlCondition`CASE ${start} ${list(indexable.map((_, j) => sqlFragment`WHEN ${trusted(String(j + 1))} THEN ${fromFilter(j, tail)}`), ' ')} ELSE ${fromWords(tail)} END`
    : fromWords(tail));
  // Groonga's answer, `[[[count], [["_key", "UInt32"]], [id], ...]]`: the window's with the count
  // select's number when the window holds the page, else the select that counts and sorts every
  // match. Its rows (JSON_TABLE, in order): the count, the header, the page's ids; then the page's
  // tickets by primary key.
  const enough = sqlCondition`JSON_VALUE(w.result, '$[0][0][0]') >= ${trusted(String(reach))}`;
  const answer = sqlCondition`IF(${enough},
    JSON_SET(w.result, '$[0][0][0]', CAST(JSON_VALUE(mroonga_command(${startingAt(countOnly)}), '$[0][0][0]') AS UNSIGNED)),
    mroonga_command(${startingAt(page)}))`;
  const statement = sqlFragment`SELECT j.n AS _n, j.id AS _id, w.numbered AS _numbered, ${start} AS _start, t.*
    FROM (SELECT ${list(parts)} FROM ${piecesFrom}${counters} LIMIT 1) w
    JOIN JSON_TABLE(${answer}, '$[0][*]' COLUMNS (n FOR ORDINALITY, id INT UNSIGNED PATH '$[0]')) j
    LEFT JOIN tickets t ON j.n > 2 AND t.id = j.id`;
  return pageOf(await select<PageRow>(sqlText(statement), statement.replacements), indexable);
}

/** A row of JSON_TABLE over Groonga's answer (the count, the header, then each id with its ticket), with the number check and where the select started. */
type PageRow = { _n: number; _id: number | null; _numbered: number; _start: number } & Record<string, unknown>;

/**
 * The page's tickets in the answer's order and the count, and the column of the filter the select
 * started from (`words`: the words); null for a ticket's number.
 */
function pageOf(rows: PageRow[], indexable: IdFilter[]): ListedPage | null {
  const sorted = [...rows].sort((a, b) => a._n - b._n);
  const [first] = sorted;
  if (!first) throw new Error('mroonga_command answered nothing');
  if (Number(first._numbered) > 0) return null;
  return {
    rows: sorted.filter((r) => r._n > 2 && r.id !== null).map(({ _n, _id, _numbered, _start, ...ticket }) => ticket),
    count: Number(first._id),
    start: Number(first._start) > 0 ? indexable[Number(first._start) - 1].column : 'words',
  };
}
/**
 * Each database connection's session, with SEARCH_ENGINE=mroonga (a Sequelize `afterConnect`
 * hook, src/wiring.ts): no match escalation on the SQL path either (`MATCH ... AGAINST`: a
 * phrase, an exclusion, OR, the trash, another order), as `listedPage`'s selects
 * (`--match_escalation_threshold -1`). Groonga's default retries a lookup that found nothing
 * as a prefix one, so `hp420` found `hp4200` once `-tag:x` or `OR y` sent it this way, and
 * nothing alone. A server without the plugin has no such variable: left to `prepare`, which
 * says what to install.
 */
export async function mroongaSession(connection: { query(sql: string): Promise<unknown> }): Promise<void> {
  if (config().searchEngine !== 'mroonga') return;
  // The keys of the tickets whose later pieces match (listedPage) are one GROUP_CONCAT: cut at
  // the default 1 MB, a key could be cut into another ticket's.
  await connection.query(`SET SESSION group_concat_max_len = GREATEST(@@group_concat_max_len, ${GROUP_CONCAT_MAX})`);
  try {
    await connection.query('SET SESSION mroonga_match_escalation_threshold = -1');
  } catch (err) {
    if ((err as { errno?: number }).errno !== 1193) throw err;
  }
}

/**
 * Runs `move` (statements of `transaction` that move messages between the tickets `tickets`, and
 * tickets into or out of a merge with them) with the index's per-row writes of moved messages and
 * of merge targets held back, then writes those tickets' documents and pieces once (MOVING). The
 * variable is cleared however `move` ends: a connection back in the pool must never hold it, or a
 * later move on it would go unindexed.
 */
async function movingMessages<T>(transaction: Transaction, tickets: number[], move: () => Promise<T>): Promise<T> {
  const run = (sql: string, replacements: Record<string, unknown> = { ids: tickets }) => sequelize().query(sql, { replacements, transaction, type: QueryTypes.RAW });
  await run(`SET ${MOVING} = 1`);
  let moved: T;
  try {
    moved = await move();
  } finally {
    await run(`SET ${MOVING} = NULL`);
  }
  await run(`DELETE FROM ${LISTED} WHERE ticket_id IN (:ids)`);
  await run(`DELETE FROM ${HIDDEN} WHERE ticket_id IN (:ids)`);
  for (const sql of documents('INSERT', 't.id IN (:ids)', 'm.ticket_id IN (:ids)')) await run(sql);
  for (const id of new Set(tickets)) await run(deletePieces(':id'), { id });
  await run(writePieces('INSERT', 'm.ticket_id IN (:ids)'));
  return moved;
}

export const mroongaSearch: SearchEngine = {
  name: 'mroonga',
  textCondition: (term, booleanQuery) => sqlCondition`id IN (SELECT id FROM (
      SELECT COALESCE(merged_into_id, id) AS id FROM tickets WHERE number = ${term}
      UNION SELECT ticket_id FROM ticket_search WHERE MATCH (body) AGAINST (${groongaQuery(booleanQuery)} IN BOOLEAN MODE)
      UNION SELECT ticket_id FROM ticket_search_hidden WHERE MATCH (body) AGAINST (${groongaQuery(booleanQuery)} IN BOOLEAN MODE)
      UNION SELECT ${trusted(ticketOfPiece('p'))} FROM ${trusted(PIECES)} p WHERE MATCH (body) AGAINST (${groongaQuery(booleanQuery)} IN BOOLEAN MODE)
    ) AS matches)`,
  listedPage,
  movingMessages,
  prepare: prepareMroonga,
  unprepared: unpreparedMroonga,
};
