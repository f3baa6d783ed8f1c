import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { fk, id, ref, str, tableOptions, text, timestamp, timestamps } from './columns';

export const name = '021_bulk_jobs';

/**
 * Bulk changes as jobs (`POST /api/ticket/ticket/bulk`, `GET /api/core/job/{id}`): the job and one
 * row per record it changes. The worker marks an item done in the transaction that changes its
 * record, so a job interrupted by a crash resumes with the items still pending and changes none twice.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.createTable('bulk_jobs', {
    id: id(),
    type: str(32, false),
    // queued, working, completed, failed
    status: str(16, false),
    input: text(false),
    error: text(),
    started_at: timestamp(),
    finished_at: timestamp(),
    ...timestamps(),
  }, tableOptions);
  await q.createTable('bulk_job_items', {
    job_id: { ...fk('bulk_jobs'), primaryKey: true },
    position: { ...ref(), primaryKey: true },
    record_id: ref(),
    // pending, done, failed
    status: str(16, false),
    message: { type: DataTypes.STRING(1000), allowNull: true },
  }, tableOptions);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.dropTable('bulk_job_items');
  await q.dropTable('bulk_jobs');
}
