/**
 * A real Sentinel set (a master, a replica, three Sentinels) failing over while tickets are
 * written through the API and their mails sent by the mail worker: the master is killed (SIGKILL,
 * so what it had not yet replicated is lost), the Sentinels promote the replica, and the app
 * follows. Every mail the tickets cause reaches the SMTP server exactly once: what never reached
 * Redis, or died with the master, is published again by the outbox sweep, and an entry already
 * processed is never sent again.
 */
import { SENTINEL_MASTER, SENTINEL_PORTS } from './sentinelEnv';
import { Queue } from 'bullmq';
import { config } from '../../src/config';
import { closeTransports } from '../../src/mail/transports';
import { closeQueues } from '../../src/queue/producer';
import { QUEUES } from '../../src/queue/names';
import { createWorker } from '../../src/queue/runWorker';
import { redisConnection } from '../../src/redis/connection';
import { mailSpec, schedulerSpec } from '../../src/wiring';
import { OutboxEntry } from '../../src/db/models';
import { now } from '../../src/db/entity';
import { useApi } from '../helpers/app';
import { recipientsOf, writeMailingTicket, writeThroughFailover } from '../helpers/failover';
import { PrivateSentinelSet } from '../helpers/privateRedis';
import { startSmtp, waitForProgress, type TestSmtp } from '../helpers/smtp';
import { mailEntries, mailWorld, type MailWorld } from '../notifications/support';

const set = new PrivateSentinelSet(SENTINEL_PORTS, SENTINEL_MASTER);
// Started before the app connects (hooks run in the order they are declared).
beforeAll(() => set.start());

const waiting: number[] = [];
const workers: Array<{ close(): Promise<void> }> = [];
// Before useApi's hooks: after-all hooks run in their order, and useApi's closes the database and
// the queues' connections. The workers stop first: a job still running would otherwise lose its
// database under it and its worker wait on it.
afterAll(async () => {
  for (const w of workers) await w.close();
  await OutboxEntry.destroy({ where: { id: waiting } });
});
const api = useApi();
let smtp: TestSmtp;
let world: MailWorld;

beforeAll(async () => {
  expect(config().redis).toMatchObject({ kind: 'sentinel', name: set.name });
  smtp = await startSmtp();
  world = await mailWorld(smtp.port);
  workers.push(await createWorker(mailSpec()), await createWorker(schedulerSpec()));
});

// More entries than a sweep takes (500), published long before the test and never processed:
// their jobs wait in a queue no worker of this test serves, as a webhook backlog would. The sweep
// re-adds them again and again; the mails lost in the failover must still get their turn.
beforeAll(async () => {
  const rows = Array.from({ length: 600 }, (_, i) => ({
    job_key: `w${String(i).padStart(6, '0')}${now().toString(16)}`.slice(0, 16), queue: QUEUES.webhooks, name: 'webhook.deliver',
    payload: JSON.stringify({ deliveryId: 2147483000 + i }), options: '{}', published_at: 1 + i, created_at: now() - 3600,
  }));
  waiting.push(...(await OutboxEntry.bulkCreate(rows)).map((e) => e.id));
});

afterAll(async () => {
  closeTransports();
  await closeQueues();
  await set.stop();
  await smtp?.close();
});

const writeTicket = () => writeMailingTicket(api, world, 'Failover ');

const received = (number: string) => recipientsOf(smtp, number);

describe('Redis Sentinel failing over while tickets and mails are written', () => {
  it('loses no mail and sends none twice', async () => {
    const tickets: Array<Awaited<ReturnType<typeof writeTicket>>> = [];
    for (let i = 0; i < 3; i++) tickets.push(await writeTicket());

    // Tickets keep being written while the master dies and the Sentinels fail over.
    const { from, to, during: duringFailover } = await writeThroughFailover(() => set.killMasterAndFailOver(), writeTicket, tickets);
    expect(to).not.toBe(from);
    expect(duringFailover.length).toBeGreaterThan(0);
    for (let i = 0; i < 3; i++) tickets.push(await writeTicket());

    // Every mail arrives, then nothing is left that could send again: every entry processed, the
    // mail queue on the new master empty. Waits bounded by progress (mails received, entries
    // processed, jobs moving), not by a time: on a loaded machine the sweep's re-adds come late.
    const connection = redisConnection('producer');
    const mailQueue = new Queue(QUEUES.mail, { connection, prefix: config().bullmqPrefix });
    try {
      const state = async () => {
        let unprocessed = 0;
        for (const t of tickets) unprocessed += (await mailEntries(t.id)).filter(({ entry }) => !entry.processed_at).length;
        const jobs = await mailQueue.getJobCounts('wait', 'active', 'delayed', 'prioritized', 'completed', 'failed');
        return { mails: tickets.map((t) => received(t.number).length), unprocessed, jobs };
      };
      await waitForProgress(state, ({ mails }) => tickets.every((t, i) => mails[i] >= t.expected.length), 'every ticket\'s mails').catch(async (err: Error) => {
        // What the scheduler worker (the outbox sweep's) is doing, and what of the entries was published.
        const scheduler = new Queue(QUEUES.scheduler, { connection, prefix: config().bullmqPrefix });
        const counts = await scheduler.getJobCounts('wait', 'active', 'delayed', 'completed', 'failed');
        const active = (await scheduler.getActive()).map((j) => j.name);
        const failed = (await scheduler.getFailed(0, 4)).map((j) => `${j.name}: ${j.failedReason}`);
        await scheduler.close();
        let unpublished = 0;
        for (const t of tickets) unpublished += (await mailEntries(t.id)).filter(({ entry }) => !entry.published_at).length;
        throw new Error(`${err.message}; scheduler queue ${JSON.stringify({ counts, active, failed })}; unpublished entries ${unpublished}`);
      });
      await waitForProgress(state, ({ unprocessed }) => unprocessed === 0, 'every outbox entry processed');
      await waitForProgress(state, ({ jobs }) => jobs.wait + jobs.active + jobs.delayed + jobs.prioritized === 0, 'the mail queue on the new master to empty');
    } finally {
      await mailQueue.close();
      connection.disconnect();
    }

    // Each expected mail exactly once: the customer and the two active operators per ticket.
    for (const t of tickets) expect({ ticket: t.number, to: received(t.number) }).toEqual({ ticket: t.number, to: t.expected });
    expect(smtp.received.filter((m) => tickets.some((t) => m.parsed.headers.get('x-helpdesk-ticket') === t.number))).toHaveLength(tickets.length * 3);
    // The app writes to the promoted master: a ticket written now mails at once.
    const after = await writeTicket();
    await waitForProgress(async () => received(after.number).length, (n) => n === 3, 'the mails of a ticket written after the failover');
  });
});
