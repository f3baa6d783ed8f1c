import type { QueryInterface } from 'sequelize';

export const name = '085_customer_updated_index';

/**
 * A customer's or an organisation's tickets by their latest activity (`order_column=updated_at`:
 * a customer portal's "my tickets", an account manager's view of an organisation). The customer
 * index (migration 032) holds a customer's tickets in id order only, so in `updated_at` order the
 * page read every one of their tickets' rows and sorted them: the benchmark's organisation of 13
 * people and 63,000 tickets at 1M took 100-106 ms one request at a time (15 now), its busy
 * customer alone 23 (14 now).
 *
 * `tickets_user_updated` (user_id, deleted_at, merged_into_id, updated_at, id, status_id): one
 * customer's listed tickets are a range of it in `updated_at` order (the status tested on its
 * entries), and several customers' a merge of their ranges (src/ticket/tickets/listPage.ts,
 * rangesPage), as in id order. (An organisation's members were merged so too, until migration
 * 086 gave an organisation a range of its own.)
 *
 * Write cost: one more entry per ticket, moved when the ticket's `updated_at` changes (as the
 * `updated_at` list index's already is).
 */
export const CUSTOMER_UPDATED_INDEX = 'tickets_user_updated';
const COLUMNS = ['user_id', 'deleted_at', 'merged_into_id', 'updated_at', 'id', 'status_id'];

export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`ALTER TABLE tickets ADD INDEX ${CUSTOMER_UPDATED_INDEX} (${COLUMNS.join(', ')})`);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`ALTER TABLE tickets DROP INDEX ${CUSTOMER_UPDATED_INDEX}`);
}
