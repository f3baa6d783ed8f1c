/**
 * Attachments off the database (ATTACHMENTS_STORAGE=directory, a private temp ATTACHMENTS_DIR):
 * both stores through the BlobStore interface (idempotent puts verified by hash, no half file,
 * ranges), new uploads written as files with their rows in the database, a rolled-back transaction
 * leaving only an orphan file that the sweep removes, downloads streamed with byte ranges from
 * either store, and the move command both ways on real rows (resumable, verified, refusing a
 * file whose bytes do not match).
 */
import { attachmentsDir } from './directoryStorageEnv';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import request from 'supertest';
import { TicketAttachment, Upload } from '../../src/db/models';
import { schedulerIdOf } from '../../src/queue/jobs';
import { pruneUploads } from '../../src/storage/uploadPrune';
import { directorySweepJob, sweepAttachmentsDirectory } from '../../src/storage/sweepJob';
import { schedulerSpec } from '../../src/wiring';
import { sequelize } from '../../src/db/sequelize';
import { attachmentsCommand } from '../../src/cli/attachmentsCommand';
import { ConfigError, loadConfig } from '../../src/config';
import { HashMismatchError } from '../../src/storage/blobStore';
import { moveAttachments, sweepDirectory } from '../../src/storage/moveAttachments';
import { directoryStore, storeNamed } from '../../src/storage/stores';
import { findUpload, put, readUpload } from '../../src/storage/uploads';
import { useApi } from '../helpers/app';
import { expectError } from '../helpers/envelope';
import { b64, ticketContext, ticketFactories, type TicketContext } from '../ticket/ticketSupport';
import { asBytes } from '../helpers/bytes';

// Before useApi's, which closes the database (jest runs a file's afterAll hooks in order).
afterAll(async () => {
  await moveAttachments('database');
  rmSync(attachmentsDir, { recursive: true, force: true });
});
const api = useApi();
let ctx: TicketContext;
beforeAll(async () => { ctx = await ticketContext(); });
const f = ticketFactories(api, () => ctx);

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const fileOf = (hash: string) => join(attachmentsDir, hash.slice(0, 2), hash.slice(2, 4), hash);
const read = async (stream: Readable | null) => {
  const chunks: Buffer[] = [];
  for await (const c of stream!) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
};
const download = (id: number, headers: Record<string, string> = {}) => {
  let req = api.get(`/api/ticket/attachment/${id}/download`);
  for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
  return asBytes(req);
};
/** An error answer of the download (parsed as the JSON envelope). */
const downloadError = (id: number, headers: Record<string, string> = {}) => {
  let req = api.get(`/api/ticket/attachment/${id}/download`);
  for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
  return req;
};
/** A ticket with one attachment of these bytes; returns the attachment (with its upload hash). */
async function attached(bytes: Buffer, filename = 'file.zip'): Promise<{ id: number; upload_hash: string }> {
  const ticket = await f.ticket({ attachment: [{ filename, contents: b64(bytes) }] });
  return (await api.get('/api/ticket/attachment', { ticket_id: ticket.id })).body.data[0];
}

describe('the setting', () => {
  it('defaults to the database; the directory store needs ATTACHMENTS_DIR; other stores are refused', () => {
    expect(loadConfig({}).attachmentStorage).toEqual({ store: 'database', dir: '' });
    expect(loadConfig({ ATTACHMENTS_STORAGE: 'directory', ATTACHMENTS_DIR: '/srv/files' }).attachmentStorage).toEqual({ store: 'directory', dir: '/srv/files' });
    for (const env of [{ ATTACHMENTS_STORAGE: 'directory' }, { ATTACHMENTS_STORAGE: 'directory', ATTACHMENTS_DIR: '' }, { ATTACHMENTS_STORAGE: 's3' }]) {
      expect(() => loadConfig(env)).toThrow(ConfigError);
    }
    expect(() => loadConfig({ ATTACHMENTS_STORAGE: 'directory' })).toThrow(/ATTACHMENTS_DIR is required/);
    expect(() => loadConfig({ ATTACHMENTS_STORAGE: 'directory', ATTACHMENTS_DIR: 'files' })).toThrow(/ATTACHMENTS_DIR.*must be an absolute path/);
    expect(() => loadConfig({ ATTACHMENTS_DIR: './files' })).toThrow(/ATTACHMENTS_DIR.*must be an absolute path/);
  });
});

describe('the directory store', () => {
  const store = directoryStore();

  it('keeps a file under ab/cd/<sha256>, whole, once, from a buffer or a stream', async () => {
    const bytes = randomBytes(70_000);
    const hash = sha256(bytes);
    await store.put(hash, Readable.from([bytes.subarray(0, 1000), bytes.subarray(1000)]));
    expect(readFileSync(fileOf(hash)).equals(bytes)).toBe(true);
    await store.put(hash, bytes);
    expect(readdirSync(dirname(fileOf(hash)))).toEqual([hash]);
    expect(await store.has(hash)).toBe(true);
    expect(await store.size(hash)).toBe(70_000);
    expect((await read(await store.open(hash))).equals(bytes)).toBe(true);
    expect((await read(await store.open(hash, { start: 10, end: 19 }))).equals(bytes.subarray(10, 20))).toBe(true);
    expect((await read(await store.open(hash, { start: 69_999, end: 69_999 }))).equals(bytes.subarray(69_999))).toBe(true);
    await store.delete(hash);
    expect(existsSync(fileOf(hash))).toBe(false);
    expect([await store.has(hash), await store.size(hash), await store.open(hash)]).toEqual([false, null, null]);
    await store.delete(hash);
  });

  it('refuses bytes that are not those of the hash and leaves nothing behind, not even a temporary file', async () => {
    const hash = sha256(Buffer.from('the real bytes'));
    await expect(store.put(hash, Readable.from([Buffer.from('other bytes')]))).rejects.toThrow(HashMismatchError);
    expect(existsSync(fileOf(hash))).toBe(false);
    expect(readdirSync(dirname(fileOf(hash)))).toEqual([]);
    expect(() => store.pathOf('../../etc/passwd')).toThrow(RangeError);
  });
});

describe('the database store', () => {
  it('keeps bytes in their row and reads a range of them', async () => {
    const bytes = randomBytes(5000);
    const upload = await put(bytes, 'db.bin');
    expect(upload.storage).toBe('directory');
    const db = storeNamed('database');
    expect(await db.has(upload.hash)).toBe(false);
    await db.put(upload.hash, Readable.from([bytes]));
    expect(await db.size(upload.hash)).toBe(5000);
    expect((await read(await db.open(upload.hash))).equals(bytes)).toBe(true);
    expect((await read(await db.open(upload.hash, { start: 4990, end: 4999 }))).equals(bytes.subarray(4990))).toBe(true);
    await expect(db.put(upload.hash, randomBytes(10))).rejects.toThrow(HashMismatchError);
    await db.delete(upload.hash);
    expect(await db.open(upload.hash)).toBeNull();
  });
});

describe('uploads in directory mode', () => {
  it('a new upload is a file; its row keeps name, type and size, without the bytes', async () => {
    const bytes = randomBytes(1234);
    const a = await attached(bytes, 'report.pdf');
    const row = (await Upload.findOne({ where: { hash: a.upload_hash } }))!;
    expect(row).toMatchObject({ hash: sha256(bytes), storage: 'directory', contents: null, size: 1234, mime: 'application/pdf' });
    expect(readFileSync(fileOf(row.hash)).equals(bytes)).toBe(true);
    expect((await readUpload((await findUpload(row.hash))!)).equals(bytes)).toBe(true);
  });

  it('a transaction that rolls back leaves an orphan file and no row; the sweep removes only the orphan, once old enough', async () => {
    const orphan = randomBytes(300);
    const kept = randomBytes(300);
    await sequelize().transaction(async (t) => {
      await put(orphan, 'orphan.bin', t);
      throw new Error('rolled back');
    }).catch(() => undefined);
    const committed = await put(kept, 'kept.bin');
    expect(await Upload.count({ where: { hash: sha256(orphan) } })).toBe(0);
    expect(existsSync(fileOf(sha256(orphan)))).toBe(true);
    // A leftover temporary file, as a crash mid-write leaves one.
    const temp = join(dirname(fileOf(committed.hash)), `.${committed.hash}.abcdef.tmp`);
    writeFileSync(temp, 'half');

    expect(await sweepDirectory(3600)).toMatchObject({ removed: 0 });
    const old = new Date(Date.now() - 2 * 3600 * 1000);
    for (const p of [fileOf(sha256(orphan)), fileOf(committed.hash), temp]) utimesSync(p, old, old);
    const report = await sweepDirectory(3600);
    expect(report.removed).toBe(2);
    expect([existsSync(fileOf(sha256(orphan))), existsSync(temp), existsSync(fileOf(committed.hash))]).toEqual([false, false, true]);
    // Putting bytes whose file exists renews its time: the sweep spares it for a row about to commit.
    await directoryStore().put(committed.hash, kept);
    expect(await sweepDirectory(3600)).toMatchObject({ removed: 0 });
  });

  it('an upload no attachment names any more: the prune removes its row, the daily sweep its file once old enough', async () => {
    expect(schedulerSpec().jobs.filter((j) => j.schedule).map(schedulerIdOf)).toContain(schedulerIdOf(directorySweepJob));
    const bytes = randomBytes(300);
    const a = await attached(bytes, 'gone.txt');
    await TicketAttachment.destroy({ where: { id: a.id } });
    await sequelize().query('UPDATE uploads SET created_at = created_at - 7200 WHERE hash = :hash', { replacements: { hash: a.upload_hash } });
    await pruneUploads({ windows: 1000 });
    expect(await Upload.count({ where: { hash: a.upload_hash } })).toBe(0);
    expect(existsSync(fileOf(a.upload_hash))).toBe(true);
    expect(await sweepAttachmentsDirectory()).toBe(0);
    const old = new Date(Date.now() - 2 * 3600 * 1000);
    utimesSync(fileOf(a.upload_hash), old, old);
    expect(await sweepAttachmentsDirectory()).toBeGreaterThanOrEqual(1);
    expect(existsSync(fileOf(a.upload_hash))).toBe(false);
  });
});

describe('downloads', () => {
  const bytes = randomBytes(10_000);
  let id: number;
  beforeAll(async () => { id = (await attached(bytes, 'big.zip')).id; });

  it('stream the whole file with Accept-Ranges, ETag, Last-Modified and the safety headers', async () => {
    const res = await download(id);
    expect(res.status).toBe(200);
    expect((res.body as Buffer).equals(bytes)).toBe(true);
    expect(res.headers).toMatchObject({
      'accept-ranges': 'bytes', 'content-length': '10000', etag: `"${sha256(bytes)}"`, 'x-content-type-options': 'nosniff',
      'content-security-policy': 'sandbox', 'content-type': 'application/zip', 'content-disposition': 'attachment; filename=big.zip',
    });
    expect(res.headers['last-modified']).toMatch(/GMT$/);
    expect((await download(id, { 'If-None-Match': res.headers.etag })).status).toBe(304);
  });

  it('answer one range with 206 and Content-Range, from either store', async () => {
    const hash = sha256(bytes);
    for (const store of ['directory', 'database'] as const) {
      if (store === 'database') expect(await moveAttachments('database')).toMatchObject({ failed: 0 });
      expect((await Upload.findOne({ where: { hash } }))!.storage).toBe(store);
      for (const [range, start, end] of [['bytes=0-99', 0, 99], ['bytes=9990-', 9990, 9999], ['bytes=-10', 9990, 9999], ['bytes=5000-20000', 5000, 9999]] as const) {
        const res = await download(id, { Range: range });
        expect([store, range, res.status]).toEqual([store, range, 206]);
        expect(res.headers['content-range']).toBe(`bytes ${start}-${end}/10000`);
        expect(res.headers['content-length']).toBe(String(end - start + 1));
        expect((res.body as Buffer).equals(bytes.subarray(start, end + 1))).toBe(true);
      }
    }
    expect(await moveAttachments('directory')).toMatchObject({ failed: 0 });
  });

  it('answer 416 with bytes */size outside the file; the whole file for several ranges, another unit, a malformed range or a stale If-Range', async () => {
    const res = await downloadError(id, { Range: 'bytes=10000-' });
    expectError(res, 416, 'The requested range is not satisfiable.');
    expect(res.headers['content-range']).toBe('bytes */10000');
    for (const headers of <Array<Record<string, string>>>[{ Range: 'bytes=0-9,100-109' }, { Range: 'items=0-9' }, { Range: 'bytes=abc' }, { Range: 'bytes=0-9', 'If-Range': '"other"' }]) {
      const whole = await download(id, headers);
      expect([headers, whole.status]).toEqual([headers, 200]);
      expect((whole.body as Buffer).equals(bytes)).toBe(true);
    }
    // A last position before the first is an invalid range (RFC 9110 14.1.1), ignored as malformed:
    // not unsatisfiable.
    for (const range of ['bytes=5-2', 'bytes= 9999 - 0', 'bytes=0-9,20-10']) {
      const whole = await download(id, { Range: range });
      expect([range, whole.status, whole.headers['content-range']]).toEqual([range, 200, undefined]);
      expect((whole.body as Buffer).equals(bytes)).toBe(true);
    }
    // A first position past the end is still unsatisfiable, whatever the last.
    expect((await downloadError(id, { Range: 'bytes=20000-30000' })).status).toBe(416);
    const current = await download(id, { Range: 'bytes=0-9', 'If-Range': `"${sha256(bytes)}"` });
    expect(current.status).toBe(206);
  });

  it('a row whose file is missing answers 404 in the envelope', async () => {
    const lost = randomBytes(50);
    const a = await attached(lost);
    const path = fileOf(sha256(lost));
    rmSync(path);
    expectError(await downloadError(a.id), 404, /attachment/);
    // HEAD answers as GET would (a look for the file, not a read of it): no 200 and Content-Length
    // for bytes that are not there.
    const head = await request(api.server).head(`/api/ticket/attachment/${a.id}/download`).auth(api.token, 'x');
    expect(head.status).toBe(404);
    expect(head.headers['content-length']).not.toBe('50');
    // Put back, so the moves below find every file.
    writeFileSync(path, lost);
    const found = await request(api.server).head(`/api/ticket/attachment/${a.id}/download`).auth(api.token, 'x');
    expect([found.status, found.headers['content-length']]).toEqual([200, '50']);
  });
});

describe('npm run attachments -- move', () => {
  async function run(...argv: string[]) {
    let out = '';
    let err = '';
    const code = await attachmentsCommand(argv, { out: (t) => { out += t; }, err: (t) => { err += t; } });
    return { code, out, err };
  }
  const rows = (hashes: string[]) => Upload.findAll({ where: { hash: hashes }, order: [['id', 'ASC']] });

  it('moves every file into the database and back, in batches, verified, with progress; stopped midway it goes on where it was', async () => {
    // What earlier tests stored goes to the database first: the files of this test are then all there is to move.
    expect(await moveAttachments('database')).toMatchObject({ failed: 0 });
    const files = Array.from({ length: 7 }, (_, i) => randomBytes(1000 + i));
    const hashes = files.map(sha256);
    const attachments = [];
    for (const [i, bytes] of files.entries()) attachments.push(await attached(bytes, `f${i}.zip`));
    expect((await rows(hashes)).map((r) => r.storage)).toEqual(Array(7).fill('directory'));

    // Stopped after the first batch of 3 (as a crash of the command would), then run again.
    await expect(moveAttachments('database', { batch: 3, progress: () => { throw new Error('killed'); } })).rejects.toThrow('killed');
    expect((await rows(hashes)).filter((r) => r.storage === 'database')).toHaveLength(3);
    const toDb = await run('move', '--to', 'database', '--batch', '3');
    expect(toDb).toMatchObject({ code: 0, err: '' });
    // The 4 left: 1003 + 1004 + 1005 bytes, then 1006 more.
    expect(toDb.out.split('\n').filter(Boolean)).toEqual(['3/4 moved (2.9 KB)', '4/4 moved (3.9 KB)', 'Done: 4/4 moved (3.9 KB)']);
    for (const [i, r] of (await rows(hashes)).entries()) {
      expect(r.storage).toBe('database');
      expect(r.contents!.equals(files[i])).toBe(true);
      expect(existsSync(fileOf(r.hash))).toBe(false);
    }
    expect(((await download(attachments[6].id)).body as Buffer).equals(files[6])).toBe(true);

    const toDir = await run('move', '--to', 'dir');
    expect(toDir.code).toBe(0);
    expect(toDir.out).toMatch(/^Done: (\d+)\/\1 moved/m);
    for (const [i, r] of (await rows(hashes)).entries()) {
      expect([r.storage, r.contents]).toEqual(['directory', null]);
      expect(readFileSync(fileOf(r.hash)).equals(files[i])).toBe(true);
    }
    expect((await run('move', '--to', 'directory')).out).toBe('Done: 0/0 moved (0 B)\n');
  });

  it('leaves a file whose bytes do not match its hash where it is, says so, and exits 1', async () => {
    const good = randomBytes(100);
    const bad = randomBytes(100);
    await attached(good);
    await attached(bad);
    writeFileSync(fileOf(sha256(bad)), 'tampered');
    const res = await run('move', '--to', 'database');
    expect(res.code).toBe(1);
    expect(res.err).toBe(`${sha256(bad)}: The bytes hash to ${sha256(Buffer.from('tampered'))}, not ${sha256(bad)}.\n`);
    expect((await rows([sha256(good), sha256(bad)])).map((r) => r.storage)).toEqual(['database', 'directory']);
  });

  it('refuses an unknown store or command with the usage and exit code 2', async () => {
    for (const argv of [['move'], ['move', '--to', 's3'], ['move', '--to', 'dir', '--batch', '0'], ['frobnicate']]) {
      const res = await run(...argv);
      expect([argv, res.code]).toEqual([argv, 2]);
      expect(res.err).toContain('usage:');
    }
  });
});
