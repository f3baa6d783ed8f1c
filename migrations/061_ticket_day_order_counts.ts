import type { QueryInterface } from 'sequelize';
import { DAY, DAY_COLUMNS, dateDayColumn, dropDayCountTriggers, createDayCountTriggers, fillDayCounts, type DayCountColumn } from './026_ticket_day_counts';
import { createDayStatusCountTriggers } from './027_ticket_day_status_counts';

export const name = '061_ticket_day_order_counts';

/**
 * Day counters for the orders of the nullable time columns (`last_reply_time`, `due_time`,
 * `resolved_time`), so that a deep page of the ticket list in one of them, unfiltered or by status,
 * starts where the counters place it instead of skipping up to half a million index entries
 * (docs/performance.md, "A deep start"; src/ticket/tickets/listPage.ts).
 *
 * Each is one more `col` of `ticket_day_counts` (2, 3, 4: ORDER_DAY_COLUMNS), kept by the same
 * triggers, folded and spanned as the date columns' (migrations 051-053). The list's order of such
 * a column is (column, id), NULLs first ascending (MariaDB's): first the tickets without a time,
 * in id order, then the times. So a ticket's "day" in these counters is
 * - with no time: its created_at day (below VALUE_DAYS), with its id in the row's bounds: the NULL
 *   block is positioned as the id order is, from a day's id bound (ids follow created_at);
 * - with a time: VALUE_DAYS plus the time's UTC day, with neutral bounds (lo 4294967295, hi 0,
 *   which LEAST and GREATEST never take), so these rows never narrow the NULL block's bounds.
 * Both kinds sort in the list's order: every NULL-block day before every time's.
 *
 * Write cost: a create adds to three more rows; an update moves a ticket between two rows of a
 * column when its day there changes (a reply on another day than the last, a due time or a
 * resolution set or cleared, a status change: for each of the three columns).
 */

/** The nullable time columns whose order the day counters position: `col` 2, 3 and 4 of ticket_day_counts. */
export const ORDER_DAY_COLUMNS = ['last_reply_time', 'due_time', 'resolved_time'] as const;

/** Where a time's days start in these columns' rows (above every created_at day: times are INT UNSIGNED, at most day 49,710). */
export const VALUE_DAYS = 65_536;

/** The counters' `col` of an order column of ORDER_DAY_COLUMNS. */
export const orderDayCol = (column: (typeof ORDER_DAY_COLUMNS)[number]): number => DAY_COLUMNS.length + ORDER_DAY_COLUMNS.indexOf(column);

const orderDayColumn = (c: (typeof ORDER_DAY_COLUMNS)[number]): DayCountColumn => ({
  col: orderDayCol(c),
  day: (r) => `IF(${r}${c} IS NULL, ${r}created_at DIV ${DAY}, ${VALUE_DAYS} + ${r}${c} DIV ${DAY})`,
  lo: (r) => `IF(${r}${c} IS NULL, ${r}id, 4294967295)`,
  hi: (r) => `IF(${r}${c} IS NULL, ${r}id, 0)`,
});

/** Every column the counters keep since this migration: the date columns' (026) and the order columns'. */
export const DAY_AND_TIME_COLUMNS = [...DAY_COLUMNS.map((_, col) => dateDayColumn(col)), ...ORDER_DAY_COLUMNS.map(orderDayColumn)];

/** The current triggers and fill (the benchmark's bulk load uses these, as the migrations do). */
export const createDayOrderCountTriggers = (q: QueryInterface) => createDayCountTriggers(q, true, DAY_AND_TIME_COLUMNS);
export const fillDayOrderCounts = (q: QueryInterface) => fillDayCounts(q, true, DAY_AND_TIME_COLUMNS);

export async function up(q: QueryInterface): Promise<void> {
  await dropDayCountTriggers(q);
  await createDayOrderCountTriggers(q);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  // Every column's rows again, unfolded: the scheduler's fold folds the past days within the hour.
  await fillDayOrderCounts(q);
}

export async function down(q: QueryInterface): Promise<void> {
  await dropDayCountTriggers(q);
  await createDayStatusCountTriggers(q);
  await q.sequelize.query(`DELETE FROM ticket_day_counts WHERE col >= ${DAY_COLUMNS.length}`);
  await q.sequelize.query(`DELETE FROM ticket_span_counts WHERE col >= ${DAY_COLUMNS.length}`);
}
