import { Queue } from 'bullmq';
import { config } from '../config';
import { redisConnection } from '../redis/connection';
import type { QueueName } from './names';

const queues = new Map<QueueName, Queue>();
let connection: ReturnType<typeof redisConnection> | undefined;

/** The producer side of a queue, shared by the process (one fail-fast Redis connection). */
export function queue(name: QueueName): Queue {
  let q = queues.get(name);
  if (!q) {
    connection ??= redisConnection('producer');
    q = new Queue(name, { connection, prefix: config().bullmqPrefix });
    q.on('error', () => { /* a failed add is reported to its caller */ });
    queues.set(name, q);
  }
  return q;
}

export async function closeQueues(): Promise<void> {
  await Promise.all([...queues.values()].map((q) => q.close()));
  queues.clear();
  if (connection) {
    connection.disconnect();
    connection = undefined;
  }
}
