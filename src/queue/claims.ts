import type { Transaction } from 'sequelize';
import { now } from '../db/entity';
import { deleteInBatches } from '../db/deleteInBatches';
import { execute } from '../db/select';
import { housekeeping } from '../scheduler/task';

/** How long a claim is kept: a week, far past the last retry of any job (minutes to hours). */
const RETENTION_SECONDS = 7 * 86400;

/**
 * Whether this run is the first to do the work named `key`: a row of `job_claims` written in `t`,
 * the transaction of that work. BullMQ runs a job at least once (a worker that stops after its
 * commit and before it marks the job complete leaves it to run again); work that is not the same
 * when done twice (events emitted, the next batch queued) claims itself first and does nothing
 * when the claim is taken. A second run at the same time waits on the first's row until it
 * commits (then finds the claim taken) or rolls back (then takes it).
 */
export async function claimOnce(key: string, t: Transaction): Promise<boolean> {
  return (await execute('INSERT IGNORE INTO job_claims (claim, created_at) VALUES (:key, :at)', { key, at: now() }, t)) === 1;
}

/** Removes the claims past their retention. Returns how many were removed. */
export async function pruneClaims(at = now()): Promise<number> {
  return deleteInBatches('DELETE FROM job_claims WHERE created_at < ?', [at - RETENTION_SECONDS], 5000);
}

export const claimPruneJob = housekeeping('claims.prune', {
  every: () => 3600_000, counted: 'removed', message: 'job claims past their retention removed', work: () => pruneClaims(),
});
