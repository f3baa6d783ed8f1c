import { createServer } from 'node:net';
import { mailSpec } from '../../src/wiring';
import { Brand } from '../../src/db/models';
import { closeTransports } from '../../src/mail/transports';
import { createWorker } from '../../src/queue/runWorker';
import { jobIdOf } from '../../src/queue/outbox';
import { useApi, unique } from '../helpers/app';
import { mailQueue, verificationEntry } from '../helpers/jobs';
import { startSmtp, waitFor, type TestSmtp, waitForProgress } from '../helpers/smtp';

const api = useApi();
let smtp: TestSmtp;
let worker: Awaited<ReturnType<typeof createWorker>>;
let jobs: ReturnType<typeof mailQueue>;

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

async function userOfBrand(brand: Record<string, unknown>) {
  const b = await api.post('/api/core/brand', { name: unique('Brand '), default_email: 'desk@brand.test', smtp_host: '127.0.0.1', ...brand });
  expect(b.status).toBe(200);
  const email = `${unique('f')}@example.com`;
  const u = await api.post('/api/user/user', { email, brand_id: b.body.data.id, send_email: 1 });
  expect(u.status).toBe(200);
  const entry = await waitFor(() => verificationEntry(u.body.data.id), 5000, 'the outbox entry');
  return { email, entry, brandId: b.body.data.id as number };
}

/** The job once it has failed for good (read after its state, so its attempts are final). */
/** Waits while the job makes progress (attempts), until it failed for good. */
async function failedForGood(id: string) {
  await waitForProgress(async () => {
    const job = await jobs.job(id);
    return { state: await job?.getState(), attempts: job?.attemptsMade ?? 0 };
  }, (p) => p.state === 'failed', 'the job to fail for good');
  return (await jobs.job(id))!;
}

beforeAll(async () => {
  smtp = await startSmtp({ auth: { user: 'desk', pass: 'right-secret' } });
  worker = await createWorker(mailSpec());
  jobs = mailQueue();
});

afterAll(async () => {
  await worker.close();
  closeTransports();
  await jobs.close();
  await smtp.close();
});

describe('mail through a brand SMTP server that requires authentication', () => {
  it('is delivered with the brand credentials', async () => {
    const { email, brandId } = await userOfBrand({ smtp_port: smtp.port, smtp_requires_auth: 1, smtp_username: 'desk', smtp_password: 'right-secret' });
    const mail = await waitFor(() => smtp.mailsTo(email)[0], 15000, 'the mail');
    expect(mail.envelopeFrom).toBe('desk@brand.test');
    // The password set through the API is stored encrypted: the worker decrypted it to log in.
    expect((await Brand.findByPk(brandId))!.smtp_password).toMatch(/^v1:/);
  });

  it('with wrong credentials is retried, then stays in the failed set with the reason', async () => {
    const { email, entry } = await userOfBrand({ smtp_port: smtp.port, smtp_requires_auth: 1, smtp_username: 'desk', smtp_password: 'wrong' });
    const job = await failedForGood(jobIdOf(entry));
    expect(job.attemptsMade).toBe(3);
    expect(job.failedReason).toMatch(/Invalid login|535|authentication/i);
    expect(smtp.mailsTo(email)[0]).toBeUndefined();
    await entry.reload();
    expect(entry.processed_at).toBeNull();
  });
});

describe('mail through a brand whose SMTP server does not answer', () => {
  it('is retried with backoff, then stays in the failed set with the reason', async () => {
    const { entry } = await userOfBrand({ smtp_port: await closedPort() });
    const job = await failedForGood(jobIdOf(entry));
    expect(job.attemptsMade).toBe(3);
    expect(job.failedReason).toMatch(/ECONNREFUSED/);
    // Doubling from MAIL_BACKOFF_MS, each wait capped (MAIL_BACKOFF_MAX_MS, its default here; test/mail/smtp-outage.test.ts).
    expect(job.opts.backoff).toEqual({ type: 'capped-exponential', delay: 100, maxDelay: 3_600_000 });
    // Attempts were spaced out: 100 ms, then 200 ms at least.
    expect(job.finishedOn! - job.timestamp).toBeGreaterThanOrEqual(300);
  });
});

describe('a brand with no encryption and a server that offers STARTTLS with a self-signed certificate', () => {
  it('sends in plain SMTP (no encryption means none), so the mail arrives', async () => {
    const tlsSmtp = await startSmtp({ starttls: true });
    try {
      const { email } = await userOfBrand({ smtp_port: tlsSmtp.port, smtp_encryption: '' });
      await waitFor(() => tlsSmtp.mailsTo(email).length, 15000, 'the mail');
    } finally {
      await tlsSmtp.close();
    }
  });

  it('with encryption tls (STARTTLS required) refuses the certificate that does not verify', async () => {
    const tlsSmtp = await startSmtp({ starttls: true });
    try {
      const { entry } = await userOfBrand({ smtp_port: tlsSmtp.port, smtp_encryption: 'tls' });
      const job = await failedForGood(jobIdOf(entry));
      expect(job.failedReason).toMatch(/certificate/i);
    } finally {
      await tlsSmtp.close();
    }
  });
});
