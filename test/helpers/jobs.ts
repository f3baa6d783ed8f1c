import { Queue, type Job } from 'bullmq';
import { config } from '../../src/config';
import { OutboxEntry } from '../../src/db/models';
import { now } from '../../src/db/entity';
import { transaction } from '../../src/db/transaction';
import { queue as producerQueue } from '../../src/queue/producer';
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

/**
 * Drops the mail queued and not sent, and marks its outbox entries failed so that no sweep
 * publishes them again. The files of one jest worker share its queue: mail an earlier file queued
 * (through the API, with no mail worker running, or left when its SMTP server stopped) would be
 * the first work of the next mail worker started, each job trying a server that is gone, retries
 * included (in a full run, 332 such jobs made the backlog test's 180 mails take 40 s to settle
 * instead of 4). So a file drops them before it starts a mail worker, and after its tests.
 */
export async function dropQueuedMail(): Promise<void> {
  const queue = producerQueue(QUEUES.mail);
  // A job a worker of this file still holds (its afterAll may close the worker after this one ran)
  // finishes first: removed from under it, its worker failed to record the end ("Missing key for
  // job ... moveToFinished", logged as a worker error). Paused, no worker takes another; an active
  // job without a lock is held by no worker (one stopped while running it) and may go at once.
  await queue.pause();
  const client = await queue.client;
  await waitFor(async () => {
    const locks = await Promise.all((await queue.getActive()).map((job) => client.get(`${queue.toKey(job.id!)}:lock`)));
    return locks.every((lock) => lock === null);
  }, 15000, 'the mail worker to finish the jobs it holds');
  await queue.obliterate({ force: true }); // which unpauses the queue: its meta key goes too
  // In a transaction that runs again when it is a deadlock's victim: the file's mail worker may
  // still be recording a delivery (its transaction locks the entry it marks processed).
  await transaction((t) => OutboxEntry.update({ failed_at: now() }, { where: { queue: QUEUES.mail, processed_at: null, failed_at: null }, transaction: t }));
}

/** Reads the mail queue (readQueue). */
export const mailQueue = () => readQueue(QUEUES.mail);
