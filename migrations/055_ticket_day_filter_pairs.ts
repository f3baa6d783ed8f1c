import type { QueryInterface } from 'sequelize';
import { createDayFilterCountTriggers, DAY_FILTER_COLUMNS, dropDayFilterCountTriggers, fillDayFilterPairs } from './028_ticket_day_filter_counts';

export const name = '055_ticket_day_filter_pairs';

/**
 * Migration 028's day counters (and 053's spans of them) for two filter columns together as well:
 * each pair of priority, department, brand and channel (DAY_FILTER_PAIRS), per status as 054 keys
 * them. A date range narrowed by two of them (last year's urgent tickets of a department: at a
 * million tickets, a COUNT of the year's 500,000 index entries) sums counters, and a deep page of
 * two of them (and a status) is positioned by them, as one filter's is. The flags are not paired:
 * a flag with another filter still counts its matches.
 *
 * A pair's rows are dims after the single columns', with the second column's value in `val2`
 * (0 in a single column's rows), which follows `val` in the key: a range of days of one pair of
 * values is one range of the key. Write cost: a create adds 6 rows per date column (12) to the
 * 8-14 it wrote, and a change of a ticket's status or day moves them too; a change of one value
 * moves its column's row and its three pairs'.
 */
export async function up(q: QueryInterface): Promise<void> {
  await dropDayFilterCountTriggers(q);
  await q.sequelize.query(`ALTER TABLE ticket_day_filter_counts ADD COLUMN val2 INT UNSIGNED NOT NULL DEFAULT 0 AFTER val,
    DROP PRIMARY KEY, ADD PRIMARY KEY (col, state, dim, val, val2, day, status_id, slot),
    DROP INDEX ticket_day_filter_counts_span, ADD INDEX ticket_day_filter_counts_span (col, state, dim, span, val, val2)`);
  await q.sequelize.query(`ALTER TABLE ticket_span_filter_counts ADD COLUMN val2 INT UNSIGNED NOT NULL DEFAULT 0 AFTER val,
    DROP PRIMARY KEY, ADD PRIMARY KEY (col, state, dim, val, val2, span, status_id)`);
  // The triggers for the table as it now is, and the pairs' rows (the single columns' stay as they
  // are, folded or not, with their spans). Migrations run before the web processes start: nothing
  // writes a ticket meanwhile.
  await createDayFilterCountTriggers(q);
  await fillDayFilterPairs(q);
}

export async function down(q: QueryInterface): Promise<void> {
  await dropDayFilterCountTriggers(q);
  await q.sequelize.query('DELETE FROM ticket_day_filter_counts WHERE dim >= :pairs', { replacements: { pairs: DAY_FILTER_COLUMNS.length } });
  await q.sequelize.query('DELETE FROM ticket_span_filter_counts WHERE dim >= :pairs', { replacements: { pairs: DAY_FILTER_COLUMNS.length } });
  await q.sequelize.query(`ALTER TABLE ticket_day_filter_counts DROP INDEX ticket_day_filter_counts_span, DROP PRIMARY KEY, DROP COLUMN val2,
    ADD PRIMARY KEY (col, state, dim, val, day, status_id, slot), ADD INDEX ticket_day_filter_counts_span (col, state, dim, span, val)`);
  await q.sequelize.query('ALTER TABLE ticket_span_filter_counts DROP PRIMARY KEY, DROP COLUMN val2, ADD PRIMARY KEY (col, state, dim, val, span, status_id)');
  await createDayFilterCountTriggers(q);
}
