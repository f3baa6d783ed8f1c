import type { QueryInterface } from 'sequelize';
import { dropDayCountTriggers } from './026_ticket_day_counts';
import { createDayStatusCountTriggers } from './027_ticket_day_status_counts';
import { createDayFilterCountTriggers, dropDayFilterCountTriggers } from './028_ticket_day_filter_counts';

export const name = '051_day_counter_fold';

/**
 * The day counters (migrations 026-028) keep a row per slot so that today's creates and updates
 * do not all wait on one row; a past day needs no slots, and its eight rows per status (or value)
 * are what a deep page's positioning and a date range's count read: 8 times the rows, growing
 * with the help desk's age. The scheduler's fold (src/ticket/tickets/dayCounterFold.ts) sums a
 * past day's rows into one. A ticket leaving such a day then finds no row at its slot: the
 * triggers' removal becomes an upsert (a row of -1, folded in turn). The rows of a day are read
 * together from now on: one row's `n` is no longer the count of the tickets its bounds hold.
 */
export async function up(q: QueryInterface): Promise<void> {
  await dropDayCountTriggers(q);
  await createDayStatusCountTriggers(q);
  await dropDayFilterCountTriggers(q);
  await createDayFilterCountTriggers(q);
}

/** The upserts count exactly on unfolded rows too, and an UPDATE would lose a folded day's removals: kept. */
export async function down(): Promise<void> {}
