import type { Readable } from 'node:stream';
import type { Transaction } from 'sequelize';

/**
 * Where the bytes of uploads live, addressed by their SHA-256 (hex). The upload's row (hash, name,
 * type, size, the store's name) is always in the database; a store holds only bytes. Two exist:
 * `database` (the row's `contents` column) and `directory` (a file per hash on shared storage).
 * An object store (S3 and compatible) is the next one: every method maps onto one request
 * (put: PutObject of a verified body, open: GetObject with `Range`, has/size: HeadObject,
 * delete: DeleteObject), see docs/attachments.md.
 */
export interface BlobStore {
  readonly name: StoreName;
  /**
   * Stores `bytes` under `hash`, which must be their SHA-256 (checked: a stream whose bytes hash
   * otherwise is refused and nothing is kept). Idempotent: the same hash twice keeps one copy. When it
   * returns, the bytes are durable. The database store writes them into the row, which must exist
   * (in `transaction`); the others need no row.
   */
  put(hash: string, bytes: Buffer | Readable, transaction?: Transaction): Promise<void>;
  /**
   * The bytes, or the inclusive byte range `[start, end]` of them, as a stream; null when the store
   * has no such hash. The range must lie within the file (see range.ts).
   */
  open(hash: string, range?: ByteRange): Promise<Readable | null>;
  has(hash: string): Promise<boolean>;
  /** The number of bytes stored, or null when the store has no such hash. */
  size(hash: string): Promise<number | null>;
  /** Forgets the bytes (a no-op when absent). The database store keeps the row and clears its bytes. */
  delete(hash: string, transaction?: Transaction): Promise<void>;
}

export type StoreName = 'database' | 'directory';

/** Inclusive, zero-based, as HTTP's `Range: bytes=start-end`. */
export interface ByteRange {
  start: number;
  end: number;
}

/** The bytes put under a hash are not the bytes that hash names. */
export class HashMismatchError extends Error {
  constructor(readonly expected: string, readonly actual: string) {
    super(`The bytes hash to ${actual}, not ${expected}.`);
  }
}

/** A row says its bytes are in a store that is not configured (ATTACHMENTS_DIR unset). */
export class StoreUnavailableError extends Error {}

export const isHash = (hash: string): boolean => /^[0-9a-f]{64}$/.test(hash);
