import type { QueryInterface } from 'sequelize';
import { dropDayCountTriggers } from './026_ticket_day_counts';
import { createDayFilterCountTriggers, dropDayFilterCountTriggers } from './028_ticket_day_filter_counts';
import { createDayMarkCountTriggers } from './063_ticket_order_marks';

export const name = '064_ticket_counter_statements';

/**
 * The day counters' triggers (migrations 026-063) again, as their code writes them now: the rows
 * one change of a ticket adds to or takes from are one statement where they can be (every plain
 * column's rows of `ticket_day_counts`, every value column's and pair's of
 * `ticket_day_filter_counts`), no longer a statement per row; and the look-up of a string order's
 * stretch reads the marks' primary key. The counts are the same (nothing to fill): what changes is
 * what a ticket's write costs MariaDB (docs/performance.md, "Trigger statements": a create's
 * triggers ran 32 statements, a status change's about 60).
 *
 * `down` has nothing to restore: the triggers the code writes are these.
 */

async function recreate(q: QueryInterface): Promise<void> {
  await dropDayCountTriggers(q);
  await createDayMarkCountTriggers(q);
  await dropDayFilterCountTriggers(q);
  await createDayFilterCountTriggers(q);
}

export const up = recreate;
export const down = recreate;
