import type { QueryInterface } from 'sequelize';

export const name = '101_outbox_failed_at';

/**
 * The mail log's `failed` entries without a delivery record that decides their status (the queue
 * gave up on the job: `failed_at`) as a range of an index led by the queue, so that the log counts
 * its failed, and by them its sent, entries without reading every entry (src/core/mail.ts). No
 * index held `failed_at` first after the queue: the count of `status=failed` read each of the
 * mail queue's entries (1.06 s at 500,000).
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE outbox ADD INDEX outbox_queue_failed_at (queue, failed_at)');
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE outbox DROP INDEX outbox_queue_failed_at');
}
