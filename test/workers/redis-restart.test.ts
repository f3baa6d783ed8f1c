import { RESTART_REDIS_PORT } from './restartEnv';
import { mailSpec } from '../../src/wiring';
import { createWorker } from '../../src/queue/runWorker';
import { schedulerSpec } from '../../src/wiring';
import { jobIdOf, publishesSettled } from '../../src/queue/outbox';
import { QUEUES } from '../../src/queue/names';
import { useApi, unique } from '../helpers/app';
import { mailQueue, readQueue, verificationEntry } from '../helpers/jobs';
import { usePrivateRedisAndSmtp } from '../helpers/privateRedis';
import { waitFor } from '../helpers/smtp';

const api = useApi();
const env = usePrivateRedisAndSmtp(RESTART_REDIS_PORT);
const { redis, sentTo } = env;

describe('the running system across a Redis restart (Redis keeps nothing on disk)', () => {
  it('sends every mail exactly once, with no manual step, once Redis is back', async () => {
    const brand = await api.post('/api/core/brand', { name: unique('Brand '), default_email: 'desk@brand.test', smtp_host: '127.0.0.1', smtp_port: env.smtp.port });
    const mail = await createWorker(mailSpec());
    const scheduler = await createWorker(schedulerSpec());
    try {
      const users: number[] = [];
      const createUser = async (email: string) => {
        const res = await api.post('/api/user/user', { email, brand_id: brand.body.data.id, send_email: 1 });
        expect(res.status).toBe(200);
        users.push(res.body.data.id);
      };
      const first = `${unique('first')}@example.com`;
      await createUser(first);
      await waitFor(() => sentTo(first), 15000, 'the mail before the outage');

      await redis.stop();
      const during = [`${unique('d1')}@example.com`, `${unique('d2')}@example.com`];
      for (const email of during) await createUser(email);
      await publishesSettled(); // their commits' publishes have given up
      expect(during.map(sentTo)).toEqual([0, 0]);

      // Redis comes back empty: the scheduler registers its schedules again, the sweep publishes.
      await redis.start();
      await waitFor(() => during.every(sentTo), 30000, 'the mails written during the outage');
      // Several sweeps and re-add rounds later, with every job of the three entries finished...
      const sweeps = readQueue(QUEUES.scheduler);
      const mailJobs = mailQueue();
      try {
        await sweeps.completedAfter('outbox.sweep', Date.now(), 3, 'three more outbox sweeps');
        const entries = await Promise.all(users.map(verificationEntry));
        await mailJobs.finished(entries.map((e) => jobIdOf(e!)), 'the jobs of the three entries');
      } finally {
        await Promise.all([sweeps.close(), mailJobs.close()]);
      }
      expect([first, ...during].map(sentTo)).toEqual([1, 1, 1]); // ...still exactly one each
    } finally {
      await scheduler.close();
      await mail.close();
    }
  });
});
