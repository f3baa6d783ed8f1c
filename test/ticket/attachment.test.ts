/**
 * Ticket attachments: stored through the uploads module (once per content), listed, shown,
 * downloaded byte for byte, deleted; refused (with nothing written) for bad base64, a type not in
 * allowed_files, or sizes over ATTACHMENT_MAX_BYTES / ATTACHMENTS_MAX_BYTES (2 KiB and 3 KiB here).
 */
import './smallAttachmentsEnv';
import { randomBytes } from 'node:crypto';
import { ConfigError, config, loadConfig } from '../../src/config';
import { Setting, Ticket, TicketAttachment, TicketMessage, Upload } from '../../src/db/models';
import { Joi, decodeBase64, field, validate } from '../../src/lib/validation';
import { parseAllowedFiles } from '../../src/ticket/ticketSettings';
import { useApi } from '../helpers/app';
import { expectDeleted, expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';
import { b64, ids, ticketContext, ticketFactories, type TicketContext } from './ticketSupport';
import { asBytes } from '../helpers/bytes';

const api = useApi();
const BASE = '/api/ticket/attachment';
let ctx: TicketContext;
beforeAll(async () => { ctx = await ticketContext(); });
const f = ticketFactories(api, () => ctx);

const ATTACHMENT_KEYS = ['id', 'upload_hash', 'ticket_id', 'message_id', 'original_name', 'created_at', 'updated_at', 'upload'];
const UPLOAD_KEYS = ['id', 'hash', 'filename', 'folder', 'mime', 'size', 'created_at', 'updated_at'];

/** Downloads as raw bytes. */
const download = (id: number) => asBytes(api.get(`${BASE}/${id}/download`));

async function counts() {
  return { tickets: await Ticket.count(), messages: await TicketMessage.count(), attachments: await TicketAttachment.count(), uploads: await Upload.count() };
}

describe('attachments of tickets and messages', () => {
  it('round trip: stored, listed, shown and downloaded byte for byte, with the name and type', async () => {
    const bytes = randomBytes(1500);
    const ticket = await f.ticket({ attachment: [{ filename: 'Rapport été.pdf', contents: b64(bytes) }, { filename: 'notes.txt', contents: b64('hello\n') }] });
    const listed = expectList(await api.get(BASE, { ticket_id: ticket.id }));
    expect(listed.map((a) => a.original_name)).toEqual(['Rapport été.pdf', 'notes.txt']);
    const [pdf] = listed;
    expect(Object.keys(pdf).sort()).toEqual([...ATTACHMENT_KEYS].sort());
    expect(Object.keys(pdf.upload).sort()).toEqual([...UPLOAD_KEYS].sort());
    expect(pdf.upload).toMatchObject({ hash: pdf.upload_hash, filename: 'Rapport été.pdf', folder: 'tickets', mime: 'application/pdf', size: '1.5 KB' });
    expect(pdf.upload_hash).toMatch(/^[0-9a-f]{64}$/);
    const first = (await TicketMessage.findOne({ where: { ticket_id: ticket.id } }))!;
    expect(pdf).toMatchObject({ ticket_id: ticket.id, message_id: first.id });
    expect(expectSuccess(await api.get(`${BASE}/${pdf.id}`))).toEqual(pdf);

    const res = await download(pdf.id);
    expect(res.status).toBe(200);
    expect(Buffer.compare(res.body as Buffer, bytes)).toBe(0);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="Rapport ?t?.pdf"; filename*=UTF-8''Rapport%20%C3%A9t%C3%A9.pdf`);
    const txt = await download(listed[1].id);
    expect((txt.body as Buffer).toString()).toBe('hello\n');
    expect(txt.headers['content-type']).toMatch(/^text\/plain/);
  });

  it('the same bytes are stored once; deleting an attachment leaves the stored file', async () => {
    const contents = b64(randomBytes(100));
    const ticket = await f.ticket({ attachment: [{ filename: 'a.png', contents }] });
    const before = await Upload.count();
    const message = await f.message(ticket, { attachment: [{ filename: 'b.png', contents }] });
    expect(await Upload.count()).toBe(before);
    const all = expectList(await api.get(BASE, { ticket_id: ticket.id }));
    expect(new Set(all.map((a) => a.upload_hash)).size).toBe(1);
    expect(ids(expectList(await api.get(BASE, { message_id: message.id })))).toEqual([message.attachments[0].id]);
    expectDeleted(await api.del(`${BASE}/${all[0].id}`), 'attachment');
    expectNotFound(await api.get(`${BASE}/${all[0].id}`), 'attachment');
    expectNotFound(await api.get(`${BASE}/${all[0].id}/download`), 'attachment');
    expect((await download(all[1].id)).status).toBe(200);
    expect(await Upload.count()).toBe(before);
  });

  it('lists with PAGING; 404s', async () => {
    const ticket = await f.ticket({ attachment: [1, 2, 3].map((i) => ({ filename: `f${i}.txt`, contents: b64(`file ${i}`) })) });
    const page = await api.get(BASE, { ticket_id: ticket.id, start: 2, limit: 1 });
    expect(expectList(page).map((a) => a.original_name)).toEqual(['f2.txt']);
    expect(page.body.count).toBe(3);
    expect(expectList(await api.get(BASE, { ticket_id: ticket.id, order_column: 'original_name', order_direction: 'desc' })).map((a) => a.original_name))
      .toEqual(['f3.txt', 'f2.txt', 'f1.txt']);
    expectNotFound(await api.get(`${BASE}/999999999`), 'attachment');
    expect((await api.post(BASE, {})).status).toBe(405);
  });

  it('bad base64 is a 422 and nothing is written', async () => {
    const before = await counts();
    const user = await f.user();
    for (const contents of ['not base64!', 'QUJD=A', 'QR', 'QR==']) {
      expectError(await api.post('/api/ticket/ticket', f.body({ user: user.id, attachment: [{ filename: 'a.txt', contents }] })), 422,
        'The attachment.0.contents must be a valid base64 string.');
    }
    expectError(await api.post('/api/ticket/ticket', f.body({ user: user.id, attachment: [{ filename: 'a.txt', contents: '' }] })), 422,
      'The attachment.0.contents field is required.');
    expectError(await api.post('/api/ticket/ticket', f.body({ user: user.id, attachment: [{ contents: b64('x') }] })), 422,
      'The attachment.0.filename field is required.');
    expect(await counts()).toEqual(before);
  });

  it('strict base64 decoding: standard or URL-safe, line breaks, padding right or absent', () => {
    expect(decodeBase64('aGVsbG8=')!.toString()).toBe('hello');
    expect(decodeBase64('aGVsbG8')!.toString()).toBe('hello');
    expect(decodeBase64('aGVs\r\nbG8=')!.toString()).toBe('hello');
    expect(decodeBase64('-_8=')).toEqual(Buffer.from([0xfb, 0xff]));
    for (const bad of ['aGVsbG8==', 'aGVsbG9=', 'a', 'aGVs*G8=', '====']) expect(decodeBase64(bad)).toBeNull();
  });

  it('a type not in allowed_files is a 422 and nothing is written; ?.* allows every type', async () => {
    const before = await counts();
    const user = await f.user();
    const res = await api.post('/api/ticket/ticket', f.body({ user: user.id, attachment: [{ filename: 'ok.txt', contents: b64('x') }, { filename: 'virus.exe', contents: b64('MZ') }] }));
    expectError(res, 422, /^The attachment\.1\.filename must be a file of type: jpg, jpeg, png, .*txt/);
    expectError(await api.post('/api/ticket/ticket', f.body({ user: user.id, attachment: [{ filename: 'noextension', contents: b64('x') }] })), 422,
      /^The attachment\.0\.filename must be a file of type: /);
    expect(await counts()).toEqual(before);
    const setting = (await Setting.findOne({ where: { scope: 'ticket', name: 'allowed_files' } }))!;
    const allowed = setting.value;
    await setting.update({ value: '?.*' });
    try {
      const ticket = await f.ticket({ attachment: [{ filename: 'tool.exe', contents: b64('MZ') }] });
      expect(expectList(await api.get(BASE, { ticket_id: ticket.id }))[0]).toMatchObject({ original_name: 'tool.exe', upload: { mime: 'application/octet-stream' } });
    } finally {
      await setting.update({ value: allowed });
    }
    expect(parseAllowedFiles('jpg|.PNG| txt ')).toEqual(['jpg', 'png', 'txt']);
    expect(parseAllowedFiles('jpg|*')).toBeNull();
  });

  it('a file over ATTACHMENT_MAX_BYTES, or files over ATTACHMENTS_MAX_BYTES together, are a 422 and nothing is written', async () => {
    const before = await counts();
    const user = await f.user();
    expectError(await api.post('/api/ticket/ticket', f.body({ user: user.id, attachment: [{ filename: 'big.txt', contents: b64(randomBytes(2049)) }] })), 422,
      'The attachment.0 may not be greater than 2 kilobytes.');
    const two = [1, 2].map((i) => ({ filename: `half${i}.txt`, contents: b64(randomBytes(1600)) }));
    expectError(await api.post('/api/ticket/ticket', f.body({ user: user.id, attachment: two })), 422, 'The attachments may not be greater than 3 kilobytes in total.');
    const ticket = await f.ticket();
    expectError(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: ticket.user_id, text: 'x', attachment: two }), 422,
      'The attachments may not be greater than 3 kilobytes in total.');
    expect(await counts()).toEqual({ ...before, tickets: before.tickets + 1, messages: before.messages + 1 });
  });

  it('a limit that is not a whole number of kilobytes is stated in bytes, never rounded to a false one', async () => {
    const limits = config().attachments;
    const user = await f.user();
    const refused = async (attachment: unknown[]) => api.post('/api/ticket/ticket', f.body({ user: user.id, attachment }));
    try {
      config().attachments = { maxFileBytes: 1000, maxRequestBytes: 1500 };
      expectError(await refused([{ filename: 'a.txt', contents: b64(randomBytes(1001)) }]), 422, 'The attachment.0 may not be greater than 1000 bytes.');
      expectError(await refused([1, 2].map((i) => ({ filename: `h${i}.txt`, contents: b64(randomBytes(800)) }))), 422,
        'The attachments may not be greater than 1500 bytes in total.');
      config().attachments = { maxFileBytes: 1024, maxRequestBytes: 10240 };
      expectError(await refused([{ filename: 'a.txt', contents: b64(randomBytes(1025)) }]), 422, 'The attachment.0 may not be greater than 1 kilobytes.');
    } finally {
      config().attachments = limits;
    }
    expect(() => validate(Joi.object({ contents: field.base64File(1000) }), { contents: b64(randomBytes(1001)) })).toThrow('The contents may not be greater than 1000 bytes.');
    expect(() => validate(Joi.object({ contents: field.base64File(2048) }), { contents: b64(randomBytes(2049)) })).toThrow('The contents may not be greater than 2 kilobytes.');
  });

  it('the limits are validated configuration', () => {
    expect(loadConfig({}).attachments).toEqual({ maxFileBytes: 10 * 1024 * 1024, maxRequestBytes: 25 * 1024 * 1024 });
    expect(loadConfig({ ATTACHMENT_MAX_BYTES: '1000', ATTACHMENTS_MAX_BYTES: '5000' }).attachments).toEqual({ maxFileBytes: 1000, maxRequestBytes: 5000 });
    for (const env of [{ ATTACHMENT_MAX_BYTES: 'lots' }, { ATTACHMENT_MAX_BYTES: String(11 * 1024 * 1024) }, { ATTACHMENTS_MAX_BYTES: '0' }]) {
      expect(() => loadConfig(env)).toThrow(ConfigError);
    }
  });
});
