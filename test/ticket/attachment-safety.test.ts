/**
 * Attachments from hostile senders: a download is typed by its own name only (never by another
 * upload with the same bytes), sandboxed (CSP) and nosniff; bidi controls are stripped from
 * names; article uploads obey allowed_files like ticket uploads.
 */
import { randomBytes } from 'node:crypto';
import { ArticleAttachment, Setting } from '../../src/db/models';
import { useApi } from '../helpers/app';
import { expectError, expectList } from '../helpers/envelope';
import { factories } from '../selfservice/support';
import { b64, ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
let ctx: TicketContext;
beforeAll(async () => { ctx = await ticketContext(); });
const f = ticketFactories(api, () => ctx);
const s = factories(api);
const BASE = '/api/ticket/attachment';

const download = (id: number) => api.get(`${BASE}/${id}/download`).buffer(true).parse((res, cb) => {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
});

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

  it('strips bidi controls from names before the type check and the stored name', async () => {
    expectError(await api.post('/api/ticket/ticket', f.body({ user: (await f.user()).id, attachment: [{ filename: 'invoice\u202Efdp.exe', contents: b64('MZ') }] })), 422,
      /^The attachment\.0\.filename must be a file of type: /);
    const ticket = await f.ticket({ attachment: [{ filename: '\u2067report\u200F\u202A.txt\u2069', contents: b64('fine') }] });
    const [a] = expectList(await api.get(BASE, { ticket_id: ticket.id }));
    expect(a.original_name).toBe('report.txt');
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
