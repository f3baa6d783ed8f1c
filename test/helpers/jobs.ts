import { Queue, type Job } from 'bullmq';
import { config } from '../../src/config';
import { OutboxEntry } from '../../src/db/models';
import { redisConnection } from '../../src/redis/connection';
import { QUEUES, type QueueName } from '../../src/queue/names';
import { waitFor } from './smtp';

/** The outbox entry written for a user's verification mail. */
export const verificationEntry = (userId: number) => OutboxEntry.findOne({ where: { name: 'user.verification', payload: JSON.stringify({ userId }) } });

/** Reads a queue (its own connection, closed by `close`). */
export function readQueue(name: QueueName) {
  const connection = redisConnection('producer');
  const queue = new Queue(name, { connection, prefix: config().bullmqPrefix });
  return {
    queue,
    job: (id: string): Promise<Job | undefined> => queue.getJob(id),
    /**
     * Waits until each job has finished (completed, or failed for good) or is gone, so none of
     * them can still send anything; returns their states (`gone` for one no longer kept).
     */
    finished: (ids: string[], what = 'the jobs to finish'): Promise<string[]> => waitFor(async () => {
      const states = await Promise.all(ids.map(async (id) => (await queue.getJob(id))?.getState() ?? 'gone'));
      return states.every((s) => s === 'completed' || s === 'failed' || s === 'gone') ? states : undefined;
    }, 15000, what),
    /** Waits until `count` jobs named `jobName` have completed after `since` (a time in ms). */
    completedAfter: (jobName: string, since: number, count: number, what = `${count} ${jobName} jobs`) => waitFor(async () => {
      const done = (await queue.getCompleted(0, 99)).filter((j) => j.name === jobName && (j.finishedOn ?? 0) > since);
      return done.length >= count ? done : undefined;
    }, 15000, what),
    /**
     * Removes the jobs waiting or delayed: those earlier files of this jest worker left (their
     * SMTP servers gone), which a worker this file starts would otherwise take before the file's
     * own job.
     */
    async dropBacklog(): Promise<void> {
      await queue.drain(true);
    },
    /**
     * Marks a job not taken yet as BullMQ marks one that stalled more often than allowed (its
     * workers stopped while running it): the next worker fails it without running it.
     */
    async stallBeyondLimit(id: string): Promise<void> {
      const job = await waitFor(() => queue.getJob(id), 15000, `job ${id} to be queued`);
      expect(await job.getState()).toMatch(/^(waiting|prioritized|delayed)$/);
      await (await queue.client).hset(queue.toKey(id), { defa: 'job stalled more than allowable limit' });
    },
    async close() {
      await queue.close();
      connection.disconnect();
    },
  };
}

/** Reads the mail queue (readQueue). */
export const mailQueue = () => readQueue(QUEUES.mail);
