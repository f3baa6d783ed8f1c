import { createHash, randomBytes } from 'node:crypto';
import request from 'supertest';
import { Op } from 'sequelize';
import { ArticleAttachment, DomainEvent, Upload } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { validate } from '../../src/lib/validation';
import { articleCreateSchema } from '../../src/selfservice/article/resource';
import { MAX_UPLOAD_BYTES, findUpload, humanSize, mimeOf, put, readUpload } from '../../src/storage/uploads';
import { useApi, unique } from '../helpers/app';
import { expectDeleted, expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';
import { factories, ids } from './support';

const api = useApi();
const make = factories(api);
const BASE = '/api/selfservice/attachment';
const ATTACHMENT_KEYS = ['id', 'upload_hash', 'article_id', 'locale', 'original_name', 'created_at', 'updated_at', 'upload'];
const UPLOAD_KEYS = ['id', 'hash', 'filename', 'folder', 'mime', 'size', 'created_at', 'updated_at'];

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const file = (filename: string, bytes: Buffer, locale?: string) => ({ filename, contents: bytes.toString('base64'), ...(locale ? { locale } : {}) });

/** The raw bytes of a download (supertest buffers any content type). */
const download = (id: number) => request(api.app).get(`${BASE}/${id}/download`).auth(api.token, 'x')
  .buffer(true).parse((res, done) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => done(null, Buffer.concat(chunks)));
  });

/** A download that is expected to fail: its JSON envelope. */
const downloadError = (id: number | string) => request(api.app).get(`${BASE}/${id}/download`).auth(api.token, 'x');

describe('the uploads store', () => {
  it('keeps each content once, under its SHA-256', async () => {
    const bytes = randomBytes(100);
    const a = await put(bytes, 'one.bin');
    const b = await sequelize().transaction((t) => put(bytes, 'two.bin', t));
    expect(b.id).toBe(a.id);
    expect(a).toMatchObject({ hash: sha256(bytes), filename: 'one.bin', mime: 'application/octet-stream', size: 100 });
    expect((await readUpload((await findUpload(a.hash))!)).equals(bytes)).toBe(true);
    expect(await findUpload(sha256(Buffer.from(unique())))).toBeNull();
    await expect(put(Buffer.alloc(MAX_UPLOAD_BYTES + 1), 'big.bin')).rejects.toThrow(RangeError);
  });

  it('names sizes and types', () => {
    expect([humanSize(0), humanSize(1023), humanSize(1024), humanSize(1229), humanSize(3 * 1024 * 1024), humanSize(1.5 * 1024 ** 3)])
      .toEqual(['0 B', '1023 B', '1.0 KB', '1.2 KB', '3.0 MB', '1.5 GB']);
    expect([mimeOf('a.PNG'), mimeOf('notes.txt'), mimeOf('x.pdf'), mimeOf('noext'), mimeOf('a.weird')])
      .toEqual(['image/png', 'text/plain', 'application/pdf', 'application/octet-stream', 'application/octet-stream']);
  });
});

describe('article attachments', () => {
  it('round-trip byte for byte, with their upload', async () => {
    const bytes = randomBytes(3000);
    const article = await make.article({ attachment: [file('diagram.png', bytes), file('readme.txt', Buffer.from('hello\n'), 'fr')] });
    expect(article.attachments).toHaveLength(2);
    const [png, txt] = article.attachments;
    expect(Object.keys(png).sort()).toEqual([...ATTACHMENT_KEYS].sort());
    expect(Object.keys(png.upload).sort()).toEqual([...UPLOAD_KEYS].sort());
    expect(png).toMatchObject({
      upload_hash: sha256(bytes), article_id: article.id, locale: null, original_name: 'diagram.png',
      upload: { hash: sha256(bytes), filename: 'diagram.png', folder: 'selfservice', mime: 'image/png', size: '2.9 KB' },
    });
    expect(txt).toMatchObject({ locale: 'fr', original_name: 'readme.txt', upload: { mime: 'text/plain', size: '6 B' } });

    const res = await download(png.id);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('image/png');
    expect(res.headers['content-disposition']).toBe('attachment; filename=diagram.png');
    expect(res.headers['content-length']).toBe('3000');
    expect(Buffer.compare(res.body as Buffer, bytes)).toBe(0);
  });

  it('store the same content once, whatever its name or article', async () => {
    const bytes = Buffer.from(unique('shared content'));
    const a = await make.article({ attachment: [file('a.txt', bytes)] });
    const b = await make.article({ attachment: [file('b.log', bytes)] });
    expect(a.attachments[0].upload.id).toBe(b.attachments[0].upload.id);
    // Each shows its own name, not the one the bytes were first stored under.
    expect(a.attachments[0]).toMatchObject({ original_name: 'a.txt', upload: { filename: 'a.txt', mime: 'text/plain' } });
    expect(b.attachments[0]).toMatchObject({ original_name: 'b.log', upload: { filename: 'b.log', mime: 'text/plain' } });
    expect(await Upload.count({ where: { hash: sha256(bytes) } })).toBe(1);
    const res = await download(b.attachments[0].id);
    expect(res.headers['content-disposition']).toBe('attachment; filename=b.log');
    expect((res.body as Buffer).equals(bytes)).toBe(true);
  });

  it('are added by an update, and keep a name that is not ASCII', async () => {
    const article = await make.article({ attachment: [file('first.txt', Buffer.from('1'))] });
    const data = expectSuccess(await api.put(`/api/selfservice/article/${article.id}`, { attachment: [file('résumé.pdf', Buffer.from('%PDF-1.4'))] }), 'Successfully updated the article!');
    expect(data.attachments.map((a: any) => a.original_name)).toEqual(['first.txt', 'résumé.pdf']);
    const res = await download(data.attachments[1].id);
    expect(res.headers['content-disposition']).toBe('attachment; filename="r?sum?.pdf"; filename*=UTF-8\'\'r%C3%A9sum%C3%A9.pdf');
    expect(res.headers['content-type']).toBe('application/pdf');
  });

  it('JSON bodies take the attachment array as well', async () => {
    const article = await make.article();
    const bytes = randomBytes(64);
    const data = expectSuccess(await api.putJson(`/api/selfservice/article/${article.id}`, { attachment: [file('x.zip', bytes)] }), 'Successfully updated the article!');
    expect((await download(data.attachments[0].id)).body.equals(bytes)).toBe(true);
  });

  it('422 for a bad attachment, and nothing is stored', async () => {
    const author = await make.operator();
    const category = await make.category((await make.type()).id);
    const title = unique('Refused');
    const body = (attachment: unknown) => ({ author_id: author.id, title, text: 'x', category: [category.id], attachment });
    expectError(await api.post('/api/selfservice/article', body([{ filename: 'a.txt', contents: 'not base64!' }])), 422, 'The attachment.0.contents must be a valid base64 string.');
    // Strict, as a ticket's attachment: stray bits ('aGVsbG9=' is not what any bytes encode to) are refused, not decoded to other bytes.
    expectError(await api.post('/api/selfservice/article', body([{ filename: 'a.txt', contents: 'aGVsbG9=' }])), 422, 'The attachment.0.contents must be a valid base64 string.');
    expectError(await api.post('/api/selfservice/article', body([file('ok.txt', Buffer.from('ok')), { contents: 'aGk=' }])), 422, 'The attachment.1.filename field is required.');
    expectError(await api.post('/api/selfservice/article', body([{ filename: 'a.txt' }])), 422, 'The attachment.0.contents field is required.');
    expectError(await api.post('/api/selfservice/article', body([{ filename: 'a.txt', contents: '' }])), 422, 'The attachment.0.contents field is required.');
    expectError(await api.post('/api/selfservice/article', body([{ filename: 'a.txt', contents: 'aGk=', locale: 'not a locale' }])), 422, 'The attachment.0.locale format is invalid.');
    expectError(await api.post('/api/selfservice/article', body([{ filename: 'a.txt', contents: 'aGk=', locale: 'xx' }])), 422, 'The attachment.0.locale is not a valid ISO-639 code.');
    expect(await Upload.count({ where: { hash: sha256(Buffer.from('ok')) } })).toBe(0);
  });

  it('may not be larger than the store takes', () => {
    const big = Buffer.alloc(MAX_UPLOAD_BYTES + 1).toString('base64');
    expect(() => validate(articleCreateSchema, { author_id: 1, title: 't', text: 'x', category: [1], attachment: [{ filename: 'big.bin', contents: big }] }))
      .toThrow(`The attachment.0.contents may not be greater than ${MAX_UPLOAD_BYTES / 1024} kilobytes.`);
  });
});

describe('/api/selfservice/attachment', () => {
  it('lists by article, shows, deletes (the upload stays)', async () => {
    const bytes = Buffer.from(unique('listed'));
    const article = await make.article({ attachment: [file('a.txt', bytes), file('b.txt', Buffer.from('b'))] });
    const data = expectList(await api.get(BASE, { article_id: article.id }));
    expect(data).toEqual(article.attachments);
    const [first] = data;
    expect(expectSuccess(await api.get(`${BASE}/${first.id}`))).toEqual(first);
    expectDeleted(await api.del(`${BASE}/${first.id}`), 'attachment');
    expectNotFound(await api.get(`${BASE}/${first.id}`), 'attachment');
    expectNotFound(await downloadError(first.id), 'attachment');
    expect(ids(expectList(await api.get(BASE, { article_id: article.id })))).toEqual([article.attachments[1].id]);
    expect(await ArticleAttachment.count({ where: { article_id: article.id } })).toBe(1);
    expect(await Upload.count({ where: { hash: sha256(bytes) } })).toBe(1);
  });

  it('a delete changes its article: updated_at moves (the export sends it again) and an article.updated is emitted', async () => {
    const article = await make.article({ attachment: [file('gone.txt', Buffer.from(unique('gone')))] });
    await sequelize().query('UPDATE articles SET updated_at = 1000000 WHERE id = ?', { replacements: [article.id] });
    const mark = Number((await DomainEvent.max('id')) ?? 0);
    expectDeleted(await api.del(`${BASE}/${article.attachments[0].id}`), 'attachment');
    const shown = expectSuccess(await api.get(`/api/selfservice/article/${article.id}`));
    expect(shown.attachments).toEqual([]);
    expect(shown.updated_at).toBeGreaterThan(1_000_000);
    const events = await DomainEvent.findAll({ where: { id: { [Op.gt]: mark }, name: 'article.updated' } });
    expect(events.map((e) => JSON.parse(e.payload))).toContainEqual({ articleId: article.id });
  });

  it('404 with the label attachment; 405 for other methods', async () => {
    expectNotFound(await api.get(`${BASE}/999999`), 'attachment');
    expectNotFound(await downloadError(999999), 'attachment');
    expectNotFound(await downloadError('x'), 'attachment');
    const res = await request(api.app).post(`${BASE}/1/download`).auth(api.token, 'x');
    expect(res.headers.allow).toBe('GET');
    expectError(res, 405, 'The POST method is not supported here. Supported methods: GET.');
    expectError(await request(api.app).post(BASE).auth(api.token, 'x'), 405, 'The POST method is not supported here. Supported methods: GET.');
  });
});
