import type { QueryInterface } from 'sequelize';
import { tableOptions, timestamp } from './columns';

export const name = '042_job_claims';

/**
 * What a background job did once and must not do again when BullMQ runs it a second time (a
 * worker that stopped after its commit, before the job was marked complete: src/queue/claims.ts).
 * A row per claim, written in the transaction of the work it stands for; pruned after a week.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.createTable('job_claims', {
    claim: { type: 'VARCHAR(191) CHARACTER SET ascii COLLATE ascii_bin', allowNull: false, primaryKey: true },
    created_at: timestamp(false),
  }, tableOptions);
  await q.addIndex('job_claims', ['created_at'], { name: 'job_claims_created_at' });
}

export async function down(q: QueryInterface): Promise<void> {
  await q.dropTable('job_claims');
}
