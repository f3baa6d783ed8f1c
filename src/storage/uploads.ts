import { buffer } from 'node:stream/consumers';
import { extname } from 'node:path';
import type { Readable } from 'node:stream';
import type { Transaction } from 'sequelize';
import { Upload } from '../db/models';
import { loadRows } from '../db/load';
import { execute } from '../db/select';
import type { ByteRange } from './blobStore';
import { hashOf } from './hash';
import { storeNamed, writeStoreName } from './stores';

/**
 * Files, stored once per content: the key is the SHA-256 of the bytes (hex), so the same file
 * attached ten times is kept once. Whatever has attachments (articles, tickets) keeps its own rows
 * naming an upload by hash, with the name it was attached under. The upload's row is always in
 * MariaDB; its bytes are in the store its `storage` names (`database`: the row itself; `directory`:
 * a file under ATTACHMENTS_DIR), see blobStore.ts and docs/attachments.md.
 */

/** The columns of an upload without its bytes: what lists and presenters load. */
export const UPLOAD_FIELDS = ['id', 'hash', 'filename', 'mime', 'size', 'storage', 'created_at', 'updated_at'] as const;

/**
 * The largest file stored. A row travels in one packet, and MariaDB's default `max_allowed_packet`
 * is 16 MiB: this leaves room for the statement around the bytes. (The directory store has no such
 * limit, but a file must be able to move back into the database.)
 */
export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;

const MIME: Record<string, string> = {
  txt: 'text/plain', log: 'text/plain', csv: 'text/csv', htm: 'text/html', html: 'text/html', xml: 'application/xml',
  json: 'application/json', pdf: 'application/pdf', zip: 'application/zip', rar: 'application/vnd.rar', gz: 'application/gzip',
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', svg: 'image/svg+xml',
  bmp: 'image/bmp', ico: 'image/vnd.microsoft.icon', mp3: 'audio/mpeg', wav: 'audio/wav', mp4: 'video/mp4', webm: 'video/webm',
  doc: 'application/msword', docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel', xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ppt: 'application/vnd.ms-powerpoint', pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  odt: 'application/vnd.oasis.opendocument.text', rtf: 'application/rtf', md: 'text/markdown', eml: 'message/rfc822',
};

/**
 * Bidirectional control characters (LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI, LRM, RLM): in a
 * file name they make `invoice\u202Efdp.exe` read as `invoiceexe.pdf`. Stripped from every name
 * a file is stored or attached under.
 */
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069\u200E\u200F]/g;

/** A file name as stored: bidi controls removed, trimmed. */
export const cleanFileName = (name: string): string => name.replace(BIDI_CONTROLS, '').trim();

/** The MIME type of a file name's extension (`application/octet-stream` when unknown). */
export const mimeOf = (filename: string): string => MIME[extname(filename).slice(1).toLowerCase()] ?? 'application/octet-stream';

/** `512 B`, `1.2 KB`, `3.0 MB`: one decimal, 1024 to the next unit. */
export function humanSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/**
 * Stores `contents` unless the same bytes are stored already; returns the upload row (without its
 * bytes). Safe under concurrency: the insert is a no-op when the hash exists, and the row is then
 * read with a lock, which sees a row another transaction has just committed. A row found first is
 * read with a lock too: the prune of unnamed uploads (./uploadPrune.ts) then waits for this
 * transaction's attachment, or, if it removes the row first, this read waits and finds none.
 *
 * With the directory store the file is written (durably) before the row is inserted: if the
 * transaction then rolls back, an orphan file remains, which is harmless (the sweep removes it);
 * the reverse, a row whose file is missing, never happens.
 */
export async function put(contents: Buffer, filename: string, transaction?: Transaction): Promise<Upload> {
  const hash = hashOf(contents);
  const existing = await findUpload(hash, transaction, true);
  if (existing) return existing;
  if (contents.length > MAX_UPLOAD_BYTES) throw new RangeError(`A file may not be larger than ${MAX_UPLOAD_BYTES} bytes.`);
  const storage = writeStoreName();
  if (storage !== 'database') await storeNamed(storage).put(hash, contents);
  const now = Math.floor(Date.now() / 1000);
  // A prepared statement: the bytes cross as they are (escaped into a statement's text, a file of
  // zeros would double past max_allowed_packet).
  await execute(
    'INSERT INTO uploads (hash, filename, mime, size, contents, storage, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE hash = hash',
    [hash, cleanFileName(filename), mimeOf(cleanFileName(filename)), contents.length, storage === 'database' ? contents : null, storage, now, now],
    transaction, { binary: true },
  );
  return (await findUpload(hash, transaction, true))!;
}

/** The upload row (without its bytes) of this hash; `share`: locked for the transaction. */
export function findUpload(hash: string, transaction?: Transaction, share = false): Promise<Upload | null> {
  return Upload.findOne({ attributes: [...UPLOAD_FIELDS], where: { hash }, transaction, lock: share && transaction ? transaction.LOCK.SHARE : undefined });
}

/** All the bytes of an upload (a row loaded without them), from its store; their absence is an error. */
export async function readUpload(upload: Pick<Upload, 'hash' | 'storage'>): Promise<Buffer> {
  const stream = await openUpload(upload);
  if (!stream) throw new Error(`The bytes of upload ${upload.hash} are missing from the ${upload.storage} store.`);
  return buffer(stream);
}

/** The bytes of an upload (or the inclusive range of them) as a stream; null when its store lacks them. */
export async function openUpload(upload: Pick<Upload, 'hash' | 'storage'>, range?: ByteRange): Promise<Readable | null> {
  return storeNamed(upload.storage).open(upload.hash, range);
}

/** Whether an upload's store has its bytes (a stat of the file, a look at the row): what HEAD asks, without reading them. */
export async function uploadStored(upload: Pick<Upload, 'hash' | 'storage'>): Promise<boolean> {
  return storeNamed(upload.storage).has(upload.hash);
}

/** The uploads with these hashes, without their bytes (what a page of attachments embeds), in one query. */
export async function loadUploads(hashes: string[]): Promise<Map<string, Upload>> {
  return new Map((await loadRows(Upload, 'hash', hashes, { attributes: UPLOAD_FIELDS })).map((u) => [u.hash, u]));
}

/** What an attachment (a ticket's, an article's) says of the file it attaches. */
export interface AttachedUpload {
  original_name: string;
  created_at: number;
  updated_at: number;
}

/**
 * An upload as an attachment embeds it; `folder` names the area that stored it (`selfservice`,
 * `tickets`). The same bytes are stored once, under the name (and at the time) they were FIRST
 * attached, perhaps by another ticket of another brand: the name, its type and the times shown
 * are the attachment's own, never the stored row's (which would tell who else sent the file).
 */
export function serializeUpload(upload: Upload, folder: string, attached: AttachedUpload): Record<string, any> {
  return {
    id: upload.id, hash: upload.hash, filename: cleanFileName(attached.original_name), folder, mime: mimeOf(attached.original_name),
    size: humanSize(Number(upload.size)), created_at: attached.created_at, updated_at: attached.updated_at,
  };
}
