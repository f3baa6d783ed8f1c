import type { QueryInterface } from 'sequelize';
import { dropDayCountTriggers } from './026_ticket_day_counts';
import { createDayMarkCountTriggers } from './063_ticket_order_marks';

export const name = '065_ticket_stretch_once';

/**
 * The day counters' triggers (migrations 026-064) again, as their code writes them now: a change
 * that moves a listed ticket between a string order's rows but keeps its key (a status change, a
 * reply's often) looks its stretch up once, not for the row it leaves and again for the one it
 * joins, and writes both rows in one statement; it takes both orders' latches in one statement.
 * The counts are the same (nothing to fill): docs/performance.md, "Trigger statements".
 *
 * `down` has nothing to restore: the triggers the code writes are these.
 */

async function recreate(q: QueryInterface): Promise<void> {
  await dropDayCountTriggers(q);
  await createDayMarkCountTriggers(q);
}

export const up = recreate;
export const down = recreate;
