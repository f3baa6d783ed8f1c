import type { QueryInterface } from 'sequelize';
import { DAY } from './026_ticket_day_counts';
import {
  DATE_FILTER_COLUMNS, createDayFilterCountTriggers, dropDayFilterCountTriggers, fillDayFilterCounts, type FilterDayColumn,
} from './028_ticket_day_filter_counts';
import { ORDER_DAY_COLUMNS, VALUE_DAYS, orderDayCol } from './061_ticket_day_order_counts';
import { CUSTOMER_ORDER_COL } from './062_ticket_customer_order_counts';
import { createDayOrderFilterCountTriggers, ORDER_FILTER_COLUMNS } from './093_ticket_order_filter_counts';

export const name = '095_ticket_time_order_filter_deltas';

/**
 * The time orders' filter counters (migration 093's `col` 2-4 of ticket_day_filter_counts) as
 * differences from the created_at column's (`col` 0), with the pairs' rows too.
 *
 * A deep page of two of priority, department, brand and channel in a time order
 * (`last_reply_time`, `due_time`, `resolved_time`) was positioned by nothing: it walked the
 * order's index from the nearer end (at 1M, a pair at `start=25,000`: 109-166 ms). Keeping the
 * pairs' rows for those columns as 093 keeps one filter's (tried: docs/performance.md, Not done
 * yet) positions it, but a create wrote 18 more rows and the floor's creates fell by about 30 %.
 *
 * At its create a ticket holds in those orders the position of its created_at day: its
 * `last_reply_time` is the create's own time (the day VALUE_DAYS + its created_at day), and
 * without a due or resolved time it is in the NULL block, by created_at day. So each of these
 * columns keeps only where a ticket's day differs from that (`base`): +1 at its day, -1 at the
 * base day, for every filter column and pair; the counts of a day are column 0's rows of the
 * same day (shifted by VALUE_DAYS for `last_reply_time`) plus these (listPage.ts, DaySource.deltaOf). A
 * create writes none of them (093 wrote 12 rows and one per flag set); a reply on a later day,
 * a due time, a resolution, and then each change of status, value or state of such a ticket,
 * writes its difference's rows (two statements per column it differs in; since migration 096 a
 * change of values alone one per changed filter column, of its dims only).
 */

/** The base day of a time column: its day at a ticket's create. */
const baseDay = (column: (typeof ORDER_DAY_COLUMNS)[number]) => (r: string) => (column === 'last_reply_time'
  ? `${VALUE_DAYS} + ${r}created_at DIV ${DAY}` : `${r}created_at DIV ${DAY}`);

/** The time orders' columns as differences, with the pairs' rows. */
const TIME_DELTA_COLUMNS: readonly FilterDayColumn[] = ORDER_DAY_COLUMNS.map((column) => {
  const c = ORDER_FILTER_COLUMNS.find((o) => o.col === orderDayCol(column))!;
  return { ...c, pairs: true, base: baseDay(column) };
});

/** The days a column's base rows (column 0's) are shifted by, per time column (a multiple of the spans' 32 days). */
export const TIME_DELTA_SHIFTS: Readonly<Record<number, number>> = Object.fromEntries(
  ORDER_DAY_COLUMNS.map((column) => [orderDayCol(column), column === 'last_reply_time' ? VALUE_DAYS : 0]),
);

/** Every column the filter counters keep since this migration. */
export const DAY_ORDER_DELTA_FILTER_COLUMNS: readonly FilterDayColumn[] = [
  ...DATE_FILTER_COLUMNS, ...TIME_DELTA_COLUMNS, ...ORDER_FILTER_COLUMNS.filter((c) => c.col === CUSTOMER_ORDER_COL),
];

/** The current triggers and fill (the benchmark's bulk load uses these, as the migrations do). */
export const createDayOrderDeltaFilterCountTriggers = (q: QueryInterface) => createDayFilterCountTriggers(q, DAY_ORDER_DELTA_FILTER_COLUMNS);
export const fillDayOrderDeltaFilterCounts = (q: QueryInterface) => fillDayFilterCounts(q, DAY_ORDER_DELTA_FILTER_COLUMNS);

export async function up(q: QueryInterface): Promise<void> {
  await dropDayFilterCountTriggers(q);
  await createDayOrderDeltaFilterCountTriggers(q);
  // After the triggers (migrations run before the web processes start: nothing else writes now):
  // the time columns' rows again, as differences (unfolded: the scheduler's fold folds them).
  await fillDayFilterCounts(q, TIME_DELTA_COLUMNS);
}

export async function down(q: QueryInterface): Promise<void> {
  await dropDayFilterCountTriggers(q);
  await createDayOrderFilterCountTriggers(q);
  await fillDayFilterCounts(q, ORDER_FILTER_COLUMNS.filter((c) => c.col !== CUSTOMER_ORDER_COL));
}
