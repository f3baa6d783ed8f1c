import type { QueryInterface } from 'sequelize';

export const name = '090_customer_subject_indexes';

/**
 * A customer's or an organisation's tickets in `subject` order (`user=<id>&order_column=subject`:
 * a customer whose tickets share a prefix, such as a shop or a monitoring system that opens
 * "Order #..." or "[Alert] ..." tickets). Their indexes (migrations 032, 085 and 086) hold them in
 * id and `updated_at` order only, so in `subject` order the page walked the subject index testing
 * the customer on its entries (migration 087), passing every ticket of the subjects before theirs,
 * or read their tickets and sorted them: at 1M, one request at a time, the benchmark's busy
 * customer (62,549 tickets, their subjects in a few families) 13 → 23 → 57 ms from 10k to 1M and
 * the large organisation 12 → 18 → 28.
 *
 * Two indexes (user_id | organisation_id, deleted_at, merged_into_id, subject, id): one
 * customer's or organisation's listed tickets are a range of them in `subject` order, and several
 * customers' a merge of their ranges (src/ticket/tickets/listPage.ts, CUSTOMER_RANGES and
 * ORGANISATION_RANGES). Unlike 085's and 086's `updated_at` indexes they do not hold the status:
 * those entries move on every change of a ticket anyway (its `updated_at` changes), these would
 * move only for the status, the most frequent change (a reply's). A status beside the customer is
 * tested on each entry's ticket along the range.
 *
 * Write cost, measured at 1M (1,000 tickets by one statement with their triggers, in a
 * rolled-back transaction, the indexes dropped and added back twice): an insert 1.06-1.14 →
 * 1.14-1.32 ms a ticket; a status change 2.09-2.28 → 2.03-2.35 ms, within the spread (with the
 * status held, 2.26-2.43). The entries move when a ticket's subject, customer or organisation
 * changes, or it goes to the trash or is merged.
 */
export const CUSTOMER_SUBJECT_INDEX = 'tickets_user_subject';
export const ORGANISATION_SUBJECT_INDEX = 'tickets_organisation_subject';
const INDEXES: Record<string, string[]> = {
  [CUSTOMER_SUBJECT_INDEX]: ['user_id', 'deleted_at', 'merged_into_id', 'subject', 'id'],
  [ORGANISATION_SUBJECT_INDEX]: ['organisation_id', 'deleted_at', 'merged_into_id', 'subject', 'id'],
};

export async function up(q: QueryInterface): Promise<void> {
  // One ALTER: InnoDB builds both indexes in one pass over the table, in place (writes go on).
  await q.sequelize.query(`ALTER TABLE tickets ${Object.entries(INDEXES).map(([n, c]) => `ADD INDEX ${n} (${c.join(', ')})`).join(', ')}`);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`ALTER TABLE tickets ${Object.keys(INDEXES).map((n) => `DROP INDEX ${n}`).join(', ')}`);
}
