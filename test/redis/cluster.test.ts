/**
 * The app on a three-node Redis Cluster made by `redis-cli --cluster create`: BullMQ's keys carry
 * the hash tag `{QUEUE_PREFIX}` (its Lua scripts touch several keys of a queue, which must share a
 * slot), mail goes out through the queue, and counters, rate limits and cache versions work on
 * whichever node holds their key.
 */
import { CLUSTER_PORTS } from './clusterEnv';
import type { Cluster } from 'ioredis';
import { config } from '../../src/config';
import { closeTransports } from '../../src/mail/transports';
import { closeQueues } from '../../src/queue/producer';
import { createWorker } from '../../src/queue/runWorker';
import { countInWindow, counterClient } from '../../src/redis/windowCounter';
import { mailSpec } from '../../src/wiring';
import { useApi, unique } from '../helpers/app';
import { PrivateCluster } from '../helpers/privateRedis';
import { startSmtp, waitFor, type TestSmtp } from '../helpers/smtp';
import { customer, mailWorld, type MailWorld } from '../notifications/support';

const cluster = new PrivateCluster(CLUSTER_PORTS);
beforeAll(() => cluster.start());

const api = useApi();
let smtp: TestSmtp;
let world: MailWorld;
let worker: Awaited<ReturnType<typeof createWorker>>;

beforeAll(async () => {
  expect(config().redis).toMatchObject({ kind: 'cluster' });
  expect(config().bullmqPrefix).toBe(`{${config().queuePrefix}}`);
  smtp = await startSmtp();
  world = await mailWorld(smtp.port);
  worker = await createWorker(mailSpec());
});

afterAll(async () => {
  await worker?.close();
  closeTransports();
  await closeQueues();
  await cluster.stop();
  await smtp?.close();
});

describe('a Redis Cluster', () => {
  it('queues mail under the hash-tagged prefix: a ticket\'s mails are sent once each', async () => {
    const user = await customer(world.brand.id);
    const res = await api.post('/api/ticket/ticket', {
      brand: world.brand.id, department: world.department.id, status: world.openStatus, priority: world.priorityId, user: user.id,
      subject: unique('Cluster '), text: 'Through a cluster.', send_user_email: 1, send_operators_email: 1,
    });
    expect(res.status).toBe(200);
    const number = res.body.data.number as string;
    const to = () => smtp.received.filter((m) => m.parsed.headers.get('x-helpdesk-ticket') === number).flatMap((m) => m.envelopeTo).sort();
    await waitFor(() => to().length >= 3, 30000, 'the ticket\'s mails');
    expect(to()).toEqual([user.email, world.direct.email, world.grouped.email].sort());

    // Every key of the mail queue is on the one node of the tag's slot.
    const node = await cluster.nodeOf(`{${config().queuePrefix}}`);
    const masters = (counterClient() as Cluster).nodes('master');
    const keys = await masters.find((n) => n.options.port === node)!.keys(`{${config().queuePrefix}}:mail:*`);
    expect(keys.length).toBeGreaterThan(0);
    for (const other of masters.filter((n) => n.options.port !== node)) {
      expect(await other.keys(`{${config().queuePrefix}}:*`)).toEqual([]);
    }
  });

  it('counts in windows (rate limits, failed logins) and answers readiness', async () => {
    const key = unique('cluster-count');
    expect(await countInWindow(key, 60)).toMatchObject({ count: 1 });
    expect(await countInWindow(key, 60)).toMatchObject({ count: 2 });
    expect((await api.get('/readyz')).status).toBe(200);
  });
});
