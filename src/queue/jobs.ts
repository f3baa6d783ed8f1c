import type { Job, JobsOptions } from 'bullmq';
import type { ObjectSchema } from 'joi';
import type { QueueName } from './names';

/**
 * The one shape of every job, each defined in a file of its own in the area that owns it: its
 * name, queue, payload schema, BullMQ options, an optional schedule, and its handler. The worker
 * validates every payload against the schema before the handler runs; a job written to the outbox
 * (`enqueue` in outbox.ts) runs at most once per entry. Payloads carry ids, never secrets.
 * The composition root (src/wiring.ts) hands each worker its jobs.
 */
export interface JobDefinition<P = any> {
  name: string;
  queue: QueueName;
  schema: ObjectSchema<P>;
  /** Attempts, backoff and retention of every job of this definition (read when a job is added). */
  options(): JobsOptions;
  /** Housekeeping: a job scheduler adds the job (payload `{}`) every `every()` milliseconds. */
  schedule?: { every(): number };
  /**
   * The handler only reads (what it writes goes to Redis) and a few seconds of lag do it no harm:
   * its reads may go to a read replica (db/replicas.ts).
   */
  readsFromReplica?: boolean;
  handle(payload: P, job: Job): Promise<unknown>;
}

export const defineJob = <P>(def: JobDefinition<P>): JobDefinition<P> => def;

/** The job scheduler id of a scheduled job: stable across boots and releases (`tickets.autoclose` → `tickets-autoclose`). */
export const schedulerIdOf = (def: Pick<JobDefinition, 'name'>) => def.name.replace(/\./g, '-');

/**
 * Retries with exponential backoff; a job out of attempts stays in the failed set, with its
 * reason, for `keepFailedDays`.
 */
export const retried = (attempts: number, backoffMs: number, keepCompleted: { age: number; count: number }, keepFailedDays = 30): JobsOptions => ({
  attempts,
  backoff: { type: 'exponential', delay: backoffMs },
  removeOnComplete: keepCompleted,
  removeOnFail: { age: keepFailedDays * 24 * 3600 },
});
