import { config } from '../../../config';
import type { BoundCondition } from '../../../db/sql';
import { innodbSearch } from './innodb';
import { mroongaSearch } from './mroonga';

/**
 * Where the words of a ticket search are looked up (SEARCH_ENGINE; docs/performance.md, Search).
 * The search language (./parse.ts, ./compile.ts) is the same on every engine: an engine only
 * answers "which tickets hold these words", as a condition on `tickets`, and may offer a faster
 * page and count for a list narrowed by words alone. A search server (OpenSearch, Meilisearch)
 * would be a third implementation of this interface.
 */
export interface SearchEngine {
  readonly name: 'innodb' | 'mroonga';
  /**
   * The tickets (a condition on `tickets.id`) whose text holds `booleanQuery` (MariaDB boolean
   * mode: `+word*`, `+"a phrase"`), or whose number is `term`. Trashed and merged tickets
   * included: the list's own conditions narrow them.
   */
  textCondition(term: string, booleanQuery: string): BoundCondition;
  /**
   * A list of listed tickets (neither trashed nor merged) narrowed by words alone, in id order,
   * without reading the matches: `count` is exact (null when the words are a ticket's number:
   * then the list runs `textCondition` as any other filter); `pageIds` selects the page's ids
   * (`id`, with `LIMIT :pageOffset, :pageLimit`). Absent when the engine cannot.
   */
  listedWords?: {
    count(term: string, booleanQuery: string): Promise<number | null>;
    pageIds(booleanQuery: string, desc: boolean): BoundCondition;
  };
  /** Creates (or removes) what the engine keeps in the database; idempotent, run at start-up after the migrations. */
  prepare(): Promise<void>;
}

export const searchEngine = (): SearchEngine => (config().searchEngine === 'mroonga' ? mroongaSearch : innodbSearch);
