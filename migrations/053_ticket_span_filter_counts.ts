import type { QueryInterface } from 'sequelize';
import { dayFilterShape } from './028_ticket_day_filter_counts';
import { DAY_SPAN, FOLDED_SLOT } from './052_ticket_span_counts';

export const name = '053_ticket_span_filter_counts';

/**
 * Migration 052's spans for migration 028's counters of one filter column (priority, department,
 * brand, channel and the flags): the sum of a span's folded days per date column, state, filter
 * column and value, so that a deep page of the list narrowed by one of them is positioned from a
 * row per span of its value and then one span's days, not a row per past day. Kept by the same
 * fold (src/ticket/tickets/dayCounterFold.ts), in the transaction that folds the days; the rows not
 * folded yet are found by `ticket_day_filter_counts_unfolded`, a span's days by
 * `ticket_day_filter_counts_span` (the span before the value: a department's tree is a list of
 * values, and a span's rows of all values of one column are few). Refilling migration 028's
 * counters empties this table with them.
 */
export async function up(q: QueryInterface): Promise<void> {
  // Per status too when 028's rows are (migration 054 made them so: a way down to here and up
  // again), and with the pairs' val2 when they have it (055).
  const shape = await dayFilterShape(q);
  const status = shape.byStatus ? ', status_id' : '';
  const val2 = shape.pairs ? ', val2' : '';
  await q.sequelize.query(`CREATE TABLE ticket_span_filter_counts (
    col TINYINT UNSIGNED NOT NULL,
    state TINYINT UNSIGNED NOT NULL,
    dim TINYINT UNSIGNED NOT NULL,
    val INT UNSIGNED NOT NULL,${val2 ? '\n    val2 INT UNSIGNED NOT NULL DEFAULT 0,' : ''}
    span INT UNSIGNED NOT NULL,${status ? '\n    status_id INT UNSIGNED NOT NULL,' : ''}
    n BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (col, state, dim, val${val2}, span${status})
  ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  await q.sequelize.query(`ALTER TABLE ticket_day_filter_counts ADD COLUMN span INT UNSIGNED AS (day DIV ${DAY_SPAN}) VIRTUAL,
    ADD INDEX ticket_day_filter_counts_unfolded (col, state, dim, slot), ADD INDEX ticket_day_filter_counts_span (col, state, dim, span, val${val2})`);
  // Rows already folded at FOLDED_SLOT (by 052's fold): their spans' sums.
  await q.sequelize.query(`INSERT INTO ticket_span_filter_counts (col, state, dim, val${val2}, span${status}, n)
    SELECT col, state, dim, val${val2}, span${status}, SUM(n) FROM ticket_day_filter_counts WHERE slot = ${FOLDED_SLOT}
    GROUP BY col, state, dim, val${val2}, span${status} HAVING SUM(n) <> 0`);
}

/** The folded rows stay at FOLDED_SLOT: every reader sums a day's rows whatever their slots. */
export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE ticket_day_filter_counts DROP INDEX ticket_day_filter_counts_span, DROP INDEX ticket_day_filter_counts_unfolded, DROP COLUMN span');
  await q.dropTable('ticket_span_filter_counts');
}
