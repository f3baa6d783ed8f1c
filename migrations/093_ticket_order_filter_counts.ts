import type { QueryInterface } from 'sequelize';
import { DAY_COLUMNS } from './026_ticket_day_counts';
import {
  DATE_FILTER_COLUMNS, createDayFilterCountTriggers, dropDayFilterCountTriggers, fillDayFilterCounts, type FilterDayColumn,
} from './028_ticket_day_filter_counts';
import { DAY_CUSTOMER_COLUMNS } from './062_ticket_customer_order_counts';

export const name = '093_ticket_order_filter_counts';

/**
 * A deep page of the ticket list in a time order (`last_reply_time`, `due_time`, `resolved_time`)
 * or the customer order (`user_id`), narrowed by a priority, a department, a brand, a channel or a
 * flag (with a status or not), was positioned by nothing: migrations 061 and 062 count those
 * orders' days (and customers) per status only, so the page walked the order's index from the
 * nearer end, up to half of the matches' entries (at 1M, `priority=1&start=100,000` by
 * `due_time`: about 400,000 entries, each tested on its ticket; docs/performance.md, "A deep start").
 *
 * Migration 028's counters of one filter column now keep those orders' columns too (061's and
 * 062's `col` and day: a time's day or, without one, the created_at day; the customer), per
 * status, one column's value per `dim` (no pairs), flags counted where set, as the date columns'
 * rows are. So listPage.ts positions such a page as a date column's (dayPositionSql): the filter's
 * spans and one span's days give the day (or customer) it starts in and the matches before it.
 *
 * Write cost: a create adds to 16 more rows (four value columns for four columns, in the same
 * statement as the date columns') and a row per flag it has set per column; a change of status,
 * state or merge moves them all; a reply on another day than the last moves its `last_reply_time`
 * rows; a value's change moves its rows of every column in one statement (before, one per date
 * column).
 */

/** The columns of migrations 061 and 062 (their days as ticket_day_counts keeps them), without pairs. */
export const ORDER_FILTER_COLUMNS: readonly FilterDayColumn[] = DAY_CUSTOMER_COLUMNS
  .filter((c) => c.col >= DAY_COLUMNS.length)
  .map((c) => ({ col: c.col, day: c.day, pairs: false }));

/** Every column the filter counters keep since this migration: the date columns' and the orders'. */
export const DAY_ORDER_FILTER_COLUMNS: readonly FilterDayColumn[] = [...DATE_FILTER_COLUMNS, ...ORDER_FILTER_COLUMNS];

/** The current triggers and fill (the benchmark's bulk load uses these, as the migrations do). */
export const createDayOrderFilterCountTriggers = (q: QueryInterface) => createDayFilterCountTriggers(q, DAY_ORDER_FILTER_COLUMNS);
export const fillDayOrderFilterCounts = (q: QueryInterface) => fillDayFilterCounts(q, DAY_ORDER_FILTER_COLUMNS);

export async function up(q: QueryInterface): Promise<void> {
  await dropDayFilterCountTriggers(q);
  await createDayOrderFilterCountTriggers(q);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  // The orders' rows, unfolded: the scheduler's fold folds them within the hour.
  await fillDayFilterCounts(q, ORDER_FILTER_COLUMNS);
}

export async function down(q: QueryInterface): Promise<void> {
  await dropDayFilterCountTriggers(q);
  await createDayFilterCountTriggers(q);
  const cols = ORDER_FILTER_COLUMNS.map((c) => c.col).join(', ');
  await q.sequelize.query(`DELETE FROM ticket_day_filter_counts WHERE col IN (${cols})`);
  await q.sequelize.query(`DELETE FROM ticket_span_filter_counts WHERE col IN (${cols})`);
}
