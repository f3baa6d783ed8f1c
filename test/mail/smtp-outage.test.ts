/**
 * An SMTP outage of hours loses no mail: a mail job's waits double from MAIL_BACKOFF_MS but never
 * exceed MAIL_BACKOFF_MAX_MS (BullMQ's custom backoff strategy, src/queue/jobs.ts), and the default
 * attempts cover a day. With small settings: a mail whose SMTP server is down at first is sent
 * once, when the server is back, after waits that stopped growing at the cap.
 */
import { OUTAGE } from './smtpOutageEnv';
import { config, loadConfig } from '../../src/config';
import { MailDelivery } from '../../src/db/models';
import { mailJobOptions } from '../../src/mail/retries';
import { closeTransports } from '../../src/mail/transports';
import { CAPPED_EXPONENTIAL, cappedDelay } from '../../src/queue/jobs';
import { jobIdOf, sweepOutbox } from '../../src/queue/outbox';
import { createWorker } from '../../src/queue/runWorker';
import { mailSpec } from '../../src/wiring';
import { useApi, unique } from '../helpers/app';
import { HoldingProxy } from '../helpers/holdingProxy';
import { mailQueue, verificationEntry } from '../helpers/jobs';
import { freePort } from '../helpers/ports';
import { startSmtp, waitFor, waitForProgress, type TestSmtp } from '../helpers/smtp';

const HOUR = 3600_000;

describe('the mail retry schedule', () => {
  it('by default doubles from 15 s, waits at most an hour, and keeps trying for more than a day', () => {
    const defaults = loadConfig({}).mail;
    expect(defaults).toMatchObject({ attempts: 32, backoffMs: 15_000, maxBackoffMs: HOUR });
    const waits = Array.from({ length: defaults.attempts - 1 }, (_, i) => cappedDelay(i + 1, { delay: defaults.backoffMs, maxDelay: defaults.maxBackoffMs }));
    expect(waits.slice(0, 9)).toEqual([15_000, 30_000, 60_000, 120_000, 240_000, 480_000, 960_000, 1_920_000, HOUR]);
    expect(waits.slice(8).every((w) => w === HOUR)).toBe(true);
    const total = waits.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThanOrEqual(24 * HOUR);
    expect(total).toBeLessThan(25 * HOUR);
  });

  it('keeps the variables of before: MAIL_ATTEMPTS and MAIL_BACKOFF_MS as set, the cap on its own', () => {
    expect(loadConfig({ MAIL_ATTEMPTS: '6', MAIL_BACKOFF_MS: '1000' }).mail).toMatchObject({ attempts: 6, backoffMs: 1000, maxBackoffMs: HOUR });
    expect(loadConfig({ MAIL_BACKOFF_MAX_MS: '60000' }).mail.maxBackoffMs).toBe(60_000);
    expect(() => loadConfig({ MAIL_BACKOFF_MAX_MS: '5' })).toThrow(/MAIL_BACKOFF_MAX_MS/);
    // Waits never grow past the cap, however many attempts (no overflow to Infinity or NaN).
    expect(cappedDelay(1000, { delay: 15_000, maxDelay: HOUR })).toBe(HOUR);
  });

  it('is what every mail job carries (the workers compute its waits: below)', () => {
    const opts = mailJobOptions();
    expect(opts.attempts).toBe(OUTAGE.attempts);
    expect(opts.backoff).toEqual({ type: CAPPED_EXPONENTIAL, delay: OUTAGE.backoffMs, maxDelay: OUTAGE.maxBackoffMs });
  });
});

describe('mail while the SMTP server is down', () => {
  const api = useApi();
  let smtp: TestSmtp;
  let proxy: HoldingProxy | undefined;
  let worker: Awaited<ReturnType<typeof createWorker>>;
  let jobs: ReturnType<typeof mailQueue>;
  /** The wait BullMQ set after each failed attempt of each job (job.delay, as the worker saw it). */
  const waits = new Map<string, number[]>();

  beforeAll(async () => {
    expect(config().mail).toMatchObject({ attempts: OUTAGE.attempts, maxBackoffMs: OUTAGE.maxBackoffMs });
    smtp = await startSmtp();
    worker = await createWorker(mailSpec());
    worker.worker.on('failed', (job) => {
      if (job?.id) waits.set(job.id, [...(waits.get(job.id) ?? []), job.delay]);
    });
    jobs = mailQueue();
  });

  afterAll(async () => {
    await worker.close();
    closeTransports();
    await jobs.close();
    await proxy?.stop();
    await smtp.close();
  });

  it('is sent once the server is back, after waits capped at MAIL_BACKOFF_MAX_MS, and only once', async () => {
    // The brand's SMTP address: nothing listens there until the "server" (a proxy to the test's) comes back.
    const port = await freePort();
    const b = await api.post('/api/core/brand', { name: unique('Brand '), default_email: 'desk@outage.test', smtp_host: '127.0.0.1', smtp_port: port });
    expect(b.status).toBe(200);
    const email = `${unique('outage')}@example.com`;
    const u = await api.post('/api/user/user', { email, brand_id: b.body.data.id, send_email: 1 });
    expect(u.status).toBe(200);
    const entry = (await waitFor(() => verificationEntry(u.body.data.id), 5000, 'the outbox entry'))!;
    const id = jobIdOf(entry);

    // Down for 6 attempts: past the point where uncapped waits would have grown to 800 ms and more.
    await waitForProgress(async () => waits.get(id)?.length ?? 0, (n) => n >= 6, 'six failed attempts');
    const delivery = await MailDelivery.findOne({ where: { outbox_id: entry.id } });
    expect(delivery).toMatchObject({ status: 'queued' });
    expect(delivery!.error).toMatch(/ECONNREFUSED/);
    expect(smtp.mailsTo(email)).toEqual([]);

    proxy = new HoldingProxy(port, smtp.port);
    await proxy.start();
    await waitFor(() => smtp.mailsTo(email)[0], 15000, 'the mail once the server is back');
    const job = await waitForProgress(async () => jobs.job(id), (j) => Boolean(j?.finishedOn), 'the job to complete');
    expect(await job!.getState()).toBe('completed');

    // Each failed attempt waited delay × 2^(n−1), at most the cap.
    const seen = waits.get(id)!;
    expect(seen).toEqual(seen.map((_, i) => Math.min(OUTAGE.maxBackoffMs, OUTAGE.backoffMs * 2 ** i)));
    expect(seen.slice(2).every((w) => w === OUTAGE.maxBackoffMs)).toBe(true);
    expect(job!.attemptsMade).toBe(seen.length + 1);
    await entry.reload();
    expect(entry.processed_at).not.toBeNull();
    expect(entry.failed_at).toBeNull();
    expect(await MailDelivery.findOne({ where: { outbox_id: entry.id } })).toMatchObject({ status: 'sent', attempts: seen.length + 1, error: null });

    // Once: a sweep that publishes the entry again adds nothing (same job id, entry processed).
    await sweepOutbox(0, 0);
    expect(await (await jobs.job(id))!.getState()).toBe('completed');
    expect(smtp.mailsTo(email)).toHaveLength(1);
  });
});
