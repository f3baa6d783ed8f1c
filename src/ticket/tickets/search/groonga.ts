import { select } from '../../../db/select';
import { sqlFragment, sqlText, trusted, type BoundCondition } from '../../../db/sql';
import { logger } from '../../../logger';
import type { ColumnFilter, ListedPage, ListedSearch, SearchEngine } from './engine';
import { groongaQuery } from './groongaQuery';
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
 * one Groonga `select`: the page's ids and the exact count of the documents that match; the page's
 * tickets are then read from the database by primary key. Every other search (a phrase with
 * another order, an exclusion, OR, a tag or an assignee beside the words, the trash) is the SQL
 * path's, on InnoDB's FULLTEXT indexes (always kept): so is every search while the server cannot
 * answer (logged), slower for common words but never wrong.
 *
 * The index lags the database by a second or two: a ticket changed since has its page row as it is
 * now (a ticket gone from the list, or that no longer passes a filter, is left out of the page),
 * and the count is the index's.
 */

const integer = (n: number) => {
  if (!Number.isSafeInteger(n)) throw new Error(`not an integer: ${n}`);
  return String(n);
};

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

/** Whether the server's last answer failed (a failure is logged once, until it answers again). */
let failing = false;

async function listedPage(s: ListedSearch): Promise<ListedPage | null> {
  // One statement: whether the words are a ticket's number (then the list's general path, which
  // adds that ticket), and the ids of each filter given by a statement (a status's name, a
  // department's tree).
  const byRows = s.filters.flatMap((f, i) => ('rows' in f ? [{ f, i }] : []));
  const parts: BoundCondition[] = [
    sqlFragment`(SELECT COUNT(*) FROM tickets WHERE number = ${s.term}) AS numbered`,
    ...byRows.map(({ f, i }) => sqlFragment`(SELECT GROUP_CONCAT(r.id) FROM ${(f as { rows: BoundCondition }).rows} r) AS ${trusted(`f${i}`)}`),
  ];
  const [head] = await select<Record<string, string | number | null>>(
    `SELECT ${parts.map(sqlText).join(', ')}`, Object.assign({}, ...parts.map((p) => p.replacements)),
  );
  if (Number(head.numbered) > 0) return null;
  const ids = s.filters.map((f, i) => ('ids' in f ? f.ids : 'rows' in f ? String(head[`f${i}`] ?? '').split(',').filter(Boolean).map(Number) : undefined));
  // A filter that names nothing (a status no ticket can have) leaves nothing to find.
  if (ids.some((x) => x !== undefined && x.length === 0)) return { rows: [], count: 0, start: 'words' };

  let answer: Array<Array<unknown>>;
  try {
    [answer] = await groongaCommand<Array<Array<Array<unknown>>>>('select', {
      table: groongaTables().documents,
      match_columns: 'body',
      query: groongaQuery(s.booleanQuery),
      // The words as words: no `column:value`, no pragma; a lookup that finds nothing is not retried as a prefix one.
      query_flags: 'NONE',
      match_escalation_threshold: -1,
      ...(s.filters.length ? { filter: s.filters.map((f, i) => scriptOf(f, ids[i])).join(' && ') } : {}),
      sort_keys: s.desc ? '-_key' : '_key',
      offset: integer(s.offset),
      limit: integer(s.limit),
      output_columns: '_key',
      // Groonga's result cache is the whole server's: fresh answers only.
      cache: 'no',
    });
    failing = false;
  } catch (err) {
    if (!failing) logger.warn({ err: { message: (err as Error).message } }, 'the Groonga search server did not answer: searches take the SQL path (InnoDB) until it does');
    failing = true;
    return null;
  }
  const count = Number((answer[0] as number[])[0]);
  const pageIds = answer.slice(2).map((r) => Number((r as number[])[0]));
  const rows = pageIds.length ? await select<Record<string, unknown>>('SELECT * FROM tickets WHERE id IN (:ids)', { ids: pageIds }) : [];
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
