import { Queue, type Job } from 'bullmq';
import { config } from '../../src/config';
import { OutboxEntry } from '../../src/db/models';
import { redisConnection } from '../../src/redis/connection';
import { QUEUES } from '../../src/queue/names';

/** The outbox entry written for a user's verification mail. */
export const verificationEntry = (userId: number) => OutboxEntry.findOne({ where: { name: 'user.verification', payload: JSON.stringify({ userId }) } });

/** Reads the mail queue (its own connection, closed by `close`). */
export function mailQueue() {
  const connection = redisConnection('producer');
  const queue = new Queue(QUEUES.mail, { connection, prefix: config().bullmqPrefix });
  return {
    queue,
    job: (id: string): Promise<Job | undefined> => queue.getJob(id),
    async close() {
      await queue.close();
      connection.disconnect();
    },
  };
}
