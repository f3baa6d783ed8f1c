import type { JobsOptions } from 'bullmq';
import { config } from '../config';
import { QUEUES, type QueueName } from './names';

/** The jobs written through the outbox, with their queue. Payloads carry ids, never secrets. */
export const JOBS = {
  'user.verification': { queue: QUEUES.mail },
} as const satisfies Record<string, { queue: QueueName }>;

export type JobName = keyof typeof JOBS;

export interface JobPayloads {
  'user.verification': { userId: number };
}

/** Retries with exponential backoff; failed jobs stay in the failed set with their reason. */
export function jobOptions(queue: QueueName): JobsOptions {
  if (queue === QUEUES.mail) {
    return {
      attempts: config().mail.attempts,
      backoff: { type: 'exponential', delay: config().mail.backoffMs },
      removeOnComplete: { age: 7 * 24 * 3600, count: 10000 },
      // A job out of attempts stays in the failed set, with its reason, for 30 days.
      removeOnFail: { age: 30 * 24 * 3600 },
    };
  }
  return { attempts: 3, backoff: { type: 'exponential', delay: 5000 }, removeOnComplete: 1000, removeOnFail: 5000 };
}
