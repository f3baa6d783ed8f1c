import type { Job, JobsOptions } from 'bullmq';
import type { ObjectSchema } from 'joi';
import { config } from '../config';
import { QUEUES, type QueueName } from './names';

/**
 * A job, defined once in the area that owns it: its name, queue, payload schema, handler and
 * options. Enqueueing (`enqueue` in outbox.ts) takes the payload type from the definition; the
 * worker validates the payload against the schema and runs an outbox job at most once.
 * Payloads carry ids, never secrets.
 */
export interface JobDefinition<P = any> {
  name: string;
  queue: QueueName;
  schema: ObjectSchema<P>;
  options?: JobsOptions;
  handle(payload: P, job: Job): Promise<unknown>;
}

export const defineJob = <P>(def: JobDefinition<P>): JobDefinition<P> => def;

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
  if (queue === QUEUES.webhooks) {
    return {
      attempts: config().webhooks.attempts,
      backoff: { type: 'exponential', delay: config().webhooks.backoffMs },
      removeOnComplete: { age: 24 * 3600, count: 10000 },
      removeOnFail: { age: 30 * 24 * 3600 },
    };
  }
  return { attempts: 3, backoff: { type: 'exponential', delay: 5000 }, removeOnComplete: 1000, removeOnFail: 5000 };
}
