import type { Job } from 'bullmq';
import { mailSpec } from '../../src/wiring';
import { MailDelivery } from '../../src/db/models';
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
