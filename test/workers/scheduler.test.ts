import './fastScheduleEnv';
import { IpBan, OutboxEntry } from '../../src/db/models';
import { now } from '../../src/db/entity';
import { createWorker } from '../../src/queue/runWorker';
import { schedulerSpec } from '../../src/wiring';
import { jobIdOf } from '../../src/queue/outbox';
import { useApi, unique } from '../helpers/app';
import { mailQueue, readQueue } from '../helpers/jobs';
import { QUEUES } from '../../src/queue/names';
import { schedulerIdOf } from '../../src/queue/jobs';
import { waitFor } from '../helpers/smtp';

useApi();

describe('the scheduler worker', () => {
  it('deletes expired temporary bans and publishes what the outbox holds, on its schedules', async () => {
    const expired = await IpBan.create({ ip: '198.51.100.201', type: 0, expiry: now() - 10, reason: unique('old') });
    const current = await IpBan.create({ ip: '198.51.100.202', type: 0, expiry: now() + 3600 });
    const permanent = await IpBan.create({ ip: '198.51.100.203', type: 1, expiry: null });
    // An entry a crash left unpublished (its user need not exist: the job is only looked at here).
    const entry = await OutboxEntry.create({ job_key: 'sched0test000001', queue: 'mail', name: 'user.verification', payload: JSON.stringify({ userId: 999999 }), created_at: now() - 60 });

    const jobs = mailQueue();
    const scheduler = await createWorker(schedulerSpec());
    try {
      await waitFor(async () => !(await IpBan.findByPk(expired.id)), 10000, 'the expired ban to be deleted');
      expect(await IpBan.findByPk(current.id)).not.toBeNull();
      expect(await IpBan.findByPk(permanent.id)).not.toBeNull();

      await waitFor(async () => (await entry.reload()).published_at, 10000, 'the entry to be published');
      const job = await jobs.job(jobIdOf(entry));
      expect(job?.name).toBe('user.verification');
      expect(job?.data).toEqual({ userId: 999999, outboxId: entry.id });
    } finally {
      await scheduler.close();
      await jobs.close();
    }
  });

  it('removes the job schedulers of its queue that this release does not define (a newer release\'s, after a rollback)', async () => {
    const queue = readQueue(QUEUES.scheduler);
    // As a newer release would have left it: a job this one has no handler for, every second.
    await queue.queue.upsertJobScheduler('retired-job', { every: 1000 }, { name: 'retired.job', data: {} });
    expect((await queue.queue.getJobSchedulers()).map((j) => j.key)).toContain('retired-job');
    const scheduler = await createWorker(schedulerSpec());
    try {
      const keys = (await queue.queue.getJobSchedulers()).map((j) => j.key).sort();
      expect(keys).toEqual(schedulerSpec().jobs.filter((j) => j.schedule).map(schedulerIdOf).sort());
      // Nor is its next run left waiting.
      const delayed = await queue.queue.getDelayed();
      expect(delayed.filter((j) => j.name === 'retired.job')).toEqual([]);
    } finally {
      await scheduler.close();
      await queue.close();
    }
  });
});
