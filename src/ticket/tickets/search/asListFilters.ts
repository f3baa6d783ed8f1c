import { select } from '../../../db/select';
import { joined, sqlFragment, sqlText, trusted } from '../../../db/sql';
import { MAX_ID } from '../../../lib/validation';
import { createdRanges, isId, namedIds, type NamedKind } from './compile';
import { parseSearch, type SearchField, type Term } from './parse';

/**
 * A search of field terms only (`status:Open department:Sales assigned:none`) is the list of the
 * list's own filters: this gives those filters, so that the list counts from its counters and
 * pages by their plans (listPage.ts), as a saved filter of the same conditions does
 * (../resource.ts). Through the search's condition (./compile.ts) the count read every match: at
 * a million tickets, `search=status:1` counted its 250,000 tickets, and `department:` was a
 * recursive subquery the optimiser could not size, so it walked the primary key for the page.
 *
 * One group (no OR) of terms that are neither negated nor text, each field once (`created`
 * twice: a range), none a filter the request also gives; `number` keeps its look-up (one ticket).
 * Names and addresses become ids in one statement, matched by the database as the search's
 * subqueries match them; a name that matches nothing matches no ticket.
 */

/**
 * The fields whose term is the list's filter of the same name (an id, or what a name or address
 * stands for: compile.ts, namedIds).
 */
const NAMED: Partial<Record<SearchField, NamedKind>> = {
  status: 'status', priority: 'priority', department: 'department', tag: 'tag', user: 'person', assigned: 'person',
};

/** `created` terms as `created_at_min`/`_max` (inclusive, as the list's dates are); null when no second is in the range. */
function createdFilters(terms: Array<Term & { kind: 'field' }>): Record<string, number> | null {
  let min = 0;
  let max = MAX_ID;
  for (const term of terms) {
    for (const [op, at] of createdRanges(term)) {
      if (op === '>=') min = Math.max(min, at);
      else max = Math.min(max, at - 1);
    }
  }
  if (min > max) return null;
  return { ...(min > 0 ? { created_at_min: min } : {}), ...(max < MAX_ID ? { created_at_max: max } : {}) };
}

/**
 * The list filters `p.search` stands for (to replace it in `p`), null when it matches no ticket,
 * undefined when it is not a search of field terms only (or there is none).
 */
export async function searchAsListFilters(p: Record<string, any>): Promise<Record<string, unknown> | null | undefined> {
  if (typeof p.search !== 'string' || !p.search) return undefined;
  // An invalid search is the list's 422 already (listFilters.ts: its `where` compiled it).
  const query = parseSearch(p.search);
  if (query.length !== 1) return undefined;
  const terms = query[0];
  const fields: Array<Term & { kind: 'field' }> = [];
  for (const t of terms) {
    if (t.kind !== 'field' || t.negated) return undefined;
    if (t.field !== 'created' && (t.op !== ':' || !NAMED[t.field] || fields.some((f) => f.field === t.field))) return undefined;
    fields.push(t);
  }
  const created = fields.filter((t) => t.field === 'created');
  const given = (k: string) => p[k] !== undefined && p[k] !== null;
  if (created.length > 2 || (created.length && (given('created_at_min') || given('created_at_max')))) return undefined;
  const others = fields.filter((t) => t.field !== 'created');
  if (others.some((t) => given(t.field))) return undefined;

  const filters: Record<string, unknown> = {};
  if (created.length) {
    const range = createdFilters(created);
    if (!range) return null;
    Object.assign(filters, range);
  }
  const named: Array<Term & { kind: 'field' }> = [];
  for (const t of others) {
    if (t.field === 'assigned' && t.value.toLowerCase() === 'none') filters.assigned = [-1];
    else if (!isId(t.value)) named.push(t);
    else if (Number(t.value) < 1 || Number(t.value) > MAX_ID) return null;
    else filters[t.field] = [Number(t.value)];
  }
  if (named.length) {
    const lookups = joined(named.map((t, i) => sqlFragment`SELECT ${trusted(String(i))} AS term, id FROM ${namedIds(NAMED[t.field]!, t.value)} AS ${trusted(`t${i}`)}`), ' UNION ALL ');
    const rows = await select<{ term: number; id: number }>(sqlText(lookups), lookups.replacements);
    for (const [i, t] of named.entries()) {
      const ids = rows.filter((r) => Number(r.term) === i).map((r) => r.id);
      if (!ids.length) return null;
      filters[t.field] = ids;
    }
  }
  return filters;
}
