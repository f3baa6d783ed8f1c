import { select } from '../../../db/select';
import { joined as list, sqlFragment, sqlText, trusted, type BoundCondition } from '../../../db/sql';
import { logger } from '../../../logger';
import type { ColumnFilter, ListedPage, ListedSearch, SearchEngine } from './engine';
import { counterSums, filterSize, indexableFilters, startsFromFilter, WINDOW_MAX_REACH, WINDOW_PER_TICKET, type IdFilter } from './filterStart';
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
 * answered by the server: the page's ids and the exact count of the documents that match (a
 * window of the ids at the list's end, then a count or a sorted select, each started from the
 * words or from a small filter's tickets: ./filterStart.ts); the page's tickets are then read from
 * the database by primary key. Every other search (a phrase, an exclusion, OR, a tag or an assignee
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

async function groongaSelect(params: Record<string, string | number>): Promise<Selected> {
  const [answer] = await groongaCommand<Selected[]>('select', { table: groongaTables().documents, ...SELECT, ...params });
  return answer;
}


/** Whether the server's last answer failed (a failure is logged once, until it answers again). */
let failing = false;

async function listedPage(s: ListedSearch): Promise<ListedPage | null> {
  // One statement: whether the words are a ticket's number (then the list's general path, which
  // adds that ticket), the ids' range (for the window), the ids of each filter given by a
  // statement (a status's name, a department's tree), and the sizes of the filters the selects
  // may start from (./filterStart.ts), with the listed tickets' total.
  const byRows = s.filters.flatMap((f, i) => ('rows' in f ? [{ f, i }] : []));
  const indexable = indexableFilters(s.filters);
  const sizes = indexable.map(filterSize);
  const parts: BoundCondition[] = [
    sqlFragment`(SELECT COUNT(*) FROM tickets WHERE number = ${s.term}) AS numbered`,
    sqlFragment`(SELECT MIN(id) FROM tickets) AS lo, (SELECT MAX(id) FROM tickets) AS hi`,
    ...byRows.map(({ f, i }) => sqlFragment`(SELECT GROUP_CONCAT(r.id) FROM ${(f as { rows: BoundCondition }).rows} r) AS ${trusted(`f${i}`)}`),
    ...sizes.flatMap((z, j) => (z.count ? [sqlFragment`${z.count} AS ${trusted(`n${j}`)}`] : [])),
  ];
  const statement = indexable.length
    ? sqlFragment`SELECT ${list(parts)}, k.* FROM (SELECT ${list(counterSums(sizes))} FROM ticket_list_counts WHERE state = 0) k`
    : sqlFragment`SELECT ${list(parts)}`;
  const [head] = await select<Record<string, string | number | null>>(sqlText(statement), statement.replacements);
  if (Number(head.numbered) > 0) return null;
  const ids = s.filters.map((f, i) => ('ids' in f ? f.ids : 'rows' in f ? String(head[`f${i}`] ?? '').split(',').filter(Boolean).map(Number) : undefined));
  // A filter that names nothing (a status no ticket can have) leaves nothing to find.
  if (ids.some((x) => x !== undefined && x.length === 0)) return { rows: [], count: 0, start: 'words' };

  const total = Number(head.total);
  /** The listed tickets filter j holds (null: a person's, more than the cap counts). */
  const size = (j: number): number | null => (head[`n${j}`] === null ? null : Number(head[`n${j}`]));
  const indexOf = (f: ColumnFilter) => indexable.indexOf(f as IdFilter);
  // Checked one by one on a result: every filter but one that every listed ticket passes (by the counters).
  const checked = s.filters.flatMap((f, i) => {
    const j = indexOf(f);
    return j >= 0 && sizes[j].counter && size(j) === total ? [] : [{ i, script: scriptOf(f, ids[i]) }];
  });
  const checks = (except?: number) => checked.filter((c) => c.i !== except).map((c) => c.script);
  const query = groongaQuery(s.booleanQuery);
  const words = `query("body", ${groongaString(query)}, {"flags": "NONE"})`;
  /** The select's words and filters: from the words' matches, or from indexed filter j's tickets. */
  const matching = (j: number): Record<string, string> => {
    if (j < 0) {
      const filter = checks().join(' && ');
      return { match_columns: 'body', query, query_flags: 'NONE', ...(filter ? { filter } : {}) };
    }
    const f = indexable[j];
    const values = ids[s.filters.indexOf(f)]!.map((id) => `filter_words @ ${groongaString(`${f.column}:${integer(id)}`)}`);
    return { filter: [`(${values.join(' || ')})`, words, ...checks(s.filters.indexOf(f))].join(' && ') };
  };
  const sorted = { sort_keys: s.desc ? '-_key' : '_key', offset: integer(s.offset), limit: integer(s.limit) };
  const reach = s.offset + s.limit;
  const width = reach * WINDOW_PER_TICKET;
  const windowed = reach <= WINDOW_MAX_REACH && head.lo !== null && head.hi !== null;

  let found: { count: number; pageIds: number[]; start: number };
  try {
    // Sorting every match for a page is most of a common word's select (700,000 at 1M tickets: 50
    // ms of 90), so the page is first looked for among the ids at the list's end (the oldest, or
    // the newest descending): a window of WINDOW_PER_TICKET ids per ticket the page reaches, a
    // range of the key-ordered table, where the words and filters are checked on a few documents.
    // When the window holds `start + limit` matches they are the page (every other id comes after
    // them), and the count is a select without a sort; otherwise (a selective word, filters that
    // thin the matches) one select sorts and counts every match. As Mroonga's statement does.
    const edge = s.desc ? `_key >= ${integer(Math.max(0, Number(head.hi) - width))}` : `_key <= ${integer(Number(head.lo) + width)}`;
    const window = windowed ? await groongaSelect({ filter: [edge, words, ...checks()].join(' && '), ...sorted }) : undefined;
    // Where the count (or the sorted select) starts: the smallest filter that holds fewer tickets than the words.
    const share = window ? countOf(window) / width : 0;
    let start = -1;
    indexable.forEach((_, j) => {
      const n = size(j);
      if (n !== null && startsFromFilter(n, Number(head.joint), total, share) && (start < 0 || n < size(start)!)) start = j;
    });
    if (window && countOf(window) >= reach) {
      found = { count: countOf(await groongaSelect({ ...matching(start), limit: 0 })), pageIds: idsOf(window), start };
    } else {
      const answer = await groongaSelect({ ...matching(start), ...sorted });
      found = { count: countOf(answer), pageIds: idsOf(answer), start };
    }
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
    start: found.start >= 0 ? indexable[found.start].column : 'words',
  };
}

export const groongaSearch: SearchEngine = {
  name: 'groonga',
  // The SQL path's words: InnoDB's FULLTEXT (the server answers the list's plain searches only).
  textCondition: innodbSearch.textCondition,
  listedPage,
  prepare: createGroongaTables,
};
