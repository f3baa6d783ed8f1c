import type { QueryInterface } from 'sequelize';

export const name = '052_ticket_span_counts';

/** Days per span: a span's key is `day DIV DAY_SPAN` (the fold's transaction is one span). */
export const DAY_SPAN = 32;

/** The slot of a past day's folded row: outside the triggers' slots (`id MOD 8`), so no trigger writes it. */
export const FOLDED_SLOT = 8;

/**
 * Sums of migration 027's day counters per span of 32 days, so that positioning a deep page of the
 * ticket list reads a row per span and status and then one span's days, and a date range's count a
 * row per whole span inside it, not a row per past day and status (which grows with the help
 * desk's age: 2,900 rows for two years of four statuses).
 *
 * Kept by the scheduler's fold alone (src/ticket/tickets/dayCounterFold.ts), in the transaction
 * that folds the days: a past day's rows are summed into its row at `FOLDED_SLOT`, which the
 * triggers never write, and the rows it folds are added to its span's row here. So a span's row is
 * exactly the sum of its days' folded rows, and a span's tickets are its row plus its days' rows
 * at the other slots (today's, and the removals written since the last fold): the index
 * `ticket_day_counts_unfolded` finds those, and `ticket_day_counts_span` a span's days. A ticket
 * write costs nothing more (but the two indexes' entries of a counter row it creates). Refilling
 * the day counters from the tickets (`fillDayCounts`) empties this table with them.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`CREATE TABLE ticket_span_counts (
    col TINYINT UNSIGNED NOT NULL,
    state TINYINT UNSIGNED NOT NULL,
    span INT UNSIGNED NOT NULL,
    status_id INT UNSIGNED NOT NULL,
    n BIGINT NOT NULL DEFAULT 0,
    lo_id INT UNSIGNED NOT NULL,
    hi_id INT UNSIGNED NOT NULL,
    PRIMARY KEY (col, state, span, status_id)
  ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  // A day's span as a column (computed, not stored), so that one span's days are an index's range
  // whichever span a statement picks (a range of `day` from a joined row is not one).
  await q.sequelize.query(`ALTER TABLE ticket_day_counts ADD COLUMN span INT UNSIGNED AS (day DIV ${DAY_SPAN}) VIRTUAL,
    ADD INDEX ticket_day_counts_unfolded (col, state, slot), ADD INDEX ticket_day_counts_span (col, state, span)`);
  // Rows already folded here (a way back down and up again keeps them): their spans' sums.
  await q.sequelize.query(`INSERT INTO ticket_span_counts (col, state, span, status_id, n, lo_id, hi_id)
    SELECT col, state, span, status_id, SUM(n), MIN(lo_id), MAX(hi_id) FROM ticket_day_counts WHERE slot = ${FOLDED_SLOT}
    GROUP BY col, state, span, status_id HAVING SUM(n) <> 0`);
}

/** The folded rows stay at `FOLDED_SLOT`: every reader sums a day's rows whatever their slots, and migration 051's fold folds them as any. */
export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE ticket_day_counts DROP INDEX ticket_day_counts_span, DROP INDEX ticket_day_counts_unfolded, DROP COLUMN span');
  await q.dropTable('ticket_span_counts');
}
