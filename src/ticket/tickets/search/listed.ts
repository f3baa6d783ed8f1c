import type { BoundCondition } from '../../../db/sql';
import { searchQuery } from '../../../selfservice/article/search';
import { departmentTree } from '../conditions';
import { createdRanges, departmentRoots, isId, namedIds } from './compile';
import type { FilterColumn } from './columns';
import type { ColumnFilter, ListedSearch } from './engine';
import { parseSearch, type Term } from './parse';

/**
 * Which list requests an engine's `listedPage` answers alone (docs/performance.md, Search): listed
 * tickets in id order, narrowed by words (at least one; no phrase, exclusion or OR) and by
 * conditions on the ticket's own columns, from the search (`status:`, `priority:`,
 * `department:`, `user:`, `created`) or from the list's filters on those columns. Anything else
 * (a tag, an assignee, a phrase, another order, the trash) takes the list's general path, where
 * the words are one condition among the others.
 */

const ids = (v: unknown): number[] => (Array.isArray(v) ? v : [v]).map(Number);

/** An id, or the ids of the records of that name (a statement selecting them, as `id`). */
const byIdOrName = (column: FilterColumn, value: string, byName: (name: string) => BoundCondition): ColumnFilter => (
  isId(value) ? { column, ids: [Number(value)] } : { column, rows: byName(value) });

function fieldFilters(term: Term & { kind: 'field' }): ColumnFilter[] | null {
  const v = term.value;
  switch (term.field) {
    case 'status':
      return [byIdOrName('status_id', v, (name) => namedIds('status', name))];
    case 'priority':
      return [byIdOrName('priority_id', v, (name) => namedIds('priority', name))];
    case 'department':
      return [{ column: 'department_id', rows: departmentTree(departmentRoots(v)) }];
    case 'user':
      return [byIdOrName('user_id', v, (email) => namedIds('person', email))];
    case 'created':
      return createdRanges(term).map(([op, value]) => ({ column: 'created_at', op, value }));
    default:
      return null;
  }
}

/**
 * The search an engine answers alone for these list parameters (`columns`: the list filters that
 * are a ticket column, by parameter name; `others`: every other parameter that narrows the list),
 * or null.
 */
export function listedSearch(
  p: Record<string, any>, columns: Record<string, string>, others: string[], page: { desc: boolean; offset: number; limit: number },
): ListedSearch | null {
  const given = (k: string) => p[k] !== undefined && p[k] !== null;
  if (!given('search') || others.some((k) => k !== 'search' && given(k))) return null;
  const query = parseSearch(p.search);
  if (query.length !== 1) return null;
  const filters: ColumnFilter[] = [];
  const words: string[] = [];
  for (const term of query[0]) {
    if (term.negated) return null;
    if (term.kind === 'text') {
      if (term.phrase) return null;
      words.push(term.text);
      continue;
    }
    const f = fieldFilters(term);
    if (!f) return null;
    filters.push(...f);
  }
  const term = words.join(' ');
  const booleanQuery = searchQuery(term);
  if (!booleanQuery) return null;
  for (const [name, column] of Object.entries(columns)) {
    if (!given(name)) continue;
    // `department` holds the departments below those asked for too (listPage.ts, departmentsBelow).
    filters.push({ column: column as FilterColumn, ids: ids(p[name]) });
  }
  return { term, booleanQuery, filters, ...page };
}
