import type { QueryInterface } from 'sequelize';

export const name = '058_webhook_delivery_indexes';

/**
 * A webhook's delivery log (`/api/core/webhook/{id}/delivery`) in each order it can be sorted by,
 * and by its filters, without sorting or reading every delivery of the webhook: a log grows with
 * every event sent (a million deliveries of one webhook: `order_column=created_at` sorted all of
 * them, and `status=failed` intersected the status index's 2,000 entries with the webhook's
 * million, 140 ms). Each index leads with the webhook and ends (as every InnoDB index does) with
 * the id, the order's tie-break. The index of the status alone served that filter only.
 */
const INDEXES = ['status', 'event_name', 'attempts', 'event_id', 'created_at', 'updated_at'];

const indexName = (column: string) => `webhook_deliveries_webhook_id_${column}`;

export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`ALTER TABLE webhook_deliveries DROP INDEX webhook_deliveries_status, ${
    INDEXES.map((c) => `ADD INDEX ${indexName(c)} (webhook_id, ${c})`).join(', ')}`);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`ALTER TABLE webhook_deliveries ${INDEXES.map((c) => `DROP INDEX ${indexName(c)}`).join(', ')}, ADD INDEX webhook_deliveries_status (status)`);
}
