import type { Job } from 'bullmq';
import { mailSpec } from '../../src/wiring';
import { randomBytes } from 'node:crypto';
import * as mariadb from 'mariadb';
import { config } from '../../src/config';
import { DomainEvent, MailDelivery, OutboxEntry } from '../../src/db/models';
import { now } from '../../src/db/entity';
import { recordingDeliveries } from '../../src/mail/deliveries';
import { sentMails } from '../../src/mail/transports';
import type { JobDefinition } from '../../src/queue/jobs';
import { waitWhileProgressing } from '../helpers/progress';
import { closeTransports } from '../../src/mail/transports';
import { processOnce } from '../../src/queue/outbox';
import { useApi, unique } from '../helpers/app';
import { verificationEntry } from '../helpers/jobs';
import { startSmtp, waitFor, type TestSmtp } from '../helpers/smtp';

const api = useApi();
let smtp: TestSmtp;

beforeAll(async () => { smtp = await startSmtp(); });
afterAll(async () => {
  closeTransports();
  await smtp.close();
});

describe('a mail that is out', () => {
  it('marks its outbox entry processed with its delivery record, so a crash right after cannot send it again', async () => {
    const b = await api.post('/api/core/brand', { name: unique('Brand '), default_email: 'desk@brand.test', smtp_host: '127.0.0.1', smtp_port: smtp.port });
    const email = `${unique('mark')}@example.com`;
    const u = await api.post('/api/user/user', { email, brand_id: b.body.data.id, send_email: 1 });
    expect(u.status).toBe(200);
    const entry = (await waitFor(() => verificationEntry(u.body.data.id), 5000, 'the outbox entry'))!;

    // The job's work as the worker runs it, without the mark processOnce writes after it: what a
    // worker killed between the two leaves behind.
    const def = mailSpec().jobs.find((j) => j.name === 'user.verification')!;
    const job = { data: { outboxId: entry.id }, attemptsMade: 0, opts: { attempts: 5 } } as unknown as Job;
    await def.handle(def.schema.validate(JSON.parse(entry.payload)).value, job);
    expect(smtp.mailsTo(email)).toHaveLength(1);
    expect(await MailDelivery.findOne({ where: { outbox_id: entry.id } })).toMatchObject({ status: 'sent' });
    expect((await entry.reload()).processed_at).not.toBeNull();

    // The job runs again (its completion never reached Redis): the entry is done, nothing is sent.
    expect(await processOnce(entry.id, () => def.handle(def.schema.validate(JSON.parse(entry.payload)).value, job))).toEqual({ skipped: 'already processed' });
    expect(smtp.mailsTo(email)).toHaveLength(1);
  });
});

/** An outbox entry of the mail queue, for a delivery record to hang on. */
const entry = () => OutboxEntry.create({ job_key: randomBytes(8).toString('hex'), queue: 'mail', name: 'test.mail', payload: '{}', created_at: now() });
const jobOf = (outboxId: number) => ({ name: 'test.mail', data: { outboxId }, attemptsMade: 0, opts: { attempts: 5 } } as unknown as Job);
/** A mail job that sends (as the transport records a mail the server took), then runs `after`. */
const sending = (after: () => Promise<void> = async () => undefined): JobDefinition<unknown> => recordingDeliveries({
  name: 'test.mail', queue: 'mail', schema: undefined as never, options: () => ({}),
  async handle() {
    sentMails.getStore()!.push({ recipients: ['ada@example.com'], subject: 'Hello', messageId: '<m@test>', response: '250 OK', refused: [] });
    await after();
    return { sent: true };
  },
} as unknown as JobDefinition<unknown>);

describe('what follows a mail that is out', () => {
  it('failing (recording its Message-ID met a deadlock or a timeout) records it sent and does not throw, so the job is not run (and the mail sent) again', async () => {
    const e = await entry();
    await expect(sending(async () => { throw new Error('Deadlock found when trying to get lock'); }).handle({}, jobOf(e.id))).resolves.toBeUndefined();
    expect(await MailDelivery.findOne({ where: { outbox_id: e.id } })).toMatchObject({ status: 'sent', message_id: '<m@test>', attempts: 1 });
    expect((await e.reload()).processed_at).not.toBeNull();
    expect(await DomainEvent.count({ where: { name: 'mail.delivered', payload: JSON.stringify({ outboxId: e.id }) } })).toBe(1);
  });

  it('its record is one upsert: a worker recording a first attempt holds no gap lock another worker\'s insert would deadlock on', async () => {
    // Both outbox ids above every record's: their records go into the same (last) gap of the index.
    const [mine, theirs] = [await entry(), await entry()];
    const url = new URL(config().database.url);
    const other = await mariadb.createConnection({
      host: url.hostname, port: Number(url.port || 3306), user: decodeURIComponent(url.username || 'root'), password: decodeURIComponent(url.password), database: config().database.name,
    });
    try {
      // Another worker recording its first attempt the old way: a locking read of a record not written yet (the gap).
      await other.query('BEGIN');
      await other.query('SELECT id FROM mail_deliveries WHERE outbox_id = ? FOR UPDATE', [theirs.id]);
      const recording = sending().handle({}, jobOf(mine.id));
      // Its insert waits for the other's gap lock...
      await waitWhileProgressing(async () => (await other.query(
        "SELECT COUNT(*) AS n FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT' AND trx_query LIKE 'INSERT INTO%mail_deliveries%'",
      ))[0].n > 0, () => [process.pid], 'the record\'s insert to wait');
      // ...and the other's insert goes through: it would be a deadlock had the record locked the gap too.
      await other.query('INSERT INTO mail_deliveries (outbox_id, status, attempts, created_at, updated_at) VALUES (?, \'sent\', 1, 1, 1)', [theirs.id]);
      await other.query('COMMIT');
      await recording;
    } finally {
      await other.end();
    }
    expect(await MailDelivery.findOne({ where: { outbox_id: mine.id } })).toMatchObject({ status: 'sent', attempts: 1 });
  });
});
