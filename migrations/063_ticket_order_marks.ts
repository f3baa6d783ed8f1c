import { QueryTypes, type QueryInterface } from 'sequelize';
import { DAY_SLOTS, dropDayCountTriggers, createDayCountTriggers, fillDayCounts, type DayCountColumn } from './026_ticket_day_counts';
import { createDayCustomerCountTriggers, DAY_CUSTOMER_COLUMNS, CUSTOMER_ORDER_COL } from './062_ticket_customer_order_counts';

export const name = '063_ticket_order_marks';

/**
 * Counters for the orders of the ticket's own strings (`subject`, `number`: the column, then id), so
 * that a deep page of the ticket list in one of them, unfiltered or by status, starts near where
 * it begins instead of skipping up to half a million index entries (docs/performance.md, "A deep
 * start"; src/ticket/tickets/listPage.ts, markEdge).
 *
 * A string's value says nothing of how many tickets come before it, and subjects share long
 * prefixes, so no function of the value alone makes units of bounded size (as days and customers
 * are). Instead `ticket_order_marks` holds keys of the order, `(val, ticket_id)`, taken from the
 * listed tickets every MARK_EVERY of them: the marks cut the order into stretches, each named by
 * its first mark's `day` (a number, not in the order: the marks give the order). Each stretch is
 * a `day` of one more `col` of `ticket_day_counts` (MARK_COLS), kept by the same triggers: a
 * listed ticket counts in the stretch of the last mark at or before its key (by status; trashed
 * tickets are not counted: the trash is not positioned). Summing the stretches in the marks'
 * order finds the stretch a page starts in and the tickets before it; the page reads the order's
 * index from the stretch's first mark (descending, from the next mark down), skipping fewer
 * than a stretch of entries. The sentinel mark (`''`, 0) is before every key, so every ticket has
 * a stretch.
 *
 * New tickets make stretches grow (numbers in sequence all land in the last one):
 * src/ticket/tickets/orderMarks.ts splits a stretch of more than twice MARK_EVERY tickets at new
 * marks, moving their tickets' counts, under the column's latch: the sentinel's row, which every
 * trigger that looks a stretch up holds in share mode until its transaction ends (the look-up is
 * a locking read too, so it sees every split committed before it, at any isolation level).
 *
 * Write cost: a create looks up and adds to two more rows (a number's, once it is given: a
 * placeholder, `~...`, is not counted); an update moves a ticket between two rows of a column when
 * its status, trash, merge or that column changes.
 */

/** The string orders positioned by marks, and their `col` in ticket_day_counts (6, 7). */
export const MARKED_ORDERS = ['subject', 'number'] as const;
export type MarkedOrder = (typeof MARKED_ORDERS)[number];
export const markCol = (column: MarkedOrder): number => CUSTOMER_ORDER_COL + 1 + MARKED_ORDERS.indexOf(column);
export const MARK_COLS: readonly number[] = MARKED_ORDERS.map(markCol);

/** Listed tickets between marks when they are made (a stretch of more than twice as many is split). */
export const MARK_EVERY = 4096;

/** The sentinel mark's key: before every key of the order (its day is 0, the first of fillMarks). */
export const SENTINEL = { val: '', ticketId: 0 } as const;

/** A key of an order: its value of the column, then the ticket's id. */
export interface MarkKey { val: string; id: number }

/**
 * The day (stretch) of a ticket in `column`'s order (`r`: its columns' prefix): the last mark at or
 * before its key, read locking (the triggers' look-up, after the latch). By the primary key: with
 * few marks the optimiser took the `day` index, sorted the column's marks and locked every one.
 */
const stretchOf = (column: MarkedOrder, r: string) => {
  const t = r || 'tickets.';
  return `(SELECT m.day FROM ticket_order_marks m FORCE INDEX (PRIMARY) WHERE m.col = ${markCol(column)} AND (m.val < ${t}${column} OR (m.val = ${t}${column} AND m.ticket_id <= ${t}id))
    ORDER BY m.val DESC, m.ticket_id DESC LIMIT 1 LOCK IN SHARE MODE)`;
};

/** The column's latch, held in share mode by each trigger that looks a stretch up (its split takes it exclusively). */
export const latchSql = (column: MarkedOrder, lock: 'LOCK IN SHARE MODE' | 'FOR UPDATE') =>
  `SELECT day FROM ticket_order_marks WHERE col = ${markCol(column)} AND val = '' AND ticket_id = 0 ${lock}`;

/**
 * Whether an unmerged ticket (`r`: its columns' prefix) counts in a string order's stretches: listed
 * (not trashed), and for the number order, given its number (ticket/tickets/number.ts writes a
 * placeholder first, `~...`, in the same transaction).
 */
export const countedIn = (column: MarkedOrder, r = '') =>
  `${r}deleted_at IS NULL${column === 'number' ? ` AND LEFT(${r || 'tickets.'}number, 1) <> '~'` : ''}`;

const markedColumn = (column: MarkedOrder): DayCountColumn => ({
  col: markCol(column),
  day: (r) => stretchOf(column, r),
  lo: () => '4294967295',
  hi: () => '0',
  counted: (r) => countedIn(column, r),
  key: (r) => `${r}${column}`,
  latch: `(${latchSql(column, 'LOCK IN SHARE MODE')})`,
});

/** Every column the counters keep since this migration. */
export const DAY_MARKED_COLUMNS = [...DAY_CUSTOMER_COLUMNS, ...MARKED_ORDERS.map(markedColumn)];

/**
 * The listed tickets a string order's stretch counts, from the key bound as `:fromVal, :fromId`
 * (at or after it) to `:toVal, :toId` (before it; with `to` false, to the end), as the FROM and
 * WHERE of a statement: a range of the order's index.
 */
export const stretchTickets = (column: MarkedOrder, to: boolean) =>
  `tickets FORCE INDEX (tickets_list_${column}) WHERE merged_into_id IS NULL AND ${countedIn(column)} AND ${keyIs(column, 'id', '>=', 'from')}${to ? ` AND ${keyIs(column, 'id', '<', 'to')}` : ''}`;

/**
 * The string orders' counters from the tickets, a stretch at a time (after fillMarks): each a range
 * of the order's index, where a look-up of each ticket's stretch (the triggers' way, in one
 * statement) took 90 s at a million tickets.
 */
export async function fillMarkCounts(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`DELETE FROM ticket_day_counts WHERE col IN (${MARK_COLS.join(', ')})`);
  await eachStretch(q, (column, to, replacements) => q.sequelize.query(
    `INSERT INTO ticket_day_counts (col, state, day, status_id, slot, n, lo_id, hi_id)
     SELECT ${markCol(column)}, 0, :day, status_id, id MOD ${DAY_SLOTS}, COUNT(*), 4294967295, 0 FROM ${stretchTickets(column, to)}
     GROUP BY status_id, id MOD ${DAY_SLOTS}`,
    { replacements },
  ));
}

/**
 * `fill` for each stretch of each string order, one at a time in the marks' order: `to`, whether it
 * has an end (a next mark), and its values for stretchTickets (`day`: its mark's).
 */
export async function eachStretch(q: QueryInterface, fill: (column: MarkedOrder, to: boolean, replacements: Record<string, unknown>) => Promise<unknown>): Promise<void> {
  for (const column of MARKED_ORDERS) {
    const marks = await q.sequelize.query<{ val: string; id: number; day: number }>(
      'SELECT val, ticket_id AS id, day FROM ticket_order_marks WHERE col = ? ORDER BY val, ticket_id', { replacements: [markCol(column)], type: QueryTypes.SELECT },
    );
    for (const [i, mark] of marks.entries()) {
      const next = marks[i + 1];
      await fill(column, !!next, { day: mark.day, fromVal: mark.val, fromId: mark.id, ...(next ? { toVal: next.val, toId: next.id } : {}) });
    }
  }
}

/** The current triggers and fill (the benchmark's bulk load uses these, as the migrations do: the marks first). */
export const createDayMarkCountTriggers = (q: QueryInterface) => createDayCountTriggers(q, true, DAY_MARKED_COLUMNS);
export async function fillDayMarkCounts(q: QueryInterface): Promise<void> {
  await fillDayCounts(q, true, DAY_CUSTOMER_COLUMNS);
  await fillMarkCounts(q);
}

/**
 * A key `(value, id)` compared to one bound as `:<name>Val`, `:<name>Id` (`op` '>=': at or after
 * it), as SQL of the key's two columns: a range of an index on them.
 */
export const keyIs = (value: string, id: string, op: '>=' | '>' | '<' | '<=', name: string) =>
  `(${value} ${op[0]} :${name}Val OR (${value} = :${name}Val AND ${id} ${op} :${name}Id))`;

/** Runs a SELECT with named values (the migration's query interface, or a transaction's statement). */
export type RunSelect = <T extends object>(sql: string, values: Record<string, unknown>) => Promise<T[]>;

/**
 * The keys of listed tickets every `every` of them in `column`'s order after `from` and before `to`
 * (null: to the end): each a step of `every - 1` entries of the order's index past the last.
 */
export async function markKeys(run: RunSelect, column: MarkedOrder, from: MarkKey, to: MarkKey | null, every = MARK_EVERY): Promise<MarkKey[]> {
  const keys: MarkKey[] = [];
  for (let at = from; ;) {
    const [next] = await run<{ val: string; id: number }>(
      `SELECT ${column} AS val, id FROM tickets FORCE INDEX (tickets_list_${column})
       WHERE deleted_at IS NULL AND merged_into_id IS NULL AND ${keyIs(column, 'id', '>', 'at')}${to ? ` AND ${keyIs(column, 'id', '<', 'to')}` : ''}
       ORDER BY ${column}, id LIMIT ${every - 1}, 1`,
      { atVal: at.val, atId: at.id, ...(to ? { toVal: to.val, toId: to.id } : {}) },
    );
    if (!next) return keys;
    at = { val: next.val, id: Number(next.id) };
    keys.push(at);
  }
}

export async function up(q: QueryInterface): Promise<void> {
  // The marks compare as the ticket's columns do: their collation.
  const collations = await q.sequelize.query<{ name: string; c: string }>(
    `SELECT COLUMN_NAME AS name, COLLATION_NAME AS c FROM information_schema.COLUMNS
     WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'tickets' AND COLUMN_NAME IN ('subject', 'number')`, { type: QueryTypes.SELECT },
  );
  const collation = new Set(collations.map((r) => r.c));
  if (collation.size !== 1) throw new Error(`tickets.subject and tickets.number compare differently: ${[...collation].join(', ')}`);
  await q.sequelize.query(`CREATE TABLE ticket_order_marks (
    col TINYINT UNSIGNED NOT NULL,
    val VARCHAR(255) NOT NULL COLLATE ${[...collation][0]},
    ticket_id INT UNSIGNED NOT NULL,
    day INT UNSIGNED NOT NULL,
    PRIMARY KEY (col, val, ticket_id),
    UNIQUE KEY ticket_order_marks_day (col, day)
  ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`);
  await fillMarks(q);
  await dropDayCountTriggers(q);
  await createDayMarkCountTriggers(q);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  // These columns' rows, unfolded: the scheduler's fold folds them.
  await fillMarkCounts(q);
}

/**
 * The marks of the string orders from the listed tickets (the migration, and the benchmark after
 * its bulk load, before the counters' fill): the sentinel, then a mark every `every` tickets.
 */
export async function fillMarks(q: QueryInterface, every = MARK_EVERY): Promise<void> {
  await q.sequelize.query('DELETE FROM ticket_order_marks');
  const run: RunSelect = <T extends object>(sql: string, values: Record<string, unknown>) => q.sequelize.query<T>(sql, { replacements: values, type: QueryTypes.SELECT });
  for (const column of MARKED_ORDERS) {
    const keys = await markKeys(run, column, { val: SENTINEL.val, id: SENTINEL.ticketId }, null, every);
    const marks = [[SENTINEL.val, SENTINEL.ticketId], ...keys.map((k) => [k.val, k.id])];
    for (let i = 0; i < marks.length; i += 1000) {
      const chunk = marks.slice(i, i + 1000);
      await q.sequelize.query(
        `INSERT INTO ticket_order_marks (col, val, ticket_id, day) VALUES ${chunk.map(() => '(?, ?, ?, ?)').join(', ')}`,
        { replacements: chunk.flatMap(([val, id], j) => [markCol(column), val, id, i + j]) },
      );
    }
  }
}

export async function down(q: QueryInterface): Promise<void> {
  await dropDayCountTriggers(q);
  await createDayCustomerCountTriggers(q);
  await q.sequelize.query(`DELETE FROM ticket_day_counts WHERE col IN (${MARK_COLS.join(', ')})`);
  await q.sequelize.query(`DELETE FROM ticket_span_counts WHERE col IN (${MARK_COLS.join(', ')})`);
  await q.dropTable('ticket_order_marks');
}
