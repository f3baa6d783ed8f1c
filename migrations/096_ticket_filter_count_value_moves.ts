import type { QueryInterface } from 'sequelize';
import { dropDayFilterCountTriggers } from './028_ticket_day_filter_counts';
import { createDayOrderDeltaFilterCountTriggers } from './095_ticket_time_order_filter_deltas';

export const name = '096_ticket_filter_count_value_moves';

/**
 * The filter counters' triggers (migrations 028-095) again, as their code writes them now: a change
 * of priority, department, brand, channel or a flag moves the rows of that column's dims (its own
 * and its pairs') in one statement per changed column, not one per dim; and a ticket's difference
 * rows of a time order (095) move only those dims too, not all of them both ways. The counts are
 * the same (nothing to fill): docs/performance.md, "Trigger statements".
 *
 * `down` has nothing to restore: the triggers the code writes are these.
 */

async function recreate(q: QueryInterface): Promise<void> {
  await dropDayFilterCountTriggers(q);
  await createDayOrderDeltaFilterCountTriggers(q);
}

export const up = recreate;
export const down = recreate;
