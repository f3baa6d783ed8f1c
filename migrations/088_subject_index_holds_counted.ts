import type { QueryInterface } from 'sequelize';
import * as m025 from './025_ticket_list_assigned';
import * as m087 from './087_list_indexes_hold_customers';

export const name = '088_subject_index_holds_counted';

/**
 * A deep page of counted filters other than a status alone in `subject` order (a priority, a
 * department, two of them, a status beside one) is positioned by no counters (migration 063's
 * marks count a status only): the list read the narrowest filter's matches and sorted them, or
 * walked the subject index reading each entry's ticket.
 *
 * `tickets_list_subject` now holds the counted filters' columns after `id`, as the wide indexes
 * do (`id`, the dates, `last_reply_time`, `due_time`): such a walk tests them on the index's
 * entries and reads no ticket but the page's (listPage.ts, COVERED_SORTS). Measured at 1M, one
 * request at a time (p50 of 5), before and after on the same data set: `priority=1&start=100,000`
 * ascending 900 → 247 ms, descending 1,341 → 272; a status and a priority at `start=30,000`
 * 834 → 285; a department of nearly every ticket at `start=100,000` 369 → 60; four counted
 * filters at `start=8,000` descending 655 → 183; the large organisation and a status 87 → 50.
 *
 * Cost: the index is wider (at 1M 50 → 72 MB), so a walk of it costs more an entry: a
 * customer's or an organisation's first page in `subject` order, which walks it on the entries
 * (migration 087), took twice as long (the busy customer's, 187,500 entries, 54-57 → 117-120 ms;
 * the large organisation's 25-28 → 46-49; p50 of 9, the index rebuilt back and forth twice). A
 * change of a counted column (a status, often) moves the ticket's entry of this index too: a
 * status change of 20,000 tickets in one statement, triggers included, took 64-71 s with it and
 * 75-80 s without, lost in the triggers' cost and the machine's spread. The `number` order's
 * index stays narrow (not measured).
 *
 * This module is the current definition of the list indexes (the benchmark's bulk load uses it).
 */

/** The string order whose index holds the counted filters' columns. */
export const SUBJECT = 'subject';

/** The sort orders whose index holds every counted filter's column: a walk of one reads its entries alone. */
export const COVERED_SORTS: readonly string[] = [...m025.WIDE_SORTS, SUBJECT];

/** The list indexes by name: 087's, `tickets_list_subject` holding the counted columns after `id`. */
export function listIndexes(): Record<string, string[]> {
  const out = m087.listIndexes();
  out[`tickets_list_${SUBJECT}`] = ['deleted_at', 'merged_into_id', SUBJECT, 'id', ...m025.COUNTED, ...m087.CUSTOMER_COLUMNS];
  return out;
}

export async function up(q: QueryInterface): Promise<void> {
  await m087.rebuild(q, m087.listIndexes(), listIndexes());
}

export async function down(q: QueryInterface): Promise<void> {
  await m087.rebuild(q, listIndexes(), m087.listIndexes());
}
