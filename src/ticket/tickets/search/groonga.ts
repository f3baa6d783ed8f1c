import { select } from '../../../db/select';
import { sqlFragment, sqlText, trusted, type BoundCondition } from '../../../db/sql';
import { logger } from '../../../logger';
import type { ColumnFilter, ListedPage, ListedSearch, SearchEngine } from './engine';
import { groongaInteger as integer, groongaQuery, groongaString } from './groongaQuery';
import { createGroongaTables, groongaCommand, groongaTables } from './groongaServer';
import { innodbSearch } from './innodb';

/**
 * SEARCH_ENGINE=groonga: a Groonga server (Groonga's own HTTP server, the engine inside Mroonga,
 * on this machine or one of its own) holds a document per listed ticket: its subject, the subjects
 * of the tickets merged into it, the text of its messages, and the ticket's columns a search may
 * be narrowed by (./columns.ts). The scheduler worker writes them from the tickets' change stream
 * (./groongaIndex.ts), a second or two behind the database (EXPORT_SETTLE_SECONDS), and nothing
 * is missed: the stream holds back at a change not yet committed, and deletions come as tombstones.
 *
 * The list's searches of words with field terms and column filters (./listed.ts), in id order, are
 * answered by the server: the page's ids and the exact count of the documents that match (one
 * sorted select, or two with the window: windowPage); the page's tickets are then read from the
 * database by primary key. Every other search (a phrase, an exclusion, OR, a tag or an assignee
 * beside the words, another order, the trash) is the SQL path's, on InnoDB's FULLTEXT indexes
 * (always kept): so is every search while the server cannot answer (logged), slower for common
 * words but never wrong.
 *
 * The index lags the database by a second or two: a ticket changed since has its page row as it is
 * now (a ticket gone from the list, or that no longer passes a filter, is left out of the page),
 * and the count is the index's.
 */

/** A filter in Groonga's script syntax; `ids`: the filter's ids (those its statement selected for `rows`). */
function scriptOf(f: ColumnFilter, ids: number[] | undefined): string {
  if ('op' in f) return `${f.column} ${f.op} ${integer(f.value)}`;
  return `(${ids!.map((id) => `${f.column} == ${integer(id)}`).join(' || ')})`;
}

/** Whether a ticket's row (as it is now) passes a filter. */
function passes(row: Record<string, unknown>, f: ColumnFilter, ids: number[] | undefined): boolean {
  const v = Number(row[f.column]);
  if ('op' in f) return f.op === '>=' ? v >= f.value : v < f.value;
  return ids!.includes(v);
}

/** A select's answer: `[[count], [["_key", "UInt32"]], [id], ...]`. */
type Selected = Array<Array<unknown>>;
const countOf = (a: Selected) => Number((a[0] as number[])[0]);
const idsOf = (a: Selected) => a.slice(2).map((r) => Number((r as number[])[0]));

/** Every select: a lookup that finds nothing is not retried as a prefix one; no result cache (the whole server's). */
const SELECT = { match_escalation_threshold: -1, cache: 'no', output_columns: '_key' };

/** The documents that hold the words (as words: no `column:value` nor pragma) and pass the filters. */
const matching = (query: string, filter: string) => ({ match_columns: 'body', query, query_flags: 'NONE', ...(filter ? { filter } : {}) });

async function groongaSelect(params: Record<string, string | number>): Promise<Selected> {
  const [answer] = await groongaCommand<Selected[]>('select', { table: groongaTables().documents, ...SELECT, ...params });
  return answer;
}

/** The words and filters, every match sorted by id for the page: the count is the result's size. */
async function sortedPage(s: ListedSearch, query: string, filter: string): Promise<{ count: number; pageIds: number[] }> {
  const answer = await groongaSelect({
    ...matching(query, filter), sort_keys: s.desc ? '-_key' : '_key', offset: integer(s.offset), limit: integer(s.limit),
  });
  return { count: countOf(answer), pageIds: idsOf(answer) };
}

/** Pages reaching further than this (`start + limit`) skip the window. */
const WINDOW_MAX_REACH = 1_000;
/** The window: this many ticket ids per ticket the page reaches. */
const WINDOW_PER_TICKET = 20;

/**
 * Sorting every match for a page is most of a common word's select (700,000 at 1M tickets: 50
 * ms of 90), so the page is first looked for among the ids at the list's end (the oldest, or the
 * newest descending): a window of WINDOW_PER_TICKET ids per ticket the page reaches, a range of
 * the key-ordered table, where the words and filters are checked on a few documents. When the
 * window holds `start + limit` matches they are the page (every other id comes after them), and
 * the count is a select without a sort; otherwise (a selective word, filters that thin the
 * matches) undefined, and the page is the sorted select's. As Mroonga's statement does (./mroonga.ts).
 */
async function windowPage(
  s: ListedSearch, query: string, filter: string, head: Record<string, unknown>,
): Promise<{ count: number; pageIds: number[] } | undefined> {
  if (head.lo === null || head.hi === null) return undefined;
  const width = (s.offset + s.limit) * WINDOW_PER_TICKET;
  const edge = s.desc ? `_key >= ${integer(Math.max(0, Number(head.hi) - width))}` : `_key <= ${integer(Number(head.lo) + width)}`;
  const words = `query("body", ${groongaString(query)}, {"flags": "NONE"})`;
  const window = await groongaSelect({
    filter: [edge, words, ...(filter ? [filter] : [])].join(' && '),
    sort_keys: s.desc ? '-_key' : '_key', offset: integer(s.offset), limit: integer(s.limit),
  });
  if (countOf(window) < s.offset + s.limit) return undefined;
  const all = await groongaSelect({ ...matching(query, filter), limit: 0 });
  return { count: countOf(all), pageIds: idsOf(window) };
}

/** Whether the server's last answer failed (a failure is logged once, until it answers again). */
let failing = false;

async function listedPage(s: ListedSearch): Promise<ListedPage | null> {
  // One statement: whether the words are a ticket's number (then the list's general path, which
  // adds that ticket), and the ids of each filter given by a statement (a status's name, a
  // department's tree).
  const byRows = s.filters.flatMap((f, i) => ('rows' in f ? [{ f, i }] : []));
  const parts: BoundCondition[] = [
    sqlFragment`(SELECT COUNT(*) FROM tickets WHERE number = ${s.term}) AS numbered`,
    // The ids' range, for the window (windowPage).
    sqlFragment`(SELECT MIN(id) FROM tickets) AS lo, (SELECT MAX(id) FROM tickets) AS hi`,
    ...byRows.map(({ f, i }) => sqlFragment`(SELECT GROUP_CONCAT(r.id) FROM ${(f as { rows: BoundCondition }).rows} r) AS ${trusted(`f${i}`)}`),
  ];
  const [head] = await select<Record<string, string | number | null>>(
    `SELECT ${parts.map(sqlText).join(', ')}`, Object.assign({}, ...parts.map((p) => p.replacements)),
  );
  if (Number(head.numbered) > 0) return null;
  const ids = s.filters.map((f, i) => ('ids' in f ? f.ids : 'rows' in f ? String(head[`f${i}`] ?? '').split(',').filter(Boolean).map(Number) : undefined));
  // A filter that names nothing (a status no ticket can have) leaves nothing to find.
  if (ids.some((x) => x !== undefined && x.length === 0)) return { rows: [], count: 0, start: 'words' };

  const filter = s.filters.map((f, i) => scriptOf(f, ids[i])).join(' && ');
  const query = groongaQuery(s.booleanQuery);
  const reach = s.offset + s.limit;
  let found: { count: number; pageIds: number[] };
  try {
    found = (reach <= WINDOW_MAX_REACH && (await windowPage(s, query, filter, head))) || await sortedPage(s, query, filter);
    failing = false;
  } catch (err) {
    if (!failing) logger.warn({ err: { message: (err as Error).message } }, 'the Groonga search server did not answer: searches take the SQL path (InnoDB) until it does');
    failing = true;
    return null;
  }
  const { count, pageIds } = found;
  const rows = pageIds.length ? await select<Record<string, unknown>>('SELECT t.* FROM tickets t WHERE t.id IN (:ids)', { ids: pageIds }) : [];
  const byId = new Map(rows.map((r) => [Number(r.id), r]));
  return {
    rows: pageIds.map((id) => byId.get(id)).filter((r): r is Record<string, unknown> => (
      !!r && r.deleted_at === null && r.merged_into_id === null && s.filters.every((f, i) => passes(r, f, ids[i])))),
    count,
    start: 'words',
  };
}

export const groongaSearch: SearchEngine = {
  name: 'groonga',
  // The SQL path's words: InnoDB's FULLTEXT (the server answers the list's plain searches only).
  textCondition: innodbSearch.textCondition,
  listedPage,
  prepare: createGroongaTables,
};
