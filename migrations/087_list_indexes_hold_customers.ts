import type { QueryInterface } from 'sequelize';
import * as m025 from './025_ticket_list_assigned';

export const name = '087_list_indexes_hold_customers';

/**
 * A customer's or an organisation's page in an order no index of theirs holds (`subject`,
 * `created_at`, `brand_id`...) walks that order's list index until it has passed the page's
 * matches of theirs, or reads all of their tickets and sorts them (src/ticket/tickets/listPage.ts,
 * walkedOrSorted). The walk read each entry's ticket to test its customer or organisation: at 1M
 * the benchmark's busy customer (62,549 tickets) in `subject` order passed 187,500 entries for its
 * first page, 368 ms, and its tickets sorted took 108 ms; the large organisation's 63,049, 108
 * either way. 16 requests of them at once answered 12 a second.
 *
 * Every list sort index (`tickets_list_*`) now ends with `user_id` (the wide ones held it) and
 * `organisation_id`: such a walk tests them on the index entries and reads no ticket but the
 * page's. Measured at 1M, one statement at a time: the busy customer's first page in `subject`
 * order 368 → 29 ms (187,500 entries, 0.15 µs each against 1.7 µs for a ticket of theirs read
 * and sorted), the large organisation's 108 → 10 ms, both descending 6 ms. A status beside them
 * is on the wide indexes' entries only (`id`, `created_at`, `updated_at`, `last_reply_time`,
 * `due_time`): in the narrow ones it would move eight entries more on every change of a ticket's
 * status (a reply's, often), for the pages of one customer and a status in a string or value
 * order.
 *
 * Write cost: none per write but a change of a ticket's customer or of a customer's organisation
 * (rare), which moves the ticket's entries in these indexes; 8 bytes more per entry of the narrow
 * indexes (4 for the customer order's) and 4 of the wide ones. Measured at 1M (InnoDB's size of
 * each): the narrow ones 68 MB more in all (a value order's 17 → 25 MB, the subject's 43 → 50);
 * the wide ones, rebuilt, came out smaller than they were (a fresh build packs its pages).
 *
 * This module is the current definition of the list indexes (the list's code and the benchmark's
 * bulk load use it); 025's stay as they were.
 */

/** The columns every list sort index ends with, so a walk of it tests them on its entries. */
export const CUSTOMER_COLUMNS = ['user_id', 'organisation_id'] as const;

/** The list indexes by name: their columns (025's, each sort index ending with CUSTOMER_COLUMNS). */
export function listIndexes(): Record<string, string[]> {
  const out = m025.listIndexes();
  for (const [n, columns] of Object.entries(out)) {
    if (n.startsWith('tickets_list_')) out[n] = [...columns, ...CUSTOMER_COLUMNS.filter((c) => !columns.includes(c))];
  }
  return out;
}

/** The sort indexes of `to` that differ from `from`'s, dropped and added again in one ALTER (in place). */
export async function rebuild(q: QueryInterface, from: Record<string, string[]>, to: Record<string, string[]>): Promise<void> {
  const changed = Object.keys(to).filter((n) => from[n].join() !== to[n].join());
  await q.sequelize.query(`ALTER TABLE tickets ${changed.flatMap((n) => [`DROP INDEX ${n}`, `ADD INDEX ${n} (${to[n].join(', ')})`]).join(', ')}`);
}

export async function up(q: QueryInterface): Promise<void> {
  await rebuild(q, m025.listIndexes(), listIndexes());
}

export async function down(q: QueryInterface): Promise<void> {
  await rebuild(q, listIndexes(), m025.listIndexes());
}
