import type { QueryInterface } from 'sequelize';
import { createDayCountTriggers, dropDayCountTriggers, fillDayCounts } from './026_ticket_day_counts';

export const name = '027_ticket_day_status_counts';

/**
 * Migration 026's day counters by status too: the key (col, state, day, status_id, slot). A date
 * range narrowed by status (this year's open tickets) sums its status's counters instead of
 * COUNTing the range's matches (a year and a status at a million tickets: the year's 500,000
 * index entries read per request), and a deep page of the list narrowed by status finds its day as
 * the unfiltered list does (src/ticket/tickets/listPage.ts). Write cost: a status change on a
 * ticket also moves it between two rows per date column, as a change of day does.
 */

/** The current triggers and fill (the benchmark's bulk load uses these, as the migrations do). */
export const createDayStatusCountTriggers = (q: QueryInterface) => createDayCountTriggers(q, true);
export const fillDayStatusCounts = (q: QueryInterface) => fillDayCounts(q, true);

export async function up(q: QueryInterface): Promise<void> {
  await dropDayCountTriggers(q);
  await q.sequelize.query(`ALTER TABLE ticket_day_counts ADD COLUMN status_id INT UNSIGNED NOT NULL DEFAULT 0 AFTER day,
    DROP PRIMARY KEY, ADD PRIMARY KEY (col, state, day, status_id, slot)`);
  await createDayStatusCountTriggers(q);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  await fillDayStatusCounts(q);
}

export async function down(q: QueryInterface): Promise<void> {
  await dropDayCountTriggers(q);
  await q.sequelize.query('DELETE FROM ticket_day_counts');
  await q.sequelize.query('ALTER TABLE ticket_day_counts DROP PRIMARY KEY, DROP COLUMN status_id, ADD PRIMARY KEY (col, state, day, slot)');
  await createDayCountTriggers(q);
  await fillDayCounts(q);
}
