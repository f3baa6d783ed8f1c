import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';

export const name = '017_outbox_job_options';

/**
 * An outbox entry carries its job's BullMQ options (attempts, backoff, retention) as the job's
 * definition gave them when the entry was written: whichever process publishes it (after the
 * commit, or the scheduler's sweep) adds the same job, and the outbox needs no registry of jobs.
 * Entries written before this have none and are published with the queue's plain defaults.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.addColumn('outbox', 'options', { type: DataTypes.TEXT, allowNull: true });
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE outbox DROP COLUMN options');
}
