/**
 * Uploads in the database store (the default): the bytes cross to MariaDB as a prepared
 * statement's value. Escaped into a statement's text, as the driver's text protocol sends values,
 * a zero byte takes two: a file of zeros within ATTACHMENT_MAX_BYTES made a statement over
 * max_allowed_packet (16 MB), a 503 as if the database were away.
 */
import { Readable } from 'node:stream';
import { sequelize } from '../../src/db/sequelize';
import { storeNamed } from '../../src/storage/stores';
import { MAX_UPLOAD_BYTES, put, readUpload } from '../../src/storage/uploads';
import { transaction } from '../../src/db/transaction';
import { useApi } from '../helpers/app';
import { expectList, expectSuccess } from '../helpers/envelope';
import { b64, ticketContext, ticketFactories, type TicketContext } from '../ticket/ticketSupport';
import { asBytes } from '../helpers/bytes';

const api = useApi();
let ctx: TicketContext;
beforeAll(async () => { ctx = await ticketContext(); });
const f = ticketFactories(api, () => ctx);

describe('the database store', () => {
  it('keeps a file of zero bytes as large as the limit, whole (inserted, and put into its row again)', async () => {
    const zeros = Buffer.alloc(MAX_UPLOAD_BYTES);
    const upload = await transaction((t) => put(zeros, 'zeros.img', t));
    expect(upload).toMatchObject({ storage: 'database' });
    expect((await readUpload(upload)).equals(zeros)).toBe(true);

    const db = storeNamed('database');
    await sequelize().query('UPDATE uploads SET contents = NULL WHERE hash = ?', { replacements: [upload.hash] });
    await db.put(upload.hash, Readable.from([zeros]));
    expect(await db.size(upload.hash)).toBe(MAX_UPLOAD_BYTES);
  });

  it('a message takes an attachment of 9 MB of zeros, which downloads whole', async () => {
    const zeros = Buffer.alloc(9_000_000);
    const ticket = await f.ticket();
    expectSuccess(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: ticket.user_id, text: 'A disk image.', attachment: [{ filename: 'disk.pdf', contents: b64(zeros) }] }), 'Successfully created new message!');
    const [attachment] = expectList(await api.get('/api/ticket/attachment', { ticket_id: ticket.id }));
    const res = await asBytes(api.get(`/api/ticket/attachment/${attachment.id}/download`));
    expect(res.status).toBe(200);
    expect((res.body as Buffer).equals(zeros)).toBe(true);
  });
});
