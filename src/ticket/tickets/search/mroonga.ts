import { QueryTypes } from 'sequelize';
import { config } from '../../../config';
import { sequelize } from '../../../db/sequelize';
import { sqlCondition, sqlText, type BoundCondition } from '../../../db/sql';
import { logger } from '../../../logger';
import { FILTER_COLUMNS } from './columns';
import type { ColumnFilter, ListedSearch, SearchEngine } from './engine';

/**
 * SEARCH_ENGINE=mroonga: MariaDB's Mroonga storage engine (Groonga inside the server) holds one
 * document per ticket: its subject, the subjects of the tickets merged into it, and the text of
 * its messages (drafts left out), in `ticket_search` while the ticket is listed and in
 * `ticket_search_hidden` while it is trashed or merged. Triggers on `tickets` and
 * `ticket_messages` keep both in the statement that writes a ticket or a message, whatever writes
 * it (the API, the mailbox worker, a merge, a hand-written UPDATE or DELETE).
 *
 * Beside the text, each document keeps some of the ticket's columns (./columns.ts), so that the
 * list's page and exact count for words with field terms and column filters are one Groonga
 * `select` (`listedPage`). Two tables rather than a `listed` column: the list's searches are over
 * the listed tickets, which then need no filter at all.
 *
 * What differs from InnoDB: every word must be somewhere in the ticket (its subject or any
 * message), not all in one message; a phrase may run from one message into the next. Mroonga
 * tables are not transactional: a write rolled back after its statement ran leaves the index as
 * the statement left it until the ticket is written again (`search:reindex` rebuilds it all).
 * A Galera cluster replicates InnoDB only: this engine is for one server.
 */

const LISTED = 'ticket_search';
const HIDDEN = 'ticket_search_hidden';
const TRIGGERS = [
  'ticket_search_ticket_insert', 'ticket_search_ticket_update', 'ticket_search_ticket_delete',
  'ticket_search_message_insert', 'ticket_search_message_update', 'ticket_search_message_delete',
];
/** Tickets per statement of the first fill. */
const FILL_CHUNK = 20_000;
/**
 * The ticket's columns kept beside its text (./columns.ts), so that a search's field terms and the
 * list's filters are checked inside Groonga on the matches (no index of their own: Groonga checks
 * them on the matches one by one, which costs less than walking another index).
 */
const DOCUMENT_COLUMNS = FILTER_COLUMNS;
const COLS = DOCUMENT_COLUMNS.join(', ');
const colsOf = (alias: string) => DOCUMENT_COLUMNS.map((c) => `${alias}.${c}`).join(', ');

const q = (sql: string, replacements?: Record<string, unknown> | unknown[]) => sequelize().query(sql, { replacements, type: QueryTypes.RAW });
const select = <T extends object>(sql: string, replacements?: Record<string, unknown> | unknown[]) =>
  sequelize().query<T>(sql, { replacements, type: QueryTypes.SELECT });

/** A ticket's document, for the row `t` of tickets. */
const DOCUMENT = `CONCAT_WS(' ', t.subject,
    (SELECT GROUP_CONCAT(s.subject SEPARATOR ' ') FROM tickets s WHERE s.merged_into_id = t.id),
    (SELECT GROUP_CONCAT(m.text ORDER BY m.id SEPARATOR ' ') FROM ticket_messages m WHERE m.ticket_id = t.id AND m.is_draft = 0))`;
const IS_LISTED = 't.deleted_at IS NULL AND t.merged_into_id IS NULL';

/** Trigger statements that write ticket `id`'s document again, in the table its state puts it in. */
const rebuild = (id: string) => `
  DELETE FROM ${LISTED} WHERE ticket_id = ${id};
  DELETE FROM ${HIDDEN} WHERE ticket_id = ${id};
  INSERT INTO ${LISTED} (ticket_id, body, ${COLS}) SELECT t.id, ${DOCUMENT}, ${colsOf('t')} FROM tickets t WHERE t.id = ${id} AND ${IS_LISTED};
  INSERT INTO ${HIDDEN} (ticket_id, body, ${COLS}) SELECT t.id, ${DOCUMENT}, ${colsOf('t')} FROM tickets t WHERE t.id = ${id} AND NOT (${IS_LISTED});`;

/** Whether a trigger's NEW row changed any kept column (then written to the document, the text untouched). */
const COLUMNS_CHANGED = DOCUMENT_COLUMNS.map((c) => `NOT (NEW.${c} <=> OLD.${c})`).join(' OR ');
const SET_COLUMNS = DOCUMENT_COLUMNS.map((c) => `${c} = NEW.${c}`).join(', ');

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
    IF NOT (NEW.subject <=> OLD.subject AND NEW.merged_into_id <=> OLD.merged_into_id) THEN
      IF OLD.merged_into_id IS NOT NULL THEN ${rebuild('OLD.merged_into_id')} END IF;
      IF NEW.merged_into_id IS NOT NULL AND NOT (NEW.merged_into_id <=> OLD.merged_into_id) THEN ${rebuild('NEW.merged_into_id')} END IF;
    END IF;
  END`,
  ticket_search_ticket_delete: `AFTER DELETE ON tickets FOR EACH ROW BEGIN
    DELETE FROM ${LISTED} WHERE ticket_id = OLD.id;
    DELETE FROM ${HIDDEN} WHERE ticket_id = OLD.id;
    IF OLD.merged_into_id IS NOT NULL THEN ${rebuild('OLD.merged_into_id')} END IF;
  END`,
  // A new message is appended (no read of the others); any other change writes the document again.
  ticket_search_message_insert: `AFTER INSERT ON ticket_messages FOR EACH ROW
    IF NEW.is_draft = 0 THEN
      UPDATE ${LISTED} SET body = CONCAT(body, ' ', NEW.text) WHERE ticket_id = NEW.ticket_id;
      UPDATE ${HIDDEN} SET body = CONCAT(body, ' ', NEW.text) WHERE ticket_id = NEW.ticket_id;
    END IF`,
  ticket_search_message_update: `AFTER UPDATE ON ticket_messages FOR EACH ROW BEGIN
    IF NOT (NEW.text <=> OLD.text AND NEW.is_draft <=> OLD.is_draft AND NEW.ticket_id <=> OLD.ticket_id) THEN
      ${rebuild('NEW.ticket_id')}
    END IF;
    IF NOT (NEW.ticket_id <=> OLD.ticket_id) THEN ${rebuild('OLD.ticket_id')} END IF;
  END`,
  ticket_search_message_delete: `AFTER DELETE ON ticket_messages FOR EACH ROW
    IF OLD.is_draft = 0 THEN BEGIN ${rebuild('OLD.ticket_id')} END; END IF`,
};

/**
 * The boolean query with its phrases first: Groonga's parser drops a phrase that follows a prefix
 * term (`+word* +"a phrase"` finds nothing, `+"a phrase" +word*` finds it). Every term is required
 * (`+`), so the order means nothing else.
 */
function groongaQuery(booleanQuery: string): string {
  // TokenBigram splits a word where letters meet digits (`hp4200`: `hp`, `4200`), and then finds
  // nothing for its prefix form (`+hp4200*`): such a word is looked up whole.
  const terms = (booleanQuery.match(/[+-]?"[^"]*"|\S+/g) ?? []).map((t) => (/\p{L}\p{N}|\p{N}\p{L}/u.test(t) ? t.replace(/\*$/, '') : t));
  return [...terms.filter((t) => t.includes('"')), ...terms.filter((t) => !t.includes('"'))].join(' ');
}

const columnDefinition = (c: string) => `${c} INT UNSIGNED NOT NULL DEFAULT 0`;
const table = (name: string) => `CREATE TABLE IF NOT EXISTS ${name} (
    ticket_id INT UNSIGNED NOT NULL PRIMARY KEY,
    body LONGTEXT NOT NULL,
    ${DOCUMENT_COLUMNS.map(columnDefinition).join(', ')},
    FULLTEXT INDEX ${name}_body (body) COMMENT 'normalizer "NormalizerAuto"'
  ) ENGINE=Mroonga DEFAULT CHARSET=utf8mb4`;

/** Writes every ticket's document again (the first fill; `search:reindex`), a chunk of ids per statement. */
export async function fillMroongaIndex(log: (line: string) => void = (l) => logger.info(l)): Promise<void> {
  const [{ max }] = await select<{ max: number | null }>('SELECT MAX(id) AS max FROM tickets');
  const started = Date.now();
  for (let from = 1; from <= Number(max ?? 0); from += FILL_CHUNK) {
    const range = { from, to: from + FILL_CHUNK - 1 };
    // REPLACE: a trigger may have written a ticket of the range since the fill began.
    await q(`REPLACE INTO ${LISTED} (ticket_id, body, ${COLS}) SELECT t.id, ${DOCUMENT}, ${colsOf('t')} FROM tickets t WHERE t.id BETWEEN :from AND :to AND ${IS_LISTED}`, range);
    await q(`REPLACE INTO ${HIDDEN} (ticket_id, body, ${COLS}) SELECT t.id, ${DOCUMENT}, ${colsOf('t')} FROM tickets t WHERE t.id BETWEEN :from AND :to AND NOT (${IS_LISTED})`, range);
    if (range.to % 200_000 === 0) log(`search index: ${range.to} tickets (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  }
}

async function existingTriggers(): Promise<Map<string, string>> {
  const rows = await select<{ name: string; body: string }>(
    'SELECT TRIGGER_NAME AS name, ACTION_STATEMENT AS body FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME IN (:names)', { names: TRIGGERS },
  );
  return new Map(rows.map((r) => [r.name, r.body]));
}

/** Under a named lock, so that processes starting together do not create the index twice. */
async function locked<T>(fn: () => Promise<T>): Promise<T> {
  const name = `search_index_${config().database.name}`;
  return sequelize().transaction(async (transaction) => {
    const [row] = await sequelize().query<{ got: number }>('SELECT GET_LOCK(?, 600) AS got', { replacements: [name], type: QueryTypes.SELECT, transaction });
    if (Number(row?.got) !== 1) throw new Error('Could not take the search index lock within 600 seconds');
    try { return await fn(); } finally { await sequelize().query('SELECT RELEASE_LOCK(?)', { replacements: [name], type: QueryTypes.SELECT, transaction }); }
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
 * Adds the kept columns to index tables made before them; returns the tables that need them
 * filled (after the triggers that write them are in place).
 */
async function addDocumentColumns(): Promise<string[]> {
  const have = await select<{ t: string; c: string }>(
    'SELECT TABLE_NAME AS t, COLUMN_NAME AS c FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (:names)', { names: [LISTED, HIDDEN] },
  );
  const altered: string[] = [];
  for (const name of [LISTED, HIDDEN]) {
    const missing = DOCUMENT_COLUMNS.filter((c) => !have.some((h) => h.t === name && h.c === c));
    if (!missing.length) continue;
    await q(`ALTER TABLE ${name} ${missing.map((c) => `ADD COLUMN ${columnDefinition(c)}`).join(', ')}`);
    altered.push(name);
  }
  return altered;
}

/** Copies the kept columns from the tickets into a table's documents, a chunk of ids per statement. */
async function fillDocumentColumns(name: string): Promise<void> {
  const [{ max }] = await select<{ max: number | null }>('SELECT MAX(id) AS max FROM tickets');
  for (let from = 1; from <= Number(max ?? 0); from += FILL_CHUNK) {
    await q(`UPDATE ${name} s JOIN tickets t ON t.id = s.ticket_id SET ${DOCUMENT_COLUMNS.map((c) => `s.${c} = t.${c}`).join(', ')}
      WHERE s.ticket_id BETWEEN :from AND :to`, { from, to: from + FILL_CHUNK - 1 });
  }
}

/** A trigger's statement as information_schema.TRIGGERS shows it (what follows FOR EACH ROW). */
const triggerBody = (name: string) => TRIGGER_SQL[name].split(/FOR EACH ROW\s+/)[1].trim();

/**
 * The index tables, triggers and function, created when missing (a trigger written differently
 * before is replaced); a new index is filled from the tickets (the triggers first, so that no
 * write made meanwhile is missed).
 */
async function prepareMroonga(): Promise<void> {
  const [engine] = await select<{ support: string }>("SELECT SUPPORT AS support FROM information_schema.ENGINES WHERE ENGINE = 'Mroonga'");
  if (!engine || !['YES', 'DEFAULT'].includes(engine.support)) {
    throw new Error("SEARCH_ENGINE=mroonga needs MariaDB's Mroonga plugin: apt-get install mariadb-plugin-mroonga, then INSTALL SONAME 'ha_mroonga' (docs/performance.md, Search)");
  }
  await ensureCommandFunction();
  await locked(async () => {
    const [{ n }] = await select<{ n: number }>('SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (:names)', { names: [LISTED, HIDDEN] });
    await q(table(LISTED));
    await q(table(HIDDEN));
    const unfilled = await addDocumentColumns();
    const have = await existingTriggers();
    // CREATE OR REPLACE: a trigger is swapped in one statement, no write goes unseen meanwhile.
    for (const t of TRIGGERS) if (have.get(t)?.trim() !== triggerBody(t)) await q(`CREATE OR REPLACE TRIGGER ${t} ${TRIGGER_SQL[t]}`);
    if (Number(n) < 2) await fillMroongaIndex();
    else for (const name of unfilled) await fillDocumentColumns(name);
  });
}

/** A value in a Groonga command: in double quotes, with `"` and `\\` escaped. */
const commandValue = (v: string) => `"${v.replace(/["\\]/g, (c) => `\\${c}`)}"`;

const integer = (n: number) => {
  if (!Number.isSafeInteger(n)) throw new Error(`not an integer: ${n}`);
  return String(n);
};

/**
 * One filter in Groonga's script syntax: SQL that yields its text (ids a statement selects are read
 * in the same statement). Any of several ids is `(c == 1 || c == 2)`: Groonga's in_values() costs
 * twice as much per match.
 */
function groongaFilter(f: ColumnFilter): BoundCondition {
  if (!(FILTER_COLUMNS as readonly string[]).includes(f.column)) throw new Error(`not a kept column: ${f.column}`);
  if ('op' in f) return sqlCondition`${`${f.column} ${f.op} ${integer(f.value)}`}`;
  if ('ids' in f) return sqlCondition`${`(${(f.ids.length ? f.ids : [0]).map((id) => `${f.column} == ${integer(id)}`).join(' || ')})`}`;
  return sqlCondition`CONCAT(${`(${f.column} == `}, REPLACE(IFNULL(${f.idList}, '0'), ',', ${` || ${f.column} == `}), ')')`;
}

/** Whether the words are also a ticket's number (then the general path answers: pageOf). */
const NUMBERED = '(SELECT COUNT(*) FROM tickets WHERE number = :term) AS numbered';

/** Pages reaching further than this (`start + limit`) skip the window below. */
const WINDOW_MAX_REACH = 1_000;
/** The window: this many ticket ids per ticket the page reaches. */
const WINDOW_PER_TICKET = 20;

/**
 * A page of listed tickets and their exact count, in one statement of Groonga `select`s (through
 * `mroonga_command`): Groonga finds the words' matches, checks the filters on them and counts them
 * (the size of its result set: no row goes through MariaDB, unlike a COUNT(*), which reads every
 * match through the handler).
 *
 * Sorting every match for a page is half the cost of a common word (700,000 keys at 1M tickets):
 * so the page is first looked for among the newest (or oldest) ids only, a window of
 * `WINDOW_PER_TICKET` ids per ticket the page reaches (`_key >= max(id) - w`), where Groonga checks
 * the words on a few records. When the window holds at least `start + limit` matches, those are
 * the page (every id outside it comes after them in the order), and the count is a `select`
 * without a sort; otherwise one `select` counts and sorts every match. MariaDB evaluates only the
 * branch of IF() it takes, and the derived table (LIMIT 1: materialised) runs the window once.
 * `--cache no`: Groonga's result cache is one for the whole server, keyed by the command alone, so
 * two databases with the same table names would answer each other's searches from it.
 */
async function listedPage(s: ListedSearch): Promise<{ ids: number[]; count: number } | null> {
  const query = groongaQuery(s.booleanQuery);
  const filter = s.filters.map(groongaFilter).reduce<BoundCondition | null>((all, f) => (all ? sqlCondition`CONCAT(${all}, ' && ', ${f})` : f), null);
  const page = ` --sort_keys ${s.desc ? '-_key' : '_key'} --offset ${integer(s.offset)} --limit ${integer(s.limit)} --output_columns _key`;
  const head = `select --cache no --table ${LISTED}`;
  const matched = `${head} --match_columns body --query ${commandValue(query)}`;
  const withFilter = (start: string, end: string) => (filter ? sqlCondition`CONCAT(${`${start} --filter "`}, ${filter}, ${`"${end}`})` : sqlCondition`${start + end}`);
  const full = withFilter(matched, page);
  const reach = s.offset + s.limit;
  if (reach > WINDOW_MAX_REACH) {
    const [row] = await select<SelectRow>(
      `SELECT mroonga_command(${sqlText(full)}) AS result, NULL AS counted, ${NUMBERED}`,
      { ...full.replacements, term: s.term },
    );
    return pageOf(row);
  }

  const count = withFilter(matched, ' --limit 0 --output_columns _key');
  // In the filter, the words are query()'s second argument: a script string inside the command's value.
  const words = commandValue(`query("body", "${query.replace(/["\\]/g, (c) => `\\${c}`)}")`).slice(1, -1);
  const width = reach * WINDOW_PER_TICKET;
  const edge = s.desc ? sqlCondition`(SELECT GREATEST(CAST(MAX(id) AS SIGNED) - ${width}, 0) FROM tickets)` : sqlCondition`(SELECT CAST(MIN(id) AS SIGNED) + ${width} FROM tickets)`;
  const rest = filter ? sqlCondition`CONCAT(${` && ${words} && `}, ${filter})` : sqlCondition`${` && ${words}`}`;
  const bounded = sqlCondition`CONCAT(${`${head} --filter "_key ${s.desc ? '>=' : '<='} `}, IFNULL(${edge}, 0), ${rest}, ${`"${page}`})`;
  const enough = sqlCondition`JSON_VALUE(w.result, '$[0][0][0]') >= ${reach}`;
  const [row] = await select<SelectRow>(
    `SELECT IF(${sqlText(enough)}, w.result, mroonga_command(${sqlText(full)})) AS result,
       IF(${sqlText(enough)}, mroonga_command(${sqlText(count)}), NULL) AS counted,
       ${NUMBERED}
     FROM (SELECT mroonga_command(${sqlText(bounded)}) AS result LIMIT 1) w`,
    { ...full.replacements, ...count.replacements, ...bounded.replacements, ...enough.replacements, term: s.term },
  );
  return pageOf(row);
}

interface SelectRow { result: string | Buffer | null; counted: string | Buffer | null; numbered: number }
/** Groonga's answer: `[[[count], [["_key", "UInt32"]], [id], [id], ...]]`. */
type Selected = [[[number], unknown, ...Array<[number]>]];

/** The page's ids and the count (the count `select`'s, when the page came from the window); null for a ticket's number. */
function pageOf(row: SelectRow): { ids: number[]; count: number } | null {
  if (Number(row.numbered) > 0) return null;
  if (row.result === null) throw new Error('mroonga_command answered nothing');
  const [[[count], , ...ids]] = JSON.parse(String(row.result)) as Selected;
  return { ids: ids.map(([id]) => id), count: row.counted === null ? count : (JSON.parse(String(row.counted)) as Selected)[0][0][0] };
}
export const mroongaSearch: SearchEngine = {
  name: 'mroonga',
  textCondition: (term, booleanQuery) => sqlCondition`id IN (SELECT id FROM (
      SELECT COALESCE(merged_into_id, id) AS id FROM tickets WHERE number = ${term}
      UNION SELECT ticket_id FROM ticket_search WHERE MATCH (body) AGAINST (${groongaQuery(booleanQuery)} IN BOOLEAN MODE)
      UNION SELECT ticket_id FROM ticket_search_hidden WHERE MATCH (body) AGAINST (${groongaQuery(booleanQuery)} IN BOOLEAN MODE)
    ) AS matches)`,
  listedPage,
  prepare: prepareMroonga,
};
