import { config } from '../config';
import { now } from '../db/entity';
import { deleteInBatches } from '../db/deleteInBatches';
import { housekeeping } from '../scheduler/task';
import { EXPORT_RESOURCES } from './tombstones';

/** Rows per delete: short statements, each a range of the `(resource, deleted_at)` index. */
const BATCH = 5000;

/**
 * Removes the export tombstones older than the retention (EXPORT_TOMBSTONE_RETENTION_DAYS). The
 * export refuses a cursor that could still need them (feed.ts), so what is removed is never a
 * silent gap for a reader. Returns how many were removed.
 */
export async function pruneTombstones(at = now()): Promise<number> {
  const before = at - config().exportTombstoneRetentionSeconds;
  let removed = 0;
  for (const resource of EXPORT_RESOURCES) {
    removed += await deleteInBatches('DELETE FROM export_tombstones WHERE resource = ? AND deleted_at < ?', [resource, before], BATCH);
  }
  return removed;
}

export const tombstonePruneJob = housekeeping('export.prune', {
  every: () => 3600_000, counted: 'removed', message: 'export tombstones past their retention removed', work: () => pruneTombstones(),
});
