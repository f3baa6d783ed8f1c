import type { QueryInterface } from 'sequelize';
import { createDayFilterCountTriggers, dropDayFilterCountTriggers, fillDayFilterCounts } from './028_ticket_day_filter_counts';

export const name = '054_ticket_day_filter_status';

/**
 * Migration 028's day counters of one filter column (and 053's spans of them) per status as well:
 * a date range narrowed by a status and one other counted filter (last year's open tickets of a
 * department) sums counters for its whole days instead of COUNTing its matches (the year's
 * 500,000 index entries at a million tickets), and a deep page of a status and one other counted
 * filter is positioned by them. A list of the filter alone sums its value's rows of every status.
 *
 * `status_id` follows `day` in the key, as in migration 027's `ticket_day_counts`: a range of days
 * of one value stays one range of the key, whatever the statuses asked for, and the fold (which
 * sums a day's rows per the key's columns after `day`) folds a day per status. Write cost: a
 * ticket's status change now moves its rows of every filter column (for both date columns), as a
 * change of its day did already: 8-14 rows out and as many in, where it moved none.
 */
export async function up(q: QueryInterface): Promise<void> {
  await dropDayFilterCountTriggers(q);
  // The rows are filled again from the tickets below: a status for each one.
  await q.sequelize.query('DELETE FROM ticket_day_filter_counts');
  await q.sequelize.query('DELETE FROM ticket_span_filter_counts');
  await q.sequelize.query(`ALTER TABLE ticket_day_filter_counts ADD COLUMN status_id INT UNSIGNED NOT NULL AFTER day,
    DROP PRIMARY KEY, ADD PRIMARY KEY (col, state, dim, val, day, status_id, slot)`);
  await q.sequelize.query(`ALTER TABLE ticket_span_filter_counts ADD COLUMN status_id INT UNSIGNED NOT NULL AFTER span,
    DROP PRIMARY KEY, ADD PRIMARY KEY (col, state, dim, val, span, status_id)`);
  // The triggers and the fill for the table as it now is (028's, per status). Migrations run
  // before the web processes start: nothing writes a ticket meanwhile.
  await createDayFilterCountTriggers(q);
  await fillDayFilterCounts(q);
}

export async function down(q: QueryInterface): Promise<void> {
  await dropDayFilterCountTriggers(q);
  await q.sequelize.query('DELETE FROM ticket_day_filter_counts');
  await q.sequelize.query('DELETE FROM ticket_span_filter_counts');
  await q.sequelize.query('ALTER TABLE ticket_day_filter_counts DROP PRIMARY KEY, DROP COLUMN status_id, ADD PRIMARY KEY (col, state, dim, val, day, slot)');
  await q.sequelize.query('ALTER TABLE ticket_span_filter_counts DROP PRIMARY KEY, DROP COLUMN status_id, ADD PRIMARY KEY (col, state, dim, val, span)');
  await createDayFilterCountTriggers(q);
  await fillDayFilterCounts(q);
}
