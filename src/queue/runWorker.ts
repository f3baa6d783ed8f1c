import { Worker, Queue, UnrecoverableError, type Job, type WorkerOptions } from 'bullmq';
import { config } from '../config';
import { logger } from '../logger';
import { redisConnection } from '../redis/connection';
import { sequelize } from '../db/sequelize';
import { readsFromReplica } from '../db/readRouting';
import { backoffStrategy, schedulerIdOf, type JobDefinition } from './jobs';
import { markFailed, processOnce, publishesSettled } from './outbox';
import { closeQueues } from './producer';
import { jobDuration, jobsTotal, startMetricsServer } from '../ops/metrics';
import { noteRedisError } from '../redis/outage';
import { guardStrayRejections } from '../lib/strayRejections';
import { stopWhenSupervisorGone } from '../lib/supervisor';
import type { QueueName } from './names';

export interface WorkerSpec {
  queue: QueueName;
  /** Every job this worker runs; those with a `schedule` are added by job schedulers it keeps registered. */
  jobs: JobDefinition[];
  concurrency?: number;
  options?: Partial<WorkerOptions>;
  /** Runs after the worker stopped (the process then closes its database and queue connections). */
  onClose?(): Promise<void>;
}

/** How long a worker waits to try again after Redis refused or dropped a fetch or a completion. */
const RUN_RETRY_DELAY_MS = 1000;

/**
 * How often a job may stall (its worker stopped while running it: a deploy's kill, a crash) and
 * still run again: BullMQ's default, 1, failed a webhook delivery or a mail whose worker was
 * restarted twice during it (a rolling deploy), with attempts left. A job that stops its worker
 * every time still ends, failed and recorded (JobDefinition.failed).
 */
const MAX_STALLED_COUNT = 5;

/** A job's payload, without the id of its outbox entry (an outbox job's). */
function payloadOf(job: Job): Record<string, unknown> {
  const { outboxId: _entry, ...payload } = job.data ?? {};
  return payload;
}

/** Builds the BullMQ worker of a spec; `start` wires signals for a worker process. */
export async function createWorker(spec: WorkerSpec) {
  sequelize(); // registers the models before any job touches them
  const byName = new Map(spec.jobs.map((j) => [j.name, j]));
  // BullMQ does not close connections it was given: they are closed here, after the worker.
  const connections = [redisConnection('worker')];
  const log = logger.child({ queue: spec.queue });
  const worker = new Worker(
    spec.queue,
    async (job) => {
      const def = byName.get(job.name);
      if (!def) throw new Error(`No handler for job ${job.name} on queue ${spec.queue}`);
      // Outbox jobs carry the id of their entry: the work runs at most once per entry.
      const { value, error } = def.schema.validate(payloadOf(job));
      if (error) throw new UnrecoverableError(`Invalid payload for ${job.name}: ${error.message}`);
      const run = () => def.handle(value, job);
      return processOnce(job.data?.outboxId, def.readsFromReplica ? () => readsFromReplica(run) : run);
    },
    {
      connection: connections[0],
      prefix: config().bullmqPrefix,
      concurrency: spec.concurrency ?? 1,
      // After a failed fetch or completion (Redis away: a restart, a Sentinel failover) BullMQ
      // waits runRetryDelay (15 s by default) before it tries again: the worker would sit idle
      // that long after Redis is back (the failover test saw the outbox sweep stall over 20 s).
      // Its errors are reported once per outage (noteRedisError), however often it retries.
      runRetryDelay: RUN_RETRY_DELAY_MS,
      maxStalledCount: MAX_STALLED_COUNT,
      // The waits of the custom backoff types (mail: exponential, capped), from the job's own options.
      settings: { backoffStrategy },
      ...spec.options,
    },
  );
  const observe = (job: Job) => {
    // A failed attempt that will be retried has no finishedOn: it ended now.
    if (job.processedOn) jobDuration.observe({ queue: spec.queue, job: job.name }, ((job.finishedOn ?? Date.now()) - job.processedOn) / 1000);
  };
  worker.on('completed', (job) => {
    jobsTotal.inc({ queue: spec.queue, job: job.name, outcome: 'completed' });
    observe(job);
  });
  worker.on('failed', (job, err) => {
    if (job) {
      const last = err instanceof UnrecoverableError || job.attemptsMade >= (job.opts.attempts ?? 1);
      jobsTotal.inc({ queue: spec.queue, job: job.name, outcome: last ? 'failed' : 'retry' });
      observe(job);
    }
    log.warn({ job: job?.name, id: job?.id, attempts: job?.attemptsMade, reason: err.message }, 'job failed');
    // Out of attempts: the outbox entry stops being a candidate for the sweep's re-add, and the
    // job's record says it failed.
    const final = job && (err instanceof UnrecoverableError || job.attemptsMade >= (job.opts.attempts ?? 1));
    if (!final) return;
    const def = byName.get(job.name);
    void (async () => {
      // The job's own record of its failure first, then the entry: the mail API shows a mail failed
      // once either is written, and with the record first it never shows one failed without why.
      if (def?.failed) {
        const { value, error } = def.schema.validate(payloadOf(job));
        if (!error) await def.failed(value, err.message, job).catch((e: Error) => log.error({ job: job.name, id: job.id, reason: e.message }, 'could not record the job\'s failure'));
      }
      if (job.data?.outboxId) await markFailed(job.data.outboxId).catch((e) => log.error({ reason: e.message }, 'could not mark the outbox entry failed'));
    })();
  });
  worker.on('error', (err) => noteRedisError(err) || log.error({ reason: err.message }, 'worker error'));

  let schedulerQueue: Queue | undefined;
  // Once, however often it is called (a test's own teardown and closeOpenWorkers may both). Open
  // from here on, before the job schedulers are registered (which waits for a Redis that is away):
  // a process stopped meanwhile closes the worker that may already take jobs.
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= (async () => {
    await worker.close();
    await schedulerQueue?.close();
    for (const c of connections) c.disconnect();
    await spec.onClose?.();
    open.delete(close);
  })());
  open.add(close);

  const scheduled = spec.jobs.filter((j) => j.schedule);
  if (scheduled.length) {
    const connection = redisConnection('worker');
    connections.push(connection);
    const queue = new Queue(spec.queue, { connection, prefix: config().bullmqPrefix });
    queue.on('error', (err) => noteRedisError(err) || log.warn({ reason: err.message }, 'scheduler queue error'));
    schedulerQueue = queue;
    const ours = new Set(scheduled.map(schedulerIdOf));
    const register = async () => {
      for (const def of scheduled) {
        await queue.upsertJobScheduler(schedulerIdOf(def), { every: def.schedule!.every() }, { name: def.name, data: {}, opts: def.options() });
      }
      // One spec per queue: a job scheduler on it that this release does not define was left by
      // another release (a rollback: a newer one's job, which this worker has no handler for and
      // would fail at every tick), and goes. The release started last decides.
      for (const other of await queue.getJobSchedulers()) {
        if (ours.has(other.key)) continue;
        await queue.removeJobScheduler(other.key);
        log.warn({ scheduler: other.key, job: other.name }, 'removed a job scheduler this release does not define');
      }
    };
    await register();
    // Job schedulers live in Redis: a Redis that restarted empty has forgotten them, so they are
    // registered again on every reconnection (upserting an existing one changes nothing).
    connection.on('ready', () => {
      register().then(() => log.info('job schedulers registered again after a Redis reconnection'))
        .catch((e) => log.error({ reason: e.message }, 'could not register the job schedulers'));
    });
  }

  return { worker, close };
}

/** The close of every worker createWorker built in this process and nothing closed yet. */
const open = new Set<() => Promise<void>>();

/**
 * Closes every worker of this process that is still open. A process that then closes its database
 * and queue connections must call it first: a worker left running on a closed connection retries
 * its fetch or completion for ever (a test file's teardown hung that way once).
 */
export async function closeOpenWorkers(): Promise<void> {
  await Promise.all([...open].map((close) => close()));
}

/** Entry point of a worker process: runs until SIGTERM/SIGINT, then finishes its jobs and exits. */
export async function startWorkerProcess(spec: WorkerSpec): Promise<void> {
  guardStrayRejections();
  const log = logger.child({ queue: spec.queue });
  // The signal handlers come first, as the web process's: a SIGTERM while it starts (waiting for a
  // Redis that is away registers no job scheduler until it is back) stops it with its own lines,
  // not Node's default exit.
  let metrics: Awaited<ReturnType<typeof startMetricsServer>> | undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'worker stopping');
    const force = setTimeout(() => {
      log.error('worker did not stop in time; exiting');
      process.exit(1);
    }, config().shutdownTimeoutMs);
    force.unref();
    try {
      // The worker, also one still registering its job schedulers (it may take jobs already).
      await closeOpenWorkers();
      metrics?.close();
      // The publishes its jobs' commits started (a mailbox poll's tickets) finish first.
      await publishesSettled();
      await closeQueues();
      await sequelize().close();
      process.exit(0);
    } catch (err) {
      log.error({ err }, 'error while stopping');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  stopWhenSupervisorGone();
  // A database it cannot reach is said at once, in one line, as the web process says it
  // (exitOnStartupError), not found out by every job it would take and fail.
  await sequelize().authenticate();
  if (stopping) return;
  await createWorker(spec);
  if (stopping) return;
  metrics = await startMetricsServer();
  if (stopping) return void metrics?.close();
  log.info('worker started');
}
