import type { QueryInterface } from 'sequelize';

export const name = '032_ticket_customer_index';

/**
 * One customer's tickets with a status, a priority or a department beside them ("my open
 * tickets" in a customer portal, or an integration's account that opens a ticket per alert):
 * `tickets_filter_user_id` held (user_id, deleted_at, merged_into_id), so the count and the page
 * read each of the customer's tickets' rows to test the other filter. A customer of 20,000
 * tickets at 1M: 13 requests a second under load, for our web process and the floor alike.
 *
 * The index gains `id` (its entries stay in id order, the order the customer's page walks) and
 * then `status_id`, `priority_id` and `department_id`: the count and the page test those on the
 * entries, index only (as the wide list indexes carry the counted columns after `id`, migration
 * 025). The count still reads every entry of the customer (no counters per customer: as many rows
 * as customers times statuses), a few milliseconds for 20,000. Write cost: a change of status,
 * priority or department moves the ticket's entry in this index too.
 */
const COLUMNS = ['user_id', 'deleted_at', 'merged_into_id', 'id', 'status_id', 'priority_id', 'department_id'];
const BEFORE = ['user_id', 'deleted_at', 'merged_into_id'];

const rebuild = (q: QueryInterface, columns: string[]) =>
  q.sequelize.query(`ALTER TABLE tickets DROP INDEX tickets_filter_user_id, ADD INDEX tickets_filter_user_id (${columns.join(', ')})`);

export async function up(q: QueryInterface): Promise<void> {
  await rebuild(q, COLUMNS);
}

export async function down(q: QueryInterface): Promise<void> {
  await rebuild(q, BEFORE);
}
