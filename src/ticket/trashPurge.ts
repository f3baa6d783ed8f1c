import { config } from '../config';
import { now } from '../db/entity';
import { select } from '../db/select';
import { transaction } from '../db/transaction';
import { emitAll } from '../events';
import { beforeTicketsDeleted } from '../export/tombstones';
import { housekeeping } from '../scheduler/task';
import { deleteTicketsForGood } from './tickets/deleteForGood';

export interface PurgeOptions {
  /** The moment to purge at (UNIX seconds); now by default. */
  at?: number;
  /** Trashed tickets per transaction. */
  batch?: number;
  /** Transactions per run; the rest waits for the next run. */
  maxBatches?: number;
}

/**
 * Deletes for good the tickets in the trash longer than TICKET_TRASH_RETENTION_DAYS (SupportPal
 * cleans its trash so, after 30 days by default), with the tickets merged into them, by
 * deleteTicketsForGood: a `ticket.deleted` each, the export's tombstones, the list's counters by
 * their triggers. Each batch is one transaction that locks the tickets it reads: a restore that
 * commits first takes its ticket out of the range (the locking read sees the latest version), and
 * one after finds it gone; a second run at once waits and finds the next batch. Bounded per run
 * (by default 40 batches of 50), so a long backlog drains over several hourly runs. Returns how
 * many tickets were deleted.
 */
export async function purgeTrash(options: PurgeOptions = {}): Promise<number> {
  const retention = config().ticketTrashRetentionSeconds;
  if (!retention) return 0;
  const before = (options.at ?? now()) - retention;
  const batch = options.batch ?? 50;
  let deleted = 0;
  for (let n = 0; n < (options.maxBatches ?? 40); n++) {
    const run = await transaction(async (t) => {
      // A range of the list indexes that lead with deleted_at (NULL, out of the trash, is below it).
      const ids = (await select<{ id: number }>('SELECT id FROM tickets WHERE deleted_at < ? LIMIT ? FOR UPDATE', [before, batch], { transaction: t }))
        .map((r) => Number(r.id));
      await beforeTicketsDeleted(ids, t);
      const gone = await deleteTicketsForGood(ids, t);
      await emitAll(t, gone.map((ticketId) => ({ name: 'ticket.deleted' as const, payload: { ticketId } })));
      return { trashed: ids.length, gone: gone.length };
    });
    deleted += run.gone;
    if (run.trashed < batch) break;
  }
  return deleted;
}

export const trashPurgeJob = housekeeping('tickets.trash.purge', {
  every: () => 3600_000, counted: 'deleted', message: 'tickets deleted for good after their time in the trash', work: () => purgeTrash(),
});
