import { randomBytes } from 'node:crypto';
import { Op, type Transaction } from 'sequelize';
import { OutboxEntry } from '../db/models';
import { now } from '../db/entity';
import { logger } from '../logger';
import { jobNamed } from '../jobs';
import { jobOptions, type JobDefinition } from './jobs';
import type { QueueName } from './names';
import { queue } from './producer';

const PUBLISH_TIMEOUT_MS = 3000;

/**
 * The BullMQ job id of an entry: the same at every publish of the entry (a second add is a
 * no-op), and never one that a job of another database left in a shared Redis holds (outbox ids
 * start again at 1 when a database is recreated).
 */
export const jobIdOf = (entry: Pick<OutboxEntry, 'id' | 'job_key'>) => `outbox-${entry.id}-${entry.job_key}`;

/**
 * Records a side effect in the caller's transaction. It is published to BullMQ after the commit,
 * so no job exists for data that was rolled back, and a job is never lost because Redis was
 * down: the row stays until the outbox sweep publishes it.
 */
export async function enqueue<P>(transaction: Transaction, job: JobDefinition<P>, payload: P): Promise<OutboxEntry> {
  const entry = await OutboxEntry.create({
    job_key: randomBytes(8).toString('hex'), queue: job.queue, name: job.name, payload: JSON.stringify(payload), created_at: now(),
  }, { transaction });
  // A savepoint's afterCommit runs when the savepoint is released, before the real commit: the
  // job could run (and find nothing) first. Published after the outermost commit, unless a
  // savepoint on the way was rolled back (the entry with it).
  const chain: Transaction[] = [];
  for (let t: Transaction | undefined = transaction; t; t = (t as unknown as { parent?: Transaction }).parent) chain.push(t);
  chain[chain.length - 1].afterCommit(() => {
    if (chain.some((t) => (t as unknown as { finished?: string }).finished === 'rollback')) return;
    void publish([entry]);
  });
  return entry;
}

const withTimeout = <T>(p: Promise<T>, ms: number) => new Promise<T>((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms);
  p.then((v) => { clearTimeout(timer); resolve(v); }, (e) => { clearTimeout(timer); reject(e); });
});

/**
 * Adds the entries' jobs under `jobIdOf(entry)` (a second publish of the same entry is a no-op
 * while the job exists; the handler also skips an entry already processed), then marks them
 * published. Returns how many were published; failures are left for the next sweep.
 */
export async function publish(entries: OutboxEntry[]): Promise<number> {
  let published = 0;
  for (const entry of entries) {
    try {
      const data = { ...JSON.parse(entry.payload), outboxId: entry.id };
      const options = { ...jobOptions(entry.queue as QueueName), ...jobNamed(entry.name)?.options, jobId: jobIdOf(entry) };
      await withTimeout(queue(entry.queue as QueueName).add(entry.name, data, options), PUBLISH_TIMEOUT_MS);
      await OutboxEntry.update({ published_at: now() }, { where: { id: entry.id } });
      published++;
    } catch (err) {
      logger.warn({ outboxId: entry.id, job: entry.name, reason: (err as Error).message }, 'outbox entry not published yet; the sweep will retry');
      break; // Redis is away: the rest waits for the sweep too
    }
  }
  return published;
}

/**
 * Publishes what a crash or a Redis outage left behind: entries never published after
 * `unpublishedAfterMs`, and entries published but neither processed nor failed for good after
 * `unprocessedAfterMs` (their job may have died with a Redis that keeps nothing on disk).
 * Re-adding a job that still exists is a no-op (same job id), and a processed entry is never run
 * again.
 */
export async function sweepOutbox(unpublishedAfterMs: number, unprocessedAfterMs: number, batch = 500): Promise<number> {
  const t = now();
  const [unpublished, unprocessed] = await Promise.all([
    OutboxEntry.findAll({
      where: { published_at: { [Op.is]: null }, created_at: { [Op.lte]: t - Math.floor(unpublishedAfterMs / 1000) } },
      order: [['id', 'ASC']], limit: batch,
    }),
    OutboxEntry.findAll({
      where: { processed_at: { [Op.is]: null }, failed_at: { [Op.is]: null }, published_at: { [Op.lte]: t - Math.floor(unprocessedAfterMs / 1000) } },
      order: [['id', 'ASC']], limit: batch,
    }),
  ]);
  const entries = [...unpublished, ...unprocessed];
  return entries.length ? publish(entries) : 0;
}

/**
 * Runs an outbox job's work at most once per entry: an entry already processed (its job was
 * published twice) is skipped. The mark is written after the work succeeded, so a crash in
 * between means the work is retried, never silently dropped.
 */
export async function processOnce(outboxId: number | undefined, work: () => Promise<unknown>): Promise<unknown> {
  if (!outboxId) return work();
  const entry = await OutboxEntry.findByPk(outboxId);
  if (entry?.processed_at) return { skipped: 'already processed' };
  const result = await work();
  await OutboxEntry.update({ processed_at: now() }, { where: { id: outboxId, processed_at: { [Op.is]: null } } });
  return result;
}

/** The entry's job ran out of attempts (it stays in the queue's failed set, with its reason). */
export async function markFailed(outboxId: number): Promise<void> {
  await OutboxEntry.update({ failed_at: now() }, { where: { id: outboxId } });
}
