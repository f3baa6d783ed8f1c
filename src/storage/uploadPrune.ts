import { now } from '../db/entity';
import { execute, select } from '../db/select';
import { transaction } from '../db/transaction';
import { housekeeping } from '../scheduler/task';

/**
 * Uploads looked at per transaction: a window of ids, walked from where the last one stopped.
 * Small, as every upload of a window may be removed, bytes and all (the database store's).
 */
const WINDOW = 500;
/** Windows per run (50,000 uploads an hour); the walk goes on in the next run. */
const WINDOWS = 100;
/** An upload younger than this is left alone (its transaction may still be attaching it). */
const GRACE_SECONDS = 3600;

/**
 * Removes the uploads no attachment names any more (their tickets deleted for good, their
 * articles deleted): an upload is stored once per content and shared, so its row stays while
 * any ticket or article attachment names it, and nothing removed it when the last one went. The
 * walk covers WINDOW uploads a transaction and WINDOWS transactions a run, from the position
 * kept in `log_prunes` (migration 075), and starts again from the first once past the last, so a
 * run's cost is bounded however many uploads there are. Each window is one transaction that locks
 * its unnamed uploads and reads their attachments again with a lock: an attachment a transaction
 * is adding meanwhile holds its upload's row (put() reads it with a shared lock), so either that
 * transaction commits first and the upload is kept, or it waits and stores the bytes again. With
 * the database store the bytes go with the row; a directory store's file is left to the daily
 * sweep (./sweepJob.ts), which removes files no row names once older than its grace (a file stored again
 * meanwhile has its time renewed).
 * Returns how many were removed.
 */
export async function pruneUploads(options: { at?: number; window?: number; windows?: number } = {}): Promise<number> {
  const at = options.at ?? now();
  let removed = 0;
  for (let n = 0; n < (options.windows ?? WINDOWS); n++) {
    const window = await pruneWindow(at, options.window ?? WINDOW);
    removed += window.removed;
    if (window.wrapped) break;
  }
  return removed;
}

/** One window of the walk: how many it removed, and whether it reached the last upload (the walk starts again from the first). */
async function pruneWindow(at: number, size: number): Promise<{ removed: number; wrapped: boolean }> {
  return transaction(async (t) => {
    const [{ after }] = await select<{ after: number }>("SELECT through_id AS after FROM log_prunes WHERE log = 'uploads' FOR UPDATE", [], { transaction: t });
    const window = await select<{ id: number }>('SELECT id FROM uploads WHERE id > ? ORDER BY id LIMIT ?', [after, size], { transaction: t });
    const wrapped = window.length < size;
    await execute("UPDATE log_prunes SET through_id = ?, pruned_at = ? WHERE log = 'uploads'", [wrapped ? 0 : Number(window[window.length - 1].id), at], t);
    if (!window.length) return { removed: 0, wrapped };
    const to = Number(window[window.length - 1].id);
    // Each upload's attachments by their upload_hash indexes; the candidates locked, then checked again under lock.
    const unnamed = `SELECT u.id FROM uploads u WHERE u.id > ? AND u.id <= ? AND u.created_at < ?
      AND NOT EXISTS (SELECT 1 FROM ticket_attachments a WHERE a.upload_hash = u.hash)
      AND NOT EXISTS (SELECT 1 FROM article_attachments a WHERE a.upload_hash = u.hash)`;
    const candidates = (await select<{ id: number }>(unnamed, [after, to, at - GRACE_SECONDS], { transaction: t })).map((r) => Number(r.id));
    if (!candidates.length) return { removed: 0, wrapped };
    const locked = await select<{ id: number; hash: string }>('SELECT id, hash FROM uploads WHERE id IN (?) ORDER BY id FOR UPDATE', [candidates], { transaction: t });
    const hashes = locked.map((r) => r.hash);
    if (!hashes.length) return { removed: 0, wrapped };
    const named = new Set<string>();
    for (const table of ['ticket_attachments', 'article_attachments']) {
      const rows = await select<{ hash: string }>(`SELECT upload_hash AS hash FROM ${table} WHERE upload_hash IN (?) LOCK IN SHARE MODE`, [hashes], { transaction: t });
      for (const r of rows) named.add(r.hash);
    }
    const gone = locked.filter((r) => !named.has(r.hash)).map((r) => Number(r.id));
    return { removed: gone.length ? await execute('DELETE FROM uploads WHERE id IN (?)', [gone], t) : 0, wrapped };
  });
}

export const uploadPruneJob = housekeeping('uploads.prune', {
  every: () => 3600_000, counted: 'removed', message: 'uploads no attachment names removed', work: () => pruneUploads(),
});
