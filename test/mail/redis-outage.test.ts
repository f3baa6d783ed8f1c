import { PRIVATE_REDIS_PORT } from './privateRedisEnv';
import request from 'supertest';
import { config } from '../../src/config';
import { now } from '../../src/db/entity';
import { OutboxEntry } from '../../src/db/models';
import { QUEUES } from '../../src/queue/names';
import { mailSpec } from '../../src/wiring';
import { jobIdOf, publishesSettled, sweepOutbox } from '../../src/queue/outbox';
import { createWorker } from '../../src/queue/runWorker';
import { useApi, unique } from '../helpers/app';
import { mailQueue, verificationEntry } from '../helpers/jobs';
import { usePrivateRedisAndSmtp } from '../helpers/privateRedis';
import { waitFor } from '../helpers/smtp';

const api = useApi();
const env = usePrivateRedisAndSmtp(PRIVATE_REDIS_PORT);
const { redis, sentTo } = env;
let brandId: number;

beforeAll(async () => {
  expect(config().redisUrl).toBe(redis.url);
  // Mail the files before this one left unsent on this database would be swept into this file's
  // queue: their brands' SMTP ports are closed, or taken since by another file's server that never
  // greets (a job then waits out the 15 s greeting timeout, and the waits below see no progress).
  await OutboxEntry.update({ failed_at: now() }, { where: { queue: QUEUES.mail, processed_at: null, failed_at: null } });
  const b = await api.post('/api/core/brand', { name: unique('Brand '), default_email: 'desk@brand.test', smtp_host: '127.0.0.1', smtp_port: env.smtp.port });
  brandId = b.body.data.id;
});

describe('mail while Redis is down', () => {
  it('is neither lost nor sent twice: users are created, and every mail goes out once Redis is back', async () => {
    // A user whose job reaches Redis, but no worker runs yet: the job is lost with Redis (it keeps nothing on disk).
    const before = `${unique('before')}@example.com`;
    const a = await api.post('/api/user/user', { email: before, brand_id: brandId, send_email: 1 });
    expect(a.status).toBe(200);
    const entryA = await waitFor(async () => (await verificationEntry(a.body.data.id))?.published_at ? verificationEntry(a.body.data.id) : undefined, 5000, 'the first job to be published');

    await redis.stop();

    // Redis is down: the request still succeeds, promptly, and its mail waits in the outbox.
    const during = `${unique('during')}@example.com`;
    const started = Date.now();
    const b = await api.post('/api/user/user', { email: during, brand_id: brandId, send_email: 1 });
    expect(b.status).toBe(200);
    expect(b.body.message).toBe('Successfully created new user!');
    expect(Date.now() - started).toBeLessThan(3000);
    const entryB = await verificationEntry(b.body.data.id);
    expect(entryB).not.toBeNull();
    await publishesSettled(); // the publish its commit started has given up
    await entryB!.reload();
    expect(entryB!.published_at).toBeNull();
    expect(await sweepOutbox(0, 0)).toBe(0); // Redis still down: nothing published, nothing lost
    expect((await entryB!.reload()).published_at).toBeNull();

    // The queue dashboard says what is wrong, in the API's envelope (Bull Board's own handler answered a raw 500).
    const board = await request(api.app).get('/admin/queues/api/queues').auth(api.token, 'x');
    expect(board.status).toBe(503);
    expect(board.body).toMatchObject({ status: 'error', message: expect.stringMatching(/^The queues cannot be read: Redis is unreachable/), data: null });

    await redis.start();
    const worker = await createWorker(mailSpec());
    try {
      // The sweep publishes the entry that never reached Redis and re-adds the one Redis lost
      // (and any entry of another queue an earlier file left: at least ours).
      expect(await sweepOutbox(0, 0)).toBeGreaterThanOrEqual(2);
      expect((await entryB!.reload()).published_at).not.toBeNull();
      // The sweep runs on, as the scheduler would run it.
      await waitFor(async () => sentTo(before) && sentTo(during) || (await sweepOutbox(0, 0), false), 15000, 'both mails');
      await waitFor(async () => (await entryA!.reload()).processed_at && (await entryB!.reload()).processed_at, 5000, 'both entries processed');

      // Later sweeps send nothing again: they re-add no processed entry, and the jobs of both have finished.
      await sweepOutbox(0, 0);
      const mail = mailQueue();
      try {
        expect(await mail.finished([jobIdOf(entryA!), jobIdOf(entryB!)], 'both jobs')).toEqual(['completed', 'completed']);
      } finally {
        await mail.close();
      }
      expect(sentTo(before)).toBe(1);
      expect(sentTo(during)).toBe(1);
    } finally {
      await worker.close();
    }
  });
});
