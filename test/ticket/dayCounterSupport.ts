/**
 * The day counters (migrations 026-028, 051-055) against the tickets, and a deep page of the ticket list
 * read with and without their positioning (src/ticket/tickets/listPage.ts): shared by the date
 * tests and the fold's (not a test file itself).
 */
import { QueryTypes } from 'sequelize';
import { capture, withoutSwitches } from '../../bench/capture';
import { DAY, DAY_COLUMNS } from '../../migrations/026_ticket_day_counts';
import { DAY_FILTER_COLUMNS, DAY_FILTER_PAIRS, DAY_FLAG_COLUMNS, dayFilterShape } from '../../migrations/028_ticket_day_filter_counts';
import { DAY_SPAN, FOLDED_SLOT } from '../../migrations/052_ticket_span_counts';
import { ORDER_DAY_COLUMNS, VALUE_DAYS } from '../../migrations/061_ticket_day_order_counts';
import { CUSTOMER_ORDER_COL } from '../../migrations/062_ticket_customer_order_counts';
import { MARKED_ORDERS, countedIn, markCol, type MarkedOrder } from '../../migrations/063_ticket_order_marks';
import { MARK_FILTER_COLUMNS } from '../../migrations/089_ticket_mark_filter_counts';
import { sequelize } from '../../src/db/sequelize';
import { boundedWalks, deepPaging } from '../../src/ticket/tickets/listPage';
import type { TestApi } from '../helpers/app';
import { expectList } from '../helpers/envelope';
import { ids } from './ticketSupport';

export const query = <T extends object>(sql: string, replacements?: unknown[] | Record<string, unknown>): Promise<T[]> =>
  sequelize().query<T>(sql, { replacements, type: QueryTypes.SELECT });

const rows = (list: Array<Record<string, number>>) => list.map((r) => Object.values(r).map(Number));

/**
 * The listed tickets of each stretch of the string orders (migration 063) per status, as rows of
 * `ticket_day_counts` (col, state, day, status_id, n), found apart from the triggers' look-up: the
 * marks and the tickets sorted together by the database (a mark before a ticket of its own key),
 * each ticket in the stretch of the last mark before it.
 */
async function markedCounts(): Promise<Array<Record<string, number>>> {
  const out: Array<Record<string, number>> = [];
  for (const column of MARKED_ORDERS) {
    const n = new Map<string, number>();
    for (const t of await stretchesOf(column)) n.set(`${t.day},${t.status_id}`, (n.get(`${t.day},${t.status_id}`) ?? 0) + 1);
    const rowsOf = [...n].map(([k, count]) => { const [d, status] = k.split(',').map(Number); return { col: markCol(column), state: 0, day: d, status_id: status, n: count }; });
    out.push(...rowsOf.sort((a, b) => a.day - b.day || a.status_id - b.status_id));
  }
  return out;
}

/**
 * The listed tickets of a string order with their stretch (`day`), found apart from the triggers'
 * look-up: the marks and the tickets sorted together by the database (a mark before a ticket of
 * its own key), each ticket in the stretch of the last mark before it.
 */
async function stretchesOf(column: MarkedOrder): Promise<Array<Record<string, number>>> {
  const sorted = await query<Record<string, number>>(
    `SELECT val, id, mark, day, status_id, ${MARK_FILTER_COLUMNS.join(', ')} FROM (
       SELECT val, ticket_id AS id, 1 AS mark, day, ${['status_id', ...MARK_FILTER_COLUMNS].map((c) => `NULL AS ${c}`).join(', ')} FROM ticket_order_marks WHERE col = ?
       UNION ALL SELECT ${column}, id, 0, NULL, status_id, ${MARK_FILTER_COLUMNS.join(', ')} FROM tickets WHERE merged_into_id IS NULL AND ${countedIn(column)}
     ) u ORDER BY val, id, mark DESC`,
    [markCol(column)],
  );
  let day = -1;
  const out: Array<Record<string, number>> = [];
  for (const r of sorted) {
    if (Number(r.mark)) day = Number(r.day);
    else out.push({ ...r, day });
  }
  return out;
}

/**
 * Migration 089's rows of `ticket_day_filter_counts` (col, state, dim, val, val2, day, status_id,
 * n) from the tickets: per string order, stretch, filter column's value and status.
 */
async function markedFilterCounts(): Promise<Array<Record<string, number>>> {
  const out: Array<Record<string, number>> = [];
  for (const column of MARKED_ORDERS) {
    const n = new Map<string, number>();
    for (const t of await stretchesOf(column)) {
      for (const c of MARK_FILTER_COLUMNS) {
        const k = [DAY_FILTER_COLUMNS.indexOf(c), t[c], t.day, t.status_id].join();
        n.set(k, (n.get(k) ?? 0) + 1);
      }
    }
    const rowsOf = [...n].map(([k, count]) => { const [dim, val, d, status] = k.split(',').map(Number); return { col: markCol(column), state: 0, dim, val, val2: 0, day: d, status_id: status, n: count }; });
    out.push(...rowsOf.sort((a, b) => a.dim - b.dim || a.val - b.val || a.day - b.day || a.status_id - b.status_id));
  }
  return out;
}

/** Whether the day counters' triggers keep the string orders' filter rows (migration 089 has run). */
async function markFilterRowsKept(): Promise<boolean> {
  const [t] = await query<{ sql: string }>(
    "SELECT ACTION_STATEMENT AS `sql` FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME = 'tickets_day_counts_insert'",
  );
  return !!t && t.sql.includes('ticket_day_filter_counts');
}

/**
 * `ticket_day_counts` against the tickets: per date column, state, day (and status, `byStatus`);
 * with `orders` (migrations 061 and 062), per time column too (its created_at day without a
 * time, else VALUE_DAYS plus its day) and per customer, and once migration 063 has run, per
 * stretch of the string orders.
 */
export async function expectDayCounts(byStatus: boolean, orders = byStatus): Promise<void> {
  const status = byStatus ? ', status_id' : '';
  const times = orders ? ORDER_DAY_COLUMNS.map((c, i) => `
     UNION ALL SELECT ${DAY_COLUMNS.length + i}, IF(deleted_at IS NULL, 0, 1), IF(${c} IS NULL, created_at DIV ${DAY}, ${VALUE_DAYS} + ${c} DIV ${DAY})${status}, COUNT(*)
       FROM tickets WHERE merged_into_id IS NULL GROUP BY 2, 3${status}`).join('') + `
     UNION ALL SELECT ${CUSTOMER_ORDER_COL}, IF(deleted_at IS NULL, 0, 1), user_id${status}, COUNT(*) FROM tickets WHERE merged_into_id IS NULL GROUP BY 2, 3${status}` : '';
  const counted = await query<Record<string, number>>(
    `SELECT col, state, day${status}, SUM(n) AS n FROM ticket_day_counts GROUP BY col, state, day${status} HAVING SUM(n) <> 0 ORDER BY col, state, day${status}`,
  );
  const fromTickets = await query<Record<string, number>>(
    `SELECT 0 AS col, IF(deleted_at IS NULL, 0, 1) AS state, created_at DIV ${DAY} AS day${status}, COUNT(*) AS n FROM tickets WHERE merged_into_id IS NULL GROUP BY 2, 3${status}
     UNION ALL SELECT 1, IF(deleted_at IS NULL, 0, 1), updated_at DIV ${DAY}${status}, COUNT(*) FROM tickets WHERE merged_into_id IS NULL GROUP BY 2, 3${status}${times}
     ORDER BY col, state, day${status}`,
  );
  const marked = await query("SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'ticket_order_marks'");
  if (orders && byStatus && marked.length) fromTickets.push(...await markedCounts());
  expect(rows(counted)).toEqual(rows(fromTickets));
  if (byStatus) await expectSpanCounts();
}

/**
 * `ticket_span_counts` (migration 052) against the folded day rows: per date column, state, span
 * and status, the sum of its days' rows at FOLDED_SLOT, no row for a span that has none.
 */
export async function expectSpanCounts(): Promise<void> {
  const spans = await query<Record<string, number>>('SELECT col, state, span, status_id, n FROM ticket_span_counts ORDER BY col, state, span, status_id');
  // (The string orders' stretches, migration 063, have no spans.)
  const folded = await query<Record<string, number>>(
    `SELECT col, state, day DIV ${DAY_SPAN} AS span, status_id, SUM(n) AS n FROM ticket_day_counts WHERE slot = ${FOLDED_SLOT} AND col < ${markCol(MARKED_ORDERS[0])}
     GROUP BY col, state, span, status_id HAVING SUM(n) <> 0 ORDER BY col, state, span, status_id`,
  );
  expect(rows(spans)).toEqual(rows(folded));
}

/** Whether the filter counters' triggers keep the time orders' and the customer order's rows (migration 093 has run). */
async function orderFilterRowsKept(): Promise<{ orders: boolean; deltas: boolean }> {
  const [t] = await query<{ sql: string }>(
    "SELECT ACTION_STATEMENT AS `sql` FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME = 'tickets_day_filter_counts_insert'",
  );
  // Migration 095's differences: a time column's day against its base day (last_reply_time's).
  return { orders: !!t && t.sql.includes(`(${CUSTOMER_ORDER_COL}, IF(NEW.deleted_at IS NULL, 0, 1)`), deltas: !!t && t.sql.includes(`<> ${VALUE_DAYS} + NEW.created_at DIV ${DAY}`) };
}

/**
 * `ticket_day_filter_counts` against the tickets (per date column, state, filter column or pair,
 * value, day and, once migration 054 has run, status; the pairs' once 055 has; once 093 has, per
 * time order's and the customer order's day too, no pairs; once 095 has, the time orders' as
 * differences from their base days, with pairs), and its spans. Returns the rows compared.
 */
export async function expectDayFilterCounts(): Promise<number> {
  const { byStatus, pairs } = await dayFilterShape(sequelize().getQueryInterface());
  const status = byStatus ? ', status_id' : '';
  const val2 = pairs ? ', val2' : '';
  const key = `col, state, dim, val${val2}, day${status}`;
  const counted = await query<Record<string, number>>(
    `SELECT ${key}, SUM(n) AS n FROM ticket_day_filter_counts GROUP BY ${key} HAVING SUM(n) <> 0 ORDER BY ${key}`,
  );
  // Each dim's columns: a filter column's (val2 0), a pair's two. Grouped by the selected state and
  // the key's columns after dim, by position. The days: the date columns' own, and the orders'
  // (migration 093) as expectDayCounts finds them (a time's day, else the created_at day; the customer).
  const singles = DAY_FILTER_COLUMNS.map((c): [string, string] => [c, '0']);
  const dims: Array<[string, string]> = [...singles, ...(pairs ? DAY_FILTER_PAIRS.map(([a, b]): [string, string] => [a, b]) : [])];
  // Per column: its col, its day as SQL, its dims, and for migration 095's differences the base
  // day (the rows: +1 at the day and -1 at the base day of each ticket where they differ).
  const kept = await orderFilterRowsKept();
  type Days = [number, string, Array<[string, string]>, string?];
  const timeDay = (c: string) => `IF(${c} IS NULL, created_at DIV ${DAY}, ${VALUE_DAYS} + ${c} DIV ${DAY})`;
  const baseDay = (c: string) => (c === 'last_reply_time' ? `${VALUE_DAYS} + created_at DIV ${DAY}` : `created_at DIV ${DAY}`);
  const days: Days[] = [
    ...DAY_COLUMNS.map((date, col): Days => [col, `${date} DIV ${DAY}`, dims]),
    ...(kept.orders ? [
      ...ORDER_DAY_COLUMNS.map((c, i): Days => (kept.deltas ? [DAY_COLUMNS.length + i, timeDay(c), dims, baseDay(c)] : [DAY_COLUMNS.length + i, timeDay(c), singles])),
      [CUSTOMER_ORDER_COL, 'user_id', singles] as Days,
    ] : []),
  ];
  const groupBy = key.split(', ').map((_, i) => i + 1).filter((i) => i > 3 || i === 2).join(', ');
  const selects = days.flatMap(([col, day, ds, base]) => ds.map(([c, c2], dim) => {
    const one = (at: string, n: string) => `SELECT ${col} AS col, IF(deleted_at IS NULL, 0, 1) AS state, ${dim} AS dim, ${c} AS val${pairs ? `, ${c2} AS val2` : ''}, ${at} AS day${status}, ${n} AS n
    FROM tickets WHERE merged_into_id IS NULL${DAY_FLAG_COLUMNS.includes(c) ? ` AND ${c} = 1` : ''}${base ? ` AND ${day} <> ${base}` : ''}`;
    if (!base) return `${one(day, 'COUNT(*)')} GROUP BY ${groupBy}`;
    return `SELECT col, state, dim, val${val2}, day${status}, SUM(n) AS n FROM (${one(day, '1')} UNION ALL ${one(base, '-1')}) u
    GROUP BY ${key} HAVING SUM(n) <> 0`;
  }));
  const fromTickets = await query<Record<string, number>>(`${selects.join(' UNION ALL ')} ORDER BY ${key}`);
  // Then the string orders' rows (migration 089), in the same key order (their cols are last).
  if (byStatus && pairs && await markFilterRowsKept()) fromTickets.push(...await markedFilterCounts());
  expect(rows(counted)).toEqual(rows(fromTickets));
  // Migration 053's spans against the folded rows, as expectSpanCounts.
  const spanKey = `col, state, dim, val${val2}, span${status}`;
  const spans = await query<Record<string, number>>(`SELECT ${spanKey}, n FROM ticket_span_filter_counts ORDER BY ${spanKey}`);
  const folded = await query<Record<string, number>>(
    `SELECT col, state, dim, val${val2}, day DIV ${DAY_SPAN} AS span${status}, SUM(n) AS n FROM ticket_day_filter_counts WHERE slot = ${FOLDED_SLOT} AND col < ${markCol(MARKED_ORDERS[0])}
     GROUP BY ${spanKey} HAVING SUM(n) <> 0 ORDER BY ${spanKey}`,
  );
  expect(rows(spans)).toEqual(rows(folded));
  return fromTickets.length;
}

/**
 * `work` with the walks of an order's index unbounded: these tests count a list's two statements,
 * and a walk stopped at its bound (how far it goes depends on every ticket of the worker's
 * database) reads its page in one more (ticket-list-walks.test.ts tests that).
 */
async function unbounded<T>(work: () => Promise<T>): Promise<T> {
  const kept = { perSorted: boundedWalks.perSorted, perCovered: boundedWalks.perCovered };
  Object.assign(boundedWalks, { perSorted: { ASC: 1e9, DESC: 1e9 }, perCovered: { customers: 1e9, counted: 1e9 } });
  try { return await work(); } finally { Object.assign(boundedWalks, kept); }
}

/** A deep page of the ticket list: with the day counters' positioning and without it. */
export function deepPages(api: TestApi, base: string) {
  /** The page (pageEdge: the day's edge or id the page starts at) and the list's own statements. */
  async function listed(q: Record<string, unknown>) {
    const { statements, result } = await unbounded(() => capture(() => api.get(base, { limit: 3, ...q })));
    const page = statements.find((s) => withoutSwitches(s.sql).startsWith('SELECT STRAIGHT_JOIN t.* FROM (SELECT'))!;
    // The list's own statements (the counters' and the page's; presenting the page reads the same either way).
    const own = statements.filter((s) => /FROM ticket_list_counts|FROM ticket_day_(filter_)?counts|FROM `tickets`/.test(s.sql)).length;
    const params = page.params as Record<string, unknown>;
    // (A string order's page starts at a mark's key: its id, pageId.)
    return { ids: ids(expectList(result)), count: result.body.count as number, edge: params.pageEdge ?? params.pageId, statements: own };
  }
  /** The same request read by skipping every entry before the page (no positioning). */
  async function skipped(q: Record<string, unknown>) {
    const kept = deepPaging.start;
    deepPaging.start = Number.MAX_SAFE_INTEGER;
    try { return await listed(q); } finally { deepPaging.start = kept; }
  }
  /** `work` with every page from the first positioned (none is below deepPaging.start, none too sparse for a value order's walk). */
  async function positioning<T>(work: () => Promise<T>): Promise<T> {
    const kept = { ...deepPaging };
    Object.assign(deepPaging, { start: 1, rowWalk: 0 });
    try { return await work(); } finally { Object.assign(deepPaging, kept); }
  }
  return { listed, skipped, positioning };
}

/**
 * The list's ids in an order as the database sorts it (NULLs first ascending), of a status or all,
 * and of the values of other ticket columns (`where`: column to value).
 */
export async function ordered(column: string, dir: string, status?: number, where: Record<string, number> = {}): Promise<number[]> {
  const rows = await query<{ id: number }>(
    `SELECT id FROM tickets WHERE deleted_at IS NULL AND merged_into_id IS NULL${status ? ' AND status_id = ?' : ''}${Object.keys(where).map((c) => ` AND ${c} = ?`).join('')} ORDER BY ${column} ${dir}, id ${dir}`,
    [...(status ? [status] : []), ...Object.values(where)],
  );
  return rows.map((r) => Number(r.id));
}

/**
 * Each page of a list in an order (`q0`; `at`: its ids as the database orders them) around each
 * of a test's tickets (`made`) and between, read positioned and by skipping: both the database's
 * page, in the list's two statements. Returns the pages positioned: their offsets and edges.
 */
export async function comparePagesAt(pages: ReturnType<typeof deepPages>, q0: Record<string, unknown>, at: number[], made: number[]) {
  const count = at.length;
  const offsets = [...new Set([1, 2, ...made.map((id) => at.indexOf(id)).filter((i) => i >= 0).flatMap((i) => [i - 1, i]), ...Array.from({ length: 4 }, (_, i) => Math.floor((count * i) / 4))])]
    .filter((o) => o >= 0 && o <= count);
  const positioned: Array<{ offset: number; edge: unknown }> = [];
  for (const offset of offsets) {
    const q = { ...q0, start: offset + 1 };
    const [got, want] = [await pages.listed(q), await pages.skipped(q)];
    expect({ q, ids: got.ids, count: got.count, statements: got.statements }).toEqual({ q, ids: at.slice(offset, offset + 3), count, statements: 2 });
    expect({ q, ids: want.ids, edge: want.edge }).toEqual({ q, ids: at.slice(offset, offset + 3), edge: undefined });
    if (got.edge !== undefined && offset < count) positioned.push({ offset, edge: got.edge });
  }
  return { offsets, positioned };
}
