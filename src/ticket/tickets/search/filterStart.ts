import { allOf, sqlCondition, sqlFragment, trusted, type BoundCondition } from '../../../db/sql';
import type { ColumnFilter } from './engine';

/**
 * Where a Groonga select of words and filters starts (both Groonga engines: ./mroonga.ts,
 * ./groonga.ts): from the words' matches, each filter then checked on them one by one, or from a
 * filter's tickets found in the index of `filter_words`, the words then looked up among them.
 *
 * Each document keeps the filter columns' values again as words of `filter_words`
 * (`status_id:3 user_id:17 ...`), whose index (TokenDelimit: one word per value) finds a value's
 * tickets without reading any other. The columns themselves have no index: Groonga always looks an
 * indexed column up in its index, however many tickets its value holds (a rare word with a status
 * of 250,000 tickets at 1M: 6.7 ms against 0.3 checked on the one match).
 */

export const WORD_COLUMNS = ['status_id', 'priority_id', 'department_id', 'brand_id', 'channel_id', 'user_id', 'internal', 'locked'] as const;
type WordColumn = (typeof WORD_COLUMNS)[number];
export const isWordColumn = (c: string): c is WordColumn => (WORD_COLUMNS as readonly string[]).includes(c);

/** SQL: the `filter_words` of the row `alias` of tickets. */
export const filterWords = (alias: string) => `CONCAT_WS(' ', ${WORD_COLUMNS.map((c) => `CONCAT('${c}:', ${alias}.${c})`).join(', ')})`;

/** A filter on ids (a list, or those a statement selects). */
export type IdFilter = ColumnFilter & ({ ids: number[] } | { rows: BoundCondition });

/** A filter the select may start from: on ids of a column of `filter_words`. */
export const indexableFilters = (filters: ColumnFilter[]): IdFilter[] => filters.filter((f): f is IdFilter => !('op' in f) && isWordColumn(f.column));

/**
 * A person's tickets are counted in `tickets` up to this many (more: as many as the whole list,
 * never the start).
 */
const PERSON_COUNT_CAP = 20_000;

/**
 * How many listed tickets a filter holds, for the choice of the start: exact from the list's
 * counters (migration 018) for their columns (`counter`: the counter rows' condition), a person's
 * tickets counted in `tickets` up to PERSON_COUNT_CAP (`count`: an expression, NULL above it).
 */
export function filterSize(f: IdFilter): { counter?: BoundCondition; count?: BoundCondition } {
  const values = 'ids' in f ? sqlFragment`${f.ids.length ? f.ids : [0]}` : f.rows;
  if (f.column === 'user_id') {
    return { count: sqlCondition`(SELECT IF(COUNT(*) >= ${PERSON_COUNT_CAP}, NULL, COUNT(*)) FROM (SELECT 1 FROM tickets WHERE user_id IN (${values}) LIMIT ${PERSON_COUNT_CAP}) u)` };
  }
  return { counter: sqlCondition`${trusted(f.column)} IN (${values})` };
}

/**
 * The select list over `ticket_list_counts WHERE state = 0` that sizes the filters: `total` (the
 * listed tickets), `joint` (those that pass every counted filter) and `n<j>` for each counted
 * filter j (its index among the sized filters).
 */
export function counterSums(sizes: Array<{ counter?: BoundCondition }>): BoundCondition[] {
  const counted = sizes.flatMap((z, j) => (z.counter ? [{ j, c: z.counter }] : []));
  return [
    sqlFragment`SUM(n) AS total`,
    counted.length ? sqlFragment`SUM(IF(${allOf(counted.map(({ c }) => c))}, n, 0)) AS joint` : sqlFragment`SUM(n) AS joint`,
    ...counted.map(({ j, c }) => sqlFragment`SUM(IF(${c}, n, 0)) AS ${trusted(`n${j}`)}`),
  ];
}

/**
 * The window (both engines): a page is first looked for among this many ticket ids per ticket it
 * reaches, at the list's end; the share of them that match is the words' share of all tickets
 * (startsFromFilter's `share`). Pages reaching further than WINDOW_MAX_REACH (`start + limit`)
 * skip it.
 */
export const WINDOW_PER_TICKET = 20;
export const WINDOW_MAX_REACH = 1_000;

/**
 * A filter that holds at most this many listed tickets is where the select starts whatever the
 * words: reading it costs under a millisecond.
 */
export const SMALL_FILTER = 10_000;

/**
 * Whether a filter of `n` tickets is a better start than the words. Groonga adds a record to a
 * result set for about 60 ns (at 1M) and walks an index into an existing one for about 15 ns a
 * posting, so the filter is the start when it holds fewer tickets than the words: when it is
 * small, or when its size times the filters' joint size is below share × total² (share: the
 * window's share of matches; the words' matches are then about share × total² / joint, taking the
 * filters as independent of the words). Mroonga's statement writes the same rule in SQL.
 */
export const startsFromFilter = (n: number, joint: number, total: number, share: number): boolean =>
  n <= SMALL_FILTER || n * joint < share * total * total;
