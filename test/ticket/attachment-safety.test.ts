/**
 * Attachments from hostile senders: a download is typed by its own name only (never by another
 * upload with the same bytes), sandboxed (CSP) and nosniff; bidi controls are stripped from
 * names; article uploads obey allowed_files like ticket uploads.
 */
import { randomBytes } from 'node:crypto';
import { ArticleAttachment, Brand, Setting, TicketAttachment, Upload } from '../../src/db/models';
import { unique, useApi } from '../helpers/app';
import { expectError, expectList, expectSuccess } from '../helpers/envelope';
import { factories } from '../selfservice/support';
import { b64, ticketContext, ticketFactories, type TicketContext } from './ticketSupport';
import { asBytes } from '../helpers/bytes';

const api = useApi();
let ctx: TicketContext;
beforeAll(async () => { ctx = await ticketContext(); });
const f = ticketFactories(api, () => ctx);
const s = factories(api);
const BASE = '/api/ticket/attachment';

const download = (id: number) => asBytes(api.get(`${BASE}/${id}/download`));

async function withAllowedFiles<T>(value: string, run: () => Promise<T>): Promise<T> {
  const setting = (await Setting.findOne({ where: { scope: 'ticket', name: 'allowed_files' } }))!;
  const before = setting.value;
  await setting.update({ value });
  try {
    return await run();
  } finally {
    await setting.update({ value: before });
  }
}

describe('attachment downloads', () => {
  it('types a file by its own name, not by an earlier upload of the same bytes, sandboxed and nosniff', async () => {
    const bytes = `<script>alert(${randomBytes(8).toString('hex')})</script>`;
    await withAllowedFiles('?.*', async () => {
      const first = await f.ticket({ attachment: [{ filename: 'x.html', contents: b64(bytes) }] });
      const second = await f.ticket({ attachment: [{ filename: 'x.7z', contents: b64(bytes) }] });
      const [html] = expectList(await api.get(BASE, { ticket_id: first.id }));
      const [archive] = expectList(await api.get(BASE, { ticket_id: second.id }));
      expect(archive.upload_hash).toBe(html.upload_hash); // one stored file
      expect(archive.upload.mime).toBe('application/octet-stream');
      const res = await download(archive.id);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/octet-stream');
      expect(res.headers['content-security-policy']).toBe('sandbox');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-disposition']).toMatch(/^attachment; filename="?x\.7z"?$/);
      expect((res.body as Buffer).toString()).toBe(bytes);
      const htmlRes = await download(html.id);
      expect(htmlRes.headers['content-type']).toMatch(/^text\/html/);
      expect(htmlRes.headers['content-security-policy']).toBe('sandbox');
    });
  });

  it('shows each attachment\'s own name and times, never those the same bytes were first stored with (another brand\'s ticket)', async () => {
    const bytes = `payroll ${randomBytes(8).toString('hex')}`;
    // The bytes first come in on a ticket of another brand, under a telling name, long ago.
    const brand = await Brand.create({ name: unique('Brand') });
    const department = await f.department({}, brand.id);
    const stranger = await f.user({ brand_id: brand.id });
    const first = await f.ticket({ brand: brand.id, department: department.id, user: stranger.id, attachment: [{ filename: 'ceo-salaries.txt', contents: b64(bytes) }] });
    const [original] = expectList(await api.get(BASE, { ticket_id: first.id }));
    await Upload.update({ created_at: 1000000000, updated_at: 1000000000 }, { where: { hash: original.upload_hash } });
    // Then on this brand's ticket, and on a message of it, under other names.
    const ticket = await f.ticket({ attachment: [{ filename: 'notes.txt', contents: b64(bytes) }] });
    const message = await f.message(ticket, { attachment: [{ filename: 'again.log', contents: b64(bytes) }] });
    const listed = expectList(await api.get(BASE, { ticket_id: ticket.id }));
    expect(listed.map((a) => a.upload_hash)).toEqual([original.upload_hash, original.upload_hash]);
    const shown = [...listed, expectSuccess(await api.get(`${BASE}/${listed[0].id}`)), ...message.attachments,
      ...expectSuccess(await api.get(`/api/ticket/message/${message.id}`)).attachments];
    for (const a of shown) {
      expect(a.upload).toMatchObject({ filename: a.original_name, mime: 'text/plain', created_at: a.created_at, updated_at: a.updated_at });
      expect(JSON.stringify(a)).not.toContain('ceo-salaries');
      expect(a.upload.created_at).not.toBe(1000000000);
    }
    expect(shown.map((a) => a.upload.filename)).toEqual(['notes.txt', 'again.log', 'notes.txt', 'again.log', 'again.log']);
    const res = await download(listed[0].id);
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="?notes\.txt"?$/);
    expect(res.headers['last-modified']).toBe(new Date(listed[0].created_at * 1000).toUTCString());
    // An article attaching the same bytes shows its own name too.
    const article = await s.article({ attachment: [{ filename: 'guide.txt', contents: b64(bytes) }] });
    const [a] = expectList(await api.get('/api/selfservice/attachment', { article_id: article.id }));
    expect(a.upload).toMatchObject({ hash: original.upload_hash, filename: 'guide.txt', created_at: a.created_at });
    // The original keeps its own.
    expect(expectSuccess(await api.get(`${BASE}/${original.id}`)).upload.filename).toBe('ceo-salaries.txt');
  });

  it('strips bidi controls from names before the type check and the stored name', async () => {
    expectError(await api.post('/api/ticket/ticket', f.body({ user: (await f.user()).id, attachment: [{ filename: 'invoice\u202Efdp.exe', contents: b64('MZ') }] })), 422,
      /^The attachment\.0\.filename must be a file of type: /);
    const ticket = await f.ticket({ attachment: [{ filename: '\u2067report\u200F\u202A.txt\u2069', contents: b64('fine') }] });
    const [a] = expectList(await api.get(BASE, { ticket_id: ticket.id }));
    expect(a.original_name).toBe('report.txt');
  });
});

describe('attachment names with a path', () => {
  it('are stored as their last segment (tickets and articles); a name that is only a path is missing', async () => {
    const ticket = await f.ticket({ attachment: [
      { filename: '../../etc/passwd.txt', contents: b64('a') }, { filename: 'C:\\Users\\bob\\report.pdf', contents: b64('b') },
    ] });
    expect(expectList(await api.get(BASE, { ticket_id: ticket.id })).map((a) => a.original_name).sort()).toEqual(['passwd.txt', 'report.pdf']);
    for (const filename of ['../', 'dir/..', '/']) {
      expectError(await api.post('/api/ticket/ticket', f.body({ user: (await f.user()).id, attachment: [{ filename, contents: b64('x') }] })), 422,
        'The attachment.0.filename field is required.');
    }
    const article = await s.article({ attachment: [{ filename: '../guide.txt', contents: b64('read me') }] });
    expect(expectList(await api.get('/api/selfservice/attachment', { article_id: article.id }))[0].original_name).toBe('guide.txt');
  });
});

describe('article uploads', () => {
  it('obey allowed_files like ticket uploads; names lose bidi controls', async () => {
    const before = await ArticleAttachment.count();
    const author = (await s.operator()).id;
    const category = [(await s.category((await s.type()).id)).id];
    expectError(await api.post('/api/selfservice/article', {
      author_id: author, category, title: 'Tool', text: 'x', attachment: [{ filename: 'tool.exe', contents: b64('MZ') }],
    }), 422, /^The attachment\.0\.filename must be a file of type: /);
    expect(await ArticleAttachment.count()).toBe(before);
    const article = await s.article({ attachment: [{ filename: 'guide\u202E.txt', contents: b64('read me') }] });
    const [a] = expectList(await api.get('/api/selfservice/attachment', { article_id: article.id }));
    expect(a.original_name).toBe('guide.txt');
  });
});

describe('attachment names of characters outside the BMP', () => {
  const emoji = (n: number) => '😀'.repeat(n);

  it('count each emoji as one character, as the varchar(255) column does (tickets, messages and articles)', async () => {
    const ticket = await f.ticket();
    for (const filename of [`${emoji(130)}.txt`, `${emoji(251)}.txt`]) {
      const message = await f.message(ticket, { attachment: [{ filename, contents: b64(`hi ${randomBytes(4).toString('hex')}`) }] });
      const stored = (await TicketAttachment.findByPk(message.attachments[0].id))!;
      expect(stored.original_name).toBe(filename);
      expect((await Upload.findOne({ where: { hash: stored.upload_hash } }))!.filename).toBe(filename);
    }
    expectError(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: ticket.user_id, text: 'x', attachment: [{ filename: `${emoji(252)}.txt`, contents: b64('hi') }] }),
      422, 'The attachment.0.filename may not be greater than 255 characters.');
    const article = await s.article();
    expectSuccess(await api.put(`/api/selfservice/article/${article.id}`, { attachment: [{ filename: `${emoji(130)}.txt`, contents: b64('hi') }] }), 'Successfully updated the article!');
    expect(expectList(await api.get('/api/selfservice/attachment', { article_id: article.id })).map((a) => a.original_name)).toEqual([`${emoji(130)}.txt`]);
  });
});

describe('attachment names that are nothing once cleaned', () => {
  it('only dots and bidi controls are a missing name, whatever allowed_files allows', async () => {
    await withAllowedFiles('*', async () => {
      const user = (await f.user()).id;
      for (const filename of ['..\u202E', '.\u202E', '\u2067..\u2069', 'dir/..\u202E', '\u202E']) {
        expectError(await api.post('/api/ticket/ticket', f.body({ user, attachment: [{ filename, contents: b64('x') }] })), 422,
          'The attachment.0.filename field is required.');
      }
    });
  });
});
