import { createHash, randomBytes } from 'node:crypto';
import { open, mkdir, readdir, rename, stat, unlink, utimes } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { HashMismatchError, isHash, type BlobStore, type ByteRange } from './blobStore';

/**
 * Files on a directory shared by every node (NFS, a mounted volume): `<root>/ab/cd/<sha256>`, the
 * first two pairs of hex digits fanning the files out over 65,536 directories. A file is written
 * to a temporary name in its final directory, flushed to disk (fsync), then renamed, and the
 * directory flushed: a crash leaves either nothing under the real name or the whole file, never
 * half of one. Temporary files a crash left behind start with `.` and are removed by the sweep
 * (src/storage/moveAttachments.ts).
 */
export class DirectoryStore implements BlobStore {
  readonly name = 'directory' as const;
  readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  /** Where a hash's file lives. The hash is checked first: it becomes part of a path. */
  pathOf(hash: string): string {
    if (!isHash(hash)) throw new RangeError(`Not a SHA-256 in hex: ${hash}`);
    return join(this.root, hash.slice(0, 2), hash.slice(2, 4), hash);
  }

  async put(hash: string, bytes: Buffer | Readable): Promise<void> {
    const path = this.pathOf(hash);
    if ((await this.size(hash)) !== null) {
      // Content addressed: a file under this name already holds these bytes. Its time is renewed,
      // so the sweep, which spares young files, never takes an orphan a new row is about to claim.
      if (!Buffer.isBuffer(bytes)) bytes.destroy();
      const now = new Date();
      await utimes(path, now, now);
      return;
    }
    const dir = join(path, '..');
    await mkdir(dir, { recursive: true });
    const temp = join(dir, `.${hash}.${randomBytes(6).toString('hex')}.tmp`);
    const file = await open(temp, 'wx', 0o640);
    let renamed = false;
    try {
      const digest = createHash('sha256');
      for await (const chunk of Buffer.isBuffer(bytes) ? [bytes] : bytes) {
        const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
        digest.update(buf);
        await file.write(buf);
      }
      const actual = digest.digest('hex');
      if (actual !== hash) throw new HashMismatchError(hash, actual);
      await file.sync();
      await file.close();
      await rename(temp, path);
      renamed = true;
      await syncDirectory(dir);
    } finally {
      if (!renamed) {
        await file.close().catch(() => undefined);
        await unlink(temp).catch(() => undefined);
      }
    }
  }

  async open(hash: string, range?: ByteRange): Promise<Readable | null> {
    let file;
    try {
      file = await open(this.pathOf(hash), 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    // The stream owns the descriptor from here (closed at its end, on error or when destroyed).
    return file.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async has(hash: string): Promise<boolean> {
    return (await this.size(hash)) !== null;
  }

  async size(hash: string): Promise<number | null> {
    try {
      return (await stat(this.pathOf(hash))).size;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async delete(hash: string): Promise<void> {
    await unlink(this.pathOf(hash)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }

  /**
   * Every file under the root: `hash` for a stored file, null for a leftover temporary one, with
   * its modification time (ms). Walks the two levels of fan-out directories.
   */
  async *files(): AsyncGenerator<{ path: string; hash: string | null; mtimeMs: number }> {
    for (const a of await listDir(this.root)) {
      if (!/^[0-9a-f]{2}$/.test(a)) continue;
      for (const b of await listDir(join(this.root, a))) {
        if (!/^[0-9a-f]{2}$/.test(b)) continue;
        const dir = join(this.root, a, b);
        for (const name of await listDir(dir)) {
          const path = join(dir, name);
          const info = await stat(path).catch(() => null);
          if (!info?.isFile()) continue;
          yield { path, hash: isHash(name) && name.startsWith(a + b) ? name : null, mtimeMs: info.mtimeMs };
        }
      }
    }
  }
}

async function listDir(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/** Makes a rename in `dir` durable (the directory's entry, not only the file's bytes). */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
