import { createHash } from 'node:crypto';
import { unlink } from 'node:fs/promises';
import { QueryTypes } from 'sequelize';
import { sequelize } from '../db/sequelize';
import { select } from '../db/select';
import type { StoreName } from './blobStore';
import { directoryStore, storeNamed } from './stores';

/**
 * Moves the bytes of existing uploads between the database and the directory store, and sweeps
 * the directory (`npm run attachments`, src/cli/attachments.ts). The rows say where each file is,
 * so a move can be stopped at any point and run again (it goes on with what is still in the other
 * store), and the web processes serve every file throughout, wherever it is at that moment.
 */

export interface MoveReport {
  /** Files moved by this run, their bytes, files that could not be moved (missing, wrong hash), and how many there were to move. */
  moved: number; bytes: number; failed: number; total: number;
}

export interface MoveOptions {
  batch?: number;
  progress?(report: MoveReport): void;
  failure?(hash: string, reason: string): void;
}

interface Row { id: number; hash: string; size: number }

/** Moves every upload whose bytes are not in `to` into it, a batch at a time, each verified by its hash in the target store. */
export async function moveAttachments(to: StoreName, options: MoveOptions = {}): Promise<MoveReport> {
  const from: StoreName = to === 'directory' ? 'database' : 'directory';
  const source = storeNamed(from);
  const target = storeNamed(to);
  const batch = options.batch ?? 100;
  const [{ n }] = await select<{ n: number }>('SELECT COUNT(*) AS n FROM uploads WHERE storage = ?', [from]);
  const report: MoveReport = { moved: 0, bytes: 0, failed: 0, total: Number(n) };
  let after = 0;
  for (;;) {
    // The (storage, id) index: a range read, resumed after the last id seen (failures stay behind).
    const rows = await select<Row>('SELECT id, hash, size FROM uploads WHERE storage = ? AND id > ? ORDER BY id LIMIT ?', [from, after, batch]);
    if (rows.length === 0) break;
    after = rows[rows.length - 1].id;
    const done: Row[] = [];
    for (const row of rows) {
      try {
        const bytes = await source.open(row.hash);
        if (!bytes) throw new Error(`missing from the ${from} store`);
        await target.put(row.hash, bytes);
        // Read back from where it now is: what is stored hashes to its name.
        const stored = await target.open(row.hash);
        const actual = stored ? await sha256Of(stored) : null;
        if (actual !== row.hash) throw new Error(`the ${to} store holds other bytes (${actual ?? 'none'})`);
        done.push(row);
      } catch (err) {
        report.failed++;
        options.failure?.(row.hash, (err as Error).message);
      }
    }
    if (done.length) {
      // The row flips only once its bytes are verified where it will point; `storage = from`
      // leaves alone a row another run moved meanwhile.
      const ids = done.map((r) => r.id);
      if (to === 'directory') {
        await sequelize().query("UPDATE uploads SET storage = 'directory', contents = NULL WHERE id IN (:ids) AND storage = 'database'", { replacements: { ids }, type: QueryTypes.UPDATE });
      } else {
        await sequelize().query("UPDATE uploads SET storage = 'database' WHERE id IN (:ids) AND storage = 'directory' AND contents IS NOT NULL", { replacements: { ids }, type: QueryTypes.UPDATE });
        // Files of rows now in the database: a reader that looked at the row just before still
        // has a batch's time to open its file; anything left behind is swept.
        for (const row of done) await directoryStore().delete(row.hash);
      }
      report.moved += done.length;
      report.bytes += done.reduce((sum, r) => sum + Number(r.size), 0);
    }
    options.progress?.({ ...report });
  }
  return report;
}

export interface SweepReport { kept: number; removed: number }

/**
 * Removes from the directory store the files no row points at (a transaction that rolled back
 * after writing its file, a move back into the database) and temporary files a crash left, when
 * older than `graceSeconds` (a file younger than that may belong to a transaction still open).
 */
export async function sweepDirectory(graceSeconds: number, options: { batch?: number } = {}): Promise<SweepReport> {
  const store = directoryStore();
  const report: SweepReport = { kept: 0, removed: 0 };
  const cutoff = Date.now() - graceSeconds * 1000;
  let pending: Array<{ path: string; hash: string }> = [];
  const flush = async () => {
    if (!pending.length) return;
    const rows = await select<{ hash: string }>("SELECT hash FROM uploads WHERE hash IN (?) AND storage = 'directory'", [pending.map((p) => p.hash)]);
    const referenced = new Set(rows.map((r) => r.hash));
    for (const p of pending) {
      if (referenced.has(p.hash)) report.kept++;
      else await remove(p.path);
    }
    pending = [];
  };
  const remove = async (path: string) => {
    await unlink(path).catch(() => undefined);
    report.removed++;
  };
  for await (const file of store.files()) {
    if (file.mtimeMs > cutoff) {
      report.kept++;
      continue;
    }
    if (file.hash === null) await remove(file.path);
    else pending.push({ path: file.path, hash: file.hash });
    if (pending.length >= (options.batch ?? 500)) await flush();
  }
  await flush();
  return report;
}

async function sha256Of(stream: AsyncIterable<Buffer>): Promise<string> {
  const digest = createHash('sha256');
  for await (const chunk of stream) digest.update(chunk);
  return digest.digest('hex');
}
