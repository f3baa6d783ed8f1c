import type { Transaction } from 'sequelize';
import { config } from '../../../config';
import type { BoundCondition } from '../../../db/sql';
import type { FilterColumn } from './columns';
import { groongaSearch } from './groonga';
import { innodbSearch } from './innodb';
import { mroongaSearch } from './mroonga';

/**
 * Where the words of a ticket search are looked up (SEARCH_ENGINE; docs/performance.md, Search).
 * The search language (./parse.ts, ./compile.ts) is the same on every engine: an engine only
 * answers "which tickets hold these words", as a condition on `tickets`, and may offer a faster
 * page and count for a list narrowed by words and by the ticket's own columns (./listed.ts):
 * InnoDB's FULLTEXT (./innodb.ts), MariaDB's Mroonga plugin (./mroonga.ts), or a Groonga search
 * server of its own (./groonga.ts).
 */
export interface SearchEngine {
  readonly name: 'innodb' | 'mroonga' | 'groonga';
  /**
   * The tickets (a condition on `tickets.id`) whose text holds `booleanQuery` (MariaDB boolean
   * mode: `+word*`, `+"a phrase"`), or whose number is `term`. Trashed and merged tickets
   * included: the list's own conditions narrow them.
   */
  textCondition(term: string, booleanQuery: string): BoundCondition;
  /**
   * A page of listed tickets (neither trashed nor merged) in id order, narrowed by words and by
   * conditions on the ticket's own columns, with the exact count, answered by the engine from its
   * index (no read of the matches' rows but the page's). Null when the words are a ticket's number
   * (then the list takes the general path, which adds that ticket). Absent when the engine cannot.
   */
  listedPage?(search: ListedSearch): Promise<ListedPage | null>;
  /**
   * Runs `move`, statements of `transaction` that move messages between the tickets `tickets` (a
   * merge, a split, a merge undone) and set or clear the `merged_into_id` of tickets to ones of
   * `tickets`, and brings those tickets' text in the index up to date once, rather than once for
   * each message moved and each ticket merged. Absent when the engine's index needs nothing of it.
   */
  movingMessages?<T>(transaction: Transaction, tickets: number[], move: () => Promise<T>): Promise<T>;
  /** Creates (or removes) what the engine keeps in the database; idempotent, run at start-up after the migrations. */
  prepare(): Promise<void>;
  /**
   * What of the engine's index `prepare` has not made in this database (`/readyz` says it), in
   * words, or null. Absent when the engine keeps nothing there (InnoDB's FULLTEXT indexes are
   * migrations').
   */
  unprepared?(): Promise<string | null>;
}

/**
 * A condition on one of a ticket's own columns: any of these ids, any of the ids a SQL statement
 * selects (`rows`: one column named `id`), or a comparison.
 */
export type ColumnFilter =
  | { column: FilterColumn; ids: number[] }
  | { column: FilterColumn; rows: BoundCondition }
  | { column: FilterColumn; op: '>=' | '<'; value: number };

export interface ListedPage {
  /** The page's rows of `tickets` (every column), in the list's order. */
  rows: Array<Record<string, unknown>>;
  count: number;
  /** Where the engine's lookup started (a filter's column, or `words`): for tests and the benchmark's notes. */
  start?: string;
}

export interface ListedSearch {
  /** The words as the user wrote them (a ticket's number is checked against it). */
  term: string;
  /** Every word required, MariaDB boolean mode (`+word*`). */
  booleanQuery: string;
  filters: ColumnFilter[];
  desc: boolean;
  offset: number;
  limit: number;
}

const ENGINES = { innodb: innodbSearch, mroonga: mroongaSearch, groonga: groongaSearch };

export const searchEngine = (): SearchEngine => ENGINES[config().searchEngine];

/** `move` run through the engine's movingMessages, where it has one (SearchEngine.movingMessages). */
export const movingMessages = <T>(transaction: Transaction, tickets: number[], move: () => Promise<T>): Promise<T> => {
  const engine = searchEngine();
  return engine.movingMessages ? engine.movingMessages(transaction, tickets, move) : move();
};
