import type { BackoffOptions, BackoffStrategy, Job, JobsOptions } from 'bullmq';
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
  /**
   * Records that the job failed for good where its handler records its outcome (a delivery's
   * status, a bulk job's), so none stays pending for ever: the worker calls it once the job is out
   * of attempts, whatever failed it: the handler, or its worker stopping while it ran more often
   * than BullMQ allows (the job is then failed without its handler running again). Idempotent:
   * the handler may have recorded the failure itself.
   */
  failed?(payload: P, reason: string, job: Job): Promise<void>;
}

export const defineJob = <P>(def: JobDefinition<P>): JobDefinition<P> => def;

/** The job scheduler id of a scheduled job: stable across boots and releases (`tickets.autoclose` → `tickets-autoclose`). */
export const schedulerIdOf = (def: Pick<JobDefinition, 'name'>) => def.name.replace(/\./g, '-');

/**
 * A custom BullMQ backoff type: `delay` doubled after each failed attempt, but never more than
 * `maxDelay` per wait, so many attempts cover a long outage without waits of days. The job
 * carries both (its options, as stored); every worker computes its waits (backoffStrategy below,
 * the `settings.backoffStrategy` of createWorker).
 */
export const CAPPED_EXPONENTIAL = 'capped-exponential';

export interface CappedBackoff extends BackoffOptions {
  type: typeof CAPPED_EXPONENTIAL;
  delay: number;
  maxDelay: number;
}

/** The wait after failed attempt `attemptsMade` (1 after the first): `delay × 2^(attemptsMade−1)`, at most `maxDelay`. */
export const cappedDelay = (attemptsMade: number, { delay, maxDelay }: Pick<CappedBackoff, 'delay' | 'maxDelay'>): number =>
  Math.min(maxDelay, Math.round(delay * 2 ** Math.max(0, attemptsMade - 1)));

/**
 * The custom backoff strategy of every worker: BullMQ asks it for types it does not know itself
 * (it computes `fixed` and `exponential`). An unknown type is an error, as BullMQ's own.
 */
export const backoffStrategy: BackoffStrategy = (attemptsMade, type, _err, job) => {
  const backoff = job?.opts.backoff;
  if (type === CAPPED_EXPONENTIAL && typeof backoff === 'object' && backoff.type === CAPPED_EXPONENTIAL) {
    return cappedDelay(attemptsMade, backoff as CappedBackoff);
  }
  throw new Error(`Unknown backoff type ${type}`);
};

/**
 * Retries with exponential backoff, each wait at most `maxBackoffMs` when given (CAPPED_EXPONENTIAL);
 * a job out of attempts stays in the failed set, with its reason, for `keepFailedDays`.
 */
export const retried = (
  attempts: number, backoffMs: number, keepCompleted: { age: number; count: number }, keepFailedDays = 30, maxBackoffMs?: number,
): JobsOptions => {
  const capped: CappedBackoff | undefined = maxBackoffMs === undefined ? undefined : { type: CAPPED_EXPONENTIAL, delay: backoffMs, maxDelay: maxBackoffMs };
  const backoff: BackoffOptions = capped ?? { type: 'exponential', delay: backoffMs };
  return { attempts, backoff, removeOnComplete: keepCompleted, removeOnFail: { age: keepFailedDays * 24 * 3600 } };
};
