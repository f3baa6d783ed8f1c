import { config } from '../config';
import { now } from '../db/entity';
import { execute, select } from '../db/select';
import { transaction } from '../db/transaction';
import { housekeeping } from '../scheduler/task';

/** Events per transaction (each takes its webhook deliveries along). */
const BATCH = 1000;

/**
 * Removes the events older than EVENT_RETENTION_DAYS, oldest id first, with their webhook
 * deliveries (the foreign key's cascade; the deliveries' counts with them, migration 057's trigger).
 * It stops at the first event that is not old enough and at the first whose delivery is still
 * pending (its job needs the event), so every id up to the mark in `log_prunes` (migration 074) is
 * gone and every one after it is kept: the feed refuses a cursor below the mark (core/event.ts)
 * instead of skipping what was removed. Returns how many were removed.
 */
export async function pruneEvents(at = now()): Promise<number> {
  const retention = config().eventRetentionSeconds;
  if (!retention) return 0;
  let removed = 0;
  for (;;) {
    const batch = await pruneBatch(at - retention, at);
    removed += batch.removed;
    if (!batch.more) return removed;
  }
}

async function pruneBatch(before: number, at: number): Promise<{ removed: number; more: boolean }> {
  return transaction(async (t) => {
    // Locked first: a second run at once waits here, then reads the mark this one moved.
    const [{ through }] = await select<{ through: number }>("SELECT through_id AS through FROM log_prunes WHERE log = 'events' FOR UPDATE", [], { transaction: t });
    const rows = await select<{ id: number; created_at: number }>('SELECT id, created_at FROM events WHERE id > ? ORDER BY id LIMIT ?', [through, BATCH], { transaction: t });
    const young = rows.findIndex((r) => r.created_at >= before);
    const old = young < 0 ? rows.length : young;
    if (!old) return { removed: 0, more: false };
    // The deliveries of these events (webhook_deliveries_event_id), locked: a redeliver that set
    // one pending and has not committed is waited for and seen, and one after this waits for the
    // removal and finds its delivery gone.
    const [{ pending }] = await select<{ pending: number | null }>(
      "SELECT MIN(event_id) AS pending FROM webhook_deliveries WHERE event_id > ? AND event_id <= ? AND status = 'pending' LOCK IN SHARE MODE",
      [through, rows[old - 1].id], { transaction: t },
    );
    const upto = pending === null ? rows[old - 1].id : pending - 1;
    if (upto <= through) return { removed: 0, more: false };
    const removed = await execute('DELETE FROM events WHERE id > ? AND id <= ?', [through, upto], t);
    await execute("UPDATE log_prunes SET through_id = ?, pruned_at = ? WHERE log = 'events'", [upto, at], t);
    return { removed, more: pending === null && old === BATCH };
  });
}

export const eventPruneJob = housekeeping('events.prune', {
  every: () => 3600_000, counted: 'removed', message: 'events past their retention removed', work: () => pruneEvents(),
});
