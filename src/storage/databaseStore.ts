import { buffer as readAll } from 'node:stream/consumers';
import { Readable } from 'node:stream';
import { QueryTypes, type Transaction } from 'sequelize';
import { sequelize } from '../db/sequelize';
import { execute, select } from '../db/select';
import { hashOf } from './hash';
import { HashMismatchError, type BlobStore, type ByteRange } from './blobStore';

/**
 * The bytes in the upload's own row (`uploads.contents`), as before there were other stores. A
 * file is at most MAX_UPLOAD_BYTES (one row travels in one packet), so it is read whole, or the
 * asked range alone (SUBSTRING: only those bytes cross the wire). New uploads are inserted with
 * their bytes in one statement (uploads.ts); `put` fills the bytes of a row that exists.
 */
export class DatabaseStore implements BlobStore {
  readonly name = 'database' as const;

  async put(hash: string, bytes: Buffer | Readable, transaction?: Transaction): Promise<void> {
    const buffer = Buffer.isBuffer(bytes) ? bytes : await readAll(bytes);
    const actual = hashOf(buffer);
    if (actual !== hash) throw new HashMismatchError(hash, actual);
    // A prepared statement, as uploads.ts inserts the bytes (db/select.ts: binary).
    const affected = await execute('UPDATE uploads SET contents = ? WHERE hash = ?', [buffer, hash], transaction, { binary: true });
    if (!affected) throw new Error(`No upload row for ${hash}: the database store keeps bytes in their row.`);
  }

  async open(hash: string, range?: ByteRange): Promise<Readable | null> {
    const [row] = await select<{ bytes: Buffer }>(
      range
        ? 'SELECT SUBSTRING(contents, ?, ?) AS bytes FROM uploads WHERE hash = ? AND contents IS NOT NULL'
        : 'SELECT contents AS bytes FROM uploads WHERE hash = ? AND contents IS NOT NULL',
      range ? [range.start + 1, range.end - range.start + 1, hash] : [hash],
    );
    // An array of one chunk: Readable.from(buffer) would yield it byte by byte.
    return row ? Readable.from([Buffer.from(row.bytes)]) : null;
  }

  async has(hash: string): Promise<boolean> {
    return (await this.size(hash)) !== null;
  }

  async size(hash: string): Promise<number | null> {
    const [row] = await select<{ size: number }>('SELECT LENGTH(contents) AS size FROM uploads WHERE hash = ? AND contents IS NOT NULL', [hash]);
    return row ? Number(row.size) : null;
  }

  async delete(hash: string, transaction?: Transaction): Promise<void> {
    await sequelize().query('UPDATE uploads SET contents = NULL WHERE hash = $1', { bind: [hash], transaction, type: QueryTypes.UPDATE });
  }
}
