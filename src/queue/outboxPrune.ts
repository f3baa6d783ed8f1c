import { config } from '../config';
import { now } from '../db/entity';
import { deleteInBatches } from '../db/deleteInBatches';
import { housekeeping } from '../scheduler/task';
import { QUEUES } from './names';

/** Entries per delete: short statements, each a stretch of one queue's `(queue, created_at)` index. */
const BATCH = 5000;

/**
 * Removes the outbox entries done with (processed, or failed for good) that were queued longer ago
 * than OUTBOX_RETENTION_DAYS, queue by queue (the mail log is the mail queue's). A mail's delivery
 * record goes with its entry (the foreign key's cascade); the mail log's count with it (migration
 * 059's trigger). An entry still queued, published or retrying is kept whatever its age: it is
 * work not done yet, and the sweep publishes it again. Returns how many were removed.
 */
export async function pruneOutbox(at = now()): Promise<number> {
  const retention = config().outboxRetentionSeconds;
  if (!retention) return 0;
  let removed = 0;
  for (const queue of Object.values(QUEUES)) {
    removed += await deleteInBatches(`DELETE FROM outbox WHERE queue = ? AND created_at < ?
      AND (processed_at IS NOT NULL OR failed_at IS NOT NULL) ORDER BY created_at`, [queue, at - retention], BATCH);
  }
  return removed;
}

export const outboxPruneJob = housekeeping('outbox.prune', {
  every: () => 3600_000, counted: 'removed', message: 'outbox entries past their retention removed', work: () => pruneOutbox(),
});
