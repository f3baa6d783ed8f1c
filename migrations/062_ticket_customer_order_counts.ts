import type { QueryInterface } from 'sequelize';
import { createDayCountTriggers, dropDayCountTriggers, fillDayCounts, type DayCountColumn } from './026_ticket_day_counts';
import { DAY_AND_TIME_COLUMNS, createDayOrderCountTriggers } from './061_ticket_day_order_counts';

export const name = '062_ticket_customer_order_counts';

/**
 * Counters for the customer order (`order_column=user_id`: each customer's tickets in id order, one
 * customer after another), so that a deep page of the ticket list in it, unfiltered or by status,
 * starts at its customer's first ticket instead of skipping up to half a million index entries
 * (docs/performance.md, "A deep start"; src/ticket/tickets/listPage.ts).
 *
 * One more `col` of `ticket_day_counts` (CUSTOMER_ORDER_COL), kept by the same triggers, whose unit
 * is the customer: its `day` holds the ticket's `user_id` (never NULL). So a row counts a customer's
 * tickets of a state and status (per slot until the scheduler's fold sums them, as a past day's),
 * `ticket_span_counts` sums 32 customers' (`user_id DIV 32`), and the running sums that find a
 * deep page's day find its customer and the tickets of the customers before it, reading a row per
 * span of 32 customers and one span's customers. The fold folds this column's rows whatever their
 * "day" (src/ticket/tickets/dayCounterFold.ts). (ticket_user_counts, migration 035, counts the same
 * per customer, without the spans a running sum needs.)
 *
 * Write cost: a create adds to one more row; a change of status, customer, trash or merge moves
 * the ticket between two.
 */

/** The counters' `col` of the customer order. */
export const CUSTOMER_ORDER_COL = DAY_AND_TIME_COLUMNS.length;

const customerColumn: DayCountColumn = { col: CUSTOMER_ORDER_COL, day: (r) => `${r}user_id`, lo: (r) => `${r}id`, hi: (r) => `${r}id` };

/** Every column the counters keep since this migration. */
export const DAY_CUSTOMER_COLUMNS = [...DAY_AND_TIME_COLUMNS, customerColumn];

/** The current triggers and fill (the benchmark's bulk load uses these, as the migrations do). */
export const createDayCustomerCountTriggers = (q: QueryInterface) => createDayCountTriggers(q, true, DAY_CUSTOMER_COLUMNS);
export const fillDayCustomerCounts = (q: QueryInterface) => fillDayCounts(q, true, DAY_CUSTOMER_COLUMNS);

export async function up(q: QueryInterface): Promise<void> {
  await dropDayCountTriggers(q);
  await createDayCustomerCountTriggers(q);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  // Every column's rows again, unfolded: the scheduler's fold folds them within the hour.
  await fillDayCustomerCounts(q);
}

export async function down(q: QueryInterface): Promise<void> {
  await dropDayCountTriggers(q);
  await createDayOrderCountTriggers(q);
  await q.sequelize.query(`DELETE FROM ticket_day_counts WHERE col = ${CUSTOMER_ORDER_COL}`);
  await q.sequelize.query(`DELETE FROM ticket_span_counts WHERE col = ${CUSTOMER_ORDER_COL}`);
}
