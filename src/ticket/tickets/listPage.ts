import type { WhereOptions } from 'sequelize';
import { Ticket } from '../../db/models';
import { sequelize } from '../../db/sequelize';
import { select } from '../../db/select';
import { invalid } from '../../errors';
import type { ListPageInput, ListResult } from '../../http/resource';
import { allOf, sqlCondition, sqlText, trusted, type BoundCondition } from '../../db/sql';
import { inDepartmentTree, unassigned } from './conditions';
import { NARROWING_PARAMS } from './listFilters';
import { searchEngine } from './search/engine';
import { listedSearch } from './search/listed';

/**
 * The ticket list's page and `count` at a million tickets (docs/performance.md): two statements
 * whatever the filters, sort or page (three with `after_id`; one for a search the engine answers
 * alone, listedSearchPage).
 *
 * - `count`: a list narrowed by nothing but status, priority, department, brand, channel,
 *   internal, locked and `assigned=-1` (the trash too) sums the counters of migrations 018 and 025
 *   (`ticket_list_counts`, kept exact by triggers); any other filter counts its matches through its index.
 * - The page: a deferred join. The ids of the page come from an index alone (the sort column's
 *   `tickets_list_<column>` index, which also holds the equality filters' columns for the usual
 *   orders), then the page's rows by primary key (STRAIGHT_JOIN: the page first, whatever the
 *   table's size): a deep `start` skips index entries, not rows.
 *   Which index: walking the sort index reads about (start + limit) × total / matches entries;
 *   reading the matches through a filter's own index and sorting them reads `matches`. With the
 *   counters' exact figures the page takes the walk when it reads fewer entries, else leaves the
 *   choice to the optimiser (a filter's index, then a sort of at most √((start + limit) × total)
 *   matches).
 * - `after_id` (keyset paging, beyond the spec): the page after that ticket in the list's order,
 *   whatever the order column: `(column, id)` past the ticket's own, an index range.
 */

/**
 * The filters on a column of the ticket that the counters hold: a list narrowed only by these (and
 * `assigned=-1`) reads its count from them. (Also the search engine's column filters: ./search/listed.ts.)
 */
const COUNTED_FILTERS: Record<string, string> = {
  status: 'status_id', priority: 'priority_id', department: 'department_id', brand: 'brand_id', channel: 'channel_id', internal: 'internal', locked: 'locked',
};
/** Every other list parameter that narrows the list (whatever filter is added to the list's). */
const OTHER_FILTERS = NARROWING_PARAMS.filter((k) => !(k in COUNTED_FILTERS));

const given = (p: Record<string, any>, k: string) => p[k] !== undefined && p[k] !== null;

/**
 * `assigned=-1` alone (no operator beside it): the unassigned tickets, `assigned = 0` in the
 * counters as on tickets (migration 025). Operators' ids are counted by their matches.
 */
const unassignedOnly = (p: Record<string, any>): boolean => Array.isArray(p.assigned) && p.assigned.length === 1 && p.assigned[0] === -1;

/** Whether the counters answer the list's count: only counted filters given. */
export const countedByCounters = (p: Record<string, any>): boolean =>
  !OTHER_FILTERS.some((k) => given(p, k) && !(k === 'assigned' && unassignedOnly(p)));

/** The counters' condition for the given filters (the same columns as on tickets). */
function counterCondition(p: Record<string, any>): BoundCondition {
  const parts: BoundCondition[] = [trusted('1 = 1')];
  if (unassignedOnly(p)) parts.push(unassigned());
  for (const [name, column] of Object.entries(COUNTED_FILTERS)) {
    if (!given(p, name)) continue;
    const col = trusted(column);
    const v = p[name];
    if (name === 'department') parts.push(inDepartmentTree(v));
    else parts.push(Array.isArray(v) ? sqlCondition`${col} IN (${v})` : sqlCondition`${col} = ${v}`);
  }
  return allOf(parts);
}

/** The list's WHERE (Sequelize's rendering of the filters, subquery literals included), without the keyword. */
function whereSql(where: WhereOptions): string {
  const qg = sequelize().getQueryInterface().queryGenerator as unknown as { whereItemsQuery(w: WhereOptions, o: object): string };
  return qg.whereItemsQuery(where, { model: Ticket, prefix: '`Ticket`' }) || '1 = 1';
}

/** `(column, id)` after the ticket's own, in the list's direction (NULLs first ascending, as MariaDB orders them). */
function keysetCondition(column: string, desc: boolean, value: unknown, id: number): BoundCondition {
  const c = trusted(`\`Ticket\`.\`${column}\``);
  const idCol = trusted('`Ticket`.`id`');
  if (column === 'id') return desc ? sqlCondition`${idCol} < ${id}` : sqlCondition`${idCol} > ${id}`;
  if (value === null) {
    return desc ? sqlCondition`${c} IS NULL AND ${idCol} < ${id}` : sqlCondition`(${c} IS NULL AND ${idCol} > ${id}) OR ${c} IS NOT NULL`;
  }
  return desc
    ? sqlCondition`${c} < ${value} OR (${c} = ${value} AND ${idCol} < ${id}) OR ${c} IS NULL`
    : sqlCondition`${c} > ${value} OR (${c} = ${value} AND ${idCol} > ${id})`;
}

/** The index a page walks for an order column (deleted_at: listed tickets all have none, so the id order). */
export const sortIndex = (column: string) => `tickets_list_${column === 'deleted_at' ? 'id' : column}`;


/**
 * A search the engine answers alone (./search/listed.ts: words, with field terms and filters on
 * the ticket's own columns, listed tickets in id order): its page's rows and exact count from the
 * engine's index, in one statement. Null otherwise (the words are then a condition like any
 * filter, and the count reads the matches).
 */
async function listedSearchPage(p: Record<string, any>, column: string, desc: boolean, offset: number, limit: number): Promise<ListResult<Ticket> | null> {
  const engine = searchEngine();
  if (!engine.listedPage || p.trashed === 1 || column !== 'id' || given(p, 'after_id')) return null;
  const search = listedSearch(p, COUNTED_FILTERS, OTHER_FILTERS, { desc, offset, limit });
  const found = search && await engine.listedPage(search);
  if (!found) return null;
  return { rows: found.rows as unknown as Ticket[], count: found.count };
}

/**
 * One customer's listed tickets: their filter index (`user_id, deleted_at, merged_into_id`, then
 * the primary key) holds them in id order, so the count and an id-ordered page read at most that
 * customer's tickets. Left to itself, with another filter beside the user (`status`: a customer's
 * open tickets), the optimiser walked every listed ticket in id order for the page (240 ms at a
 * million tickets for a customer whose many tickets are the newest) and intersected the user's
 * index with the status's for the count, reading every ticket of the status (50 ms).
 */
function customerHint(p: Record<string, any>): string {
  const users = given(p, 'user') ? [p.user].flat() : [];
  return users.length === 1 && p.trashed !== 1 ? ' FORCE INDEX (tickets_filter_user_id)' : '';
}

export async function listTicketPage({ query: q, where, replacements, filtered }: ListPageInput): Promise<ListResult<Ticket>> {
  const p = q.params;
  const trashed = p.trashed === 1;
  // Listed tickets have no deleted_at: that order is the id order (which the optimiser does not see).
  const column: string = p.order_column === 'deleted_at' && !trashed ? 'id' : p.order_column ?? 'id';
  const desc = p.order_direction === 'desc';
  const dir = desc ? 'DESC' : 'ASC';
  const searched = await listedSearchPage(p, column, desc, q.offset, q.limit);
  if (searched) return searched;
  const byCounters = countedByCounters(p);

  let keyset: BoundCondition | undefined;
  if (given(p, 'after_id')) {
    // `column` is one of the sortable columns (validated), never a value from the request.
    const [row] = await select(`SELECT \`${column}\` AS v FROM tickets WHERE id = ?`, [p.after_id]);
    if (!row) throw invalid('after_id');
    keyset = keysetCondition(column, desc, row.v, p.after_id);
  }

  const ord = (alias: string, d = dir) => (column === 'id' ? `${alias}.\`id\` ${d}` : `${alias}.\`${column}\` ${d}, ${alias}.\`id\` ${d}`);
  const pageWhere = keyset ? `(${whereSql(where)}) AND ${sqlText(keyset)}` : whereSql(where);
  /** The page's ids read in `innerDir` (the list's, or its reverse from the far end), sorted in the list's. */
  const page = (hint: string, offset = q.offset, limit = q.limit, innerDir = dir) => select<Ticket>(
    `SELECT STRAIGHT_JOIN t.* FROM (SELECT \`Ticket\`.\`id\` FROM \`tickets\` AS \`Ticket\`${hint} WHERE ${pageWhere}
       ORDER BY ${ord('`Ticket`', innerDir)} LIMIT :pageOffset, :pageLimit) AS page
     JOIN tickets t ON t.id = page.id ORDER BY ${ord('t')}`,
    { ...replacements, ...keyset?.replacements, pageOffset: offset, pageLimit: limit },
  );

  if (!byCounters) {
    // The count reads the same index as the page: with a customer's index the optimiser otherwise
    // intersects it with the status index, reading every ticket of the status (50 ms at 1M).
    const hint = customerHint(p);
    const [[{ n }], rows] = await Promise.all([
      select<{ n: number | bigint }>(`SELECT COUNT(*) AS n FROM \`tickets\` AS \`Ticket\`${hint} WHERE ${whereSql(where)}`, replacements),
      page(column === 'id' ? hint : ''),
    ]);
    return { rows, count: Number(n) };
  }
  const cond = counterCondition(p);
  const [r] = await select<{ matches: string | null; total: string | null }>(
    `SELECT SUM(IF(${sqlText(cond)}, n, 0)) AS matches, SUM(n) AS total FROM ticket_list_counts WHERE state = :state`,
    { ...cond.replacements, state: trashed ? 1 : 0 },
  );
  const count = Number(r?.matches ?? 0);
  const total = Number(r?.total ?? 0);
  // Past the middle, the page is read from the far end (the order reversed: MariaDB puts NULLs
  // first ascending and last descending, so the reverse is exact): a deep `start` skips at most
  // half of the matches' index entries, and the last page is as cheap as the first.
  const fromEnd = !keyset && count - q.offset < q.offset + q.limit;
  const reach = fromEnd ? Math.max(0, count - q.offset) : q.offset + q.limit;
  // The trash is a range of deleted_at: no index holds it in a list order (a sort of the trash).
  const walk = !trashed && (!filtered || count * count >= reach * total);
  const hint = walk ? ` FORCE INDEX (${sortIndex(column)})` : '';
  const rows = fromEnd
    ? await page(hint, Math.max(0, count - q.offset - q.limit), Math.max(0, Math.min(q.limit, count - q.offset)), desc ? 'ASC' : 'DESC')
    : await page(hint);
  return { rows, count };
}
