import { randomBytes } from 'node:crypto';
import { Op, type Transaction } from 'sequelize';
import { OutboxEntry } from '../db/models';
import { now } from '../db/entity';
import { insertRows } from '../db/insertRows';
import { afterOutermostCommit, outermost, rolledBack } from '../db/transaction';
import { logger } from '../logger';
import type { JobDefinition } from './jobs';
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
 * down: the row stays until the outbox sweep publishes it. Returns the entry; null within
 * `outboxInOneInsert`, where it is written with the others of that work, in one statement at its
 * end (still in the transaction).
 */
export async function enqueue<P>(transaction: Transaction, job: JobDefinition<P>, payload: P): Promise<OutboxEntry | null> {
  const entry: Written = {
    row: {
      job_key: randomBytes(8).toString('hex'), queue: job.queue, name: job.name, payload: JSON.stringify(payload),
      options: JSON.stringify(job.options()), created_at: now(),
    },
    transaction,
  };
  const open = collecting.get(outermost(transaction));
  if (open) {
    open.push(entry);
    return null;
  }
  return (await write([entry], transaction))[0];
}

interface Written {
  row: Record<string, unknown>;
  /** The (sub)transaction that wrote it: an entry of a savepoint rolled back since is not published. */
  transaction: Transaction;
}

/** The entries each outermost transaction's `outboxInOneInsert` holds until its work ends. */
const collecting = new WeakMap<Transaction, Written[]>();

/**
 * Runs `work` (on `transaction`), writing the outbox entries it enqueues together, in one INSERT
 * when it ends (the subscribers of a batch of events: a batch of imported mails makes hundreds).
 * Nested, the outermost one writes. When `work` fails, nothing it enqueued is written.
 */
export async function outboxInOneInsert<T>(transaction: Transaction, work: () => Promise<T>): Promise<T> {
  const top = outermost(transaction);
  if (collecting.has(top)) return work();
  const entries: Written[] = [];
  collecting.set(top, entries);
  let result: T;
  try {
    result = await work();
  } finally {
    collecting.delete(top);
  }
  await write(entries.filter((e) => !rolledBack(e.transaction)), transaction);
  return result;
}

/** Inserts entries (one statement) and has them published after the outermost transaction's commit. */
async function write(entries: Written[], transaction: Transaction): Promise<OutboxEntry[]> {
  if (!entries.length) return [];
  const rows = await insertRows(OutboxEntry, entries.map((e) => e.row), transaction);
  // The transaction's entries are published together after its commit (one add per queue, one
  // UPDATE): a batch of imported mails writes hundreds of them.
  const top = outermost(transaction);
  let written = pending.get(top);
  if (!written) {
    pending.set(top, (written = []));
    const list = written;
    afterOutermostCommit(top, () => {
      // Those written in a savepoint that was rolled back are gone. The commit does not wait.
      const publishing = publish(list.filter((w) => !rolledBack(w.transaction)).map((w) => w.entry));
      inFlight.add(publishing);
      void publishing.finally(() => inFlight.delete(publishing));
    });
  }
  written.push(...rows.map((entry, i) => ({ entry, transaction: entries[i].transaction })));
  return rows;
}

/** The publishes that commits started and that have not finished yet. */
const inFlight = new Set<Promise<number>>();

/**
 * Resolves once every publish that a commit started has finished: its jobs added, or given up
 * (at most PUBLISH_TIMEOUT_MS) and left to the sweep. A stopping process waits for them before it
 * closes its queues.
 */
export async function publishesSettled(): Promise<void> {
  while (inFlight.size) await Promise.allSettled([...inFlight]);
}

/** The entries each outermost transaction wrote, with the (sub)transaction that wrote each. */
const pending = new WeakMap<Transaction, Array<{ entry: OutboxEntry; transaction: Transaction }>>();

const withTimeout = <T>(p: Promise<T>, ms: number) => new Promise<T>((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms);
  p.then((v) => { clearTimeout(timer); resolve(v); }, (e) => { clearTimeout(timer); reject(e); });
});

/** Jobs per `addBulk`: a large publish (a sweep, a batch of imported mails) goes out in pieces. */
const PUBLISH_CHUNK = 100;

/**
 * Adds the entries' jobs under `jobIdOf(entry)` (a second publish of the same entry is a no-op
 * while the job exists; the handler also skips an entry already processed), then marks those
 * added published in one UPDATE. The queues are published at once, each in chunks one after
 * another, each chunk with its own timeout: a queue that fails (a refused job, a slow queue)
 * holds back no other, and Redis being away costs one timeout, not one per chunk. Returns how
 * many were published; failures are left for the next sweep.
 */
export async function publish(entries: OutboxEntry[]): Promise<number> {
  if (!entries.length) return 0;
  const byQueue = new Map<string, OutboxEntry[]>();
  for (const entry of entries) {
    const list = byQueue.get(entry.queue);
    if (list) list.push(entry);
    else byQueue.set(entry.queue, [entry]);
  }
  const outcomes = await Promise.all([...byQueue].map(async ([name, list]) => {
    const added: number[] = [];
    for (let i = 0; i < list.length; i += PUBLISH_CHUNK) {
      const chunk = list.slice(i, i + PUBLISH_CHUNK);
      try {
        const jobs = chunk.map((entry) => ({
          name: entry.name, data: { ...JSON.parse(entry.payload), outboxId: entry.id },
          opts: { ...(entry.options ? JSON.parse(entry.options) : {}), jobId: jobIdOf(entry) },
        }));
        await withTimeout(queue(name as QueueName).addBulk(jobs), PUBLISH_TIMEOUT_MS);
        added.push(...chunk.map((entry) => entry.id));
      } catch (err) {
        logger.warn({ queue: name, outboxIds: list.slice(i).map((e) => e.id), reason: (err as Error).message }, 'outbox entries not published yet; the sweep will retry');
        break;
      }
    }
    return added;
  }));
  const added = outcomes.flat();
  if (!added.length) return 0;
  try {
    await OutboxEntry.update({ published_at: now() }, { where: { id: { [Op.in]: added } } });
  } catch (err) {
    // The jobs exist; the sweep adds them again later (a no-op while they exist, skipped once processed).
    logger.warn({ outboxIds: added, reason: (err as Error).message }, 'outbox entries published but not marked; the sweep will see them again');
    return 0;
  }
  return added.length;
}

/**
 * Publishes what a crash or a Redis outage left behind: first the entries never published after
 * `unpublishedAfterMs` (oldest first), then those published but neither processed nor failed for
 * good after `unprocessedAfterMs` (their job may have died with a Redis that keeps nothing on
 * disk), longest since their last publish first. A re-add marks an entry published again, so it
 * goes to the back of that line: entries whose jobs merely wait long (a queue no worker serves
 * yet, a backlog) take turns with the rest instead of filling every sweep. Re-adding a job that
 * still exists is a no-op (same job id), and a processed entry is never run again.
 */
export async function sweepOutbox(unpublishedAfterMs: number, unprocessedAfterMs: number, batch = 500): Promise<number> {
  const t = now();
  const unpublished = await OutboxEntry.findAll({
    where: { published_at: { [Op.is]: null }, created_at: { [Op.lte]: t - Math.floor(unpublishedAfterMs / 1000) } },
    order: [['id', 'ASC']], limit: batch,
  });
  const published = await publish(unpublished);
  const unprocessed = await OutboxEntry.findAll({
    where: { processed_at: { [Op.is]: null }, failed_at: { [Op.is]: null }, published_at: { [Op.lte]: t - Math.floor(unprocessedAfterMs / 1000) } },
    order: [['published_at', 'ASC'], ['id', 'ASC']], limit: batch,
  });
  return published + await publish(unprocessed);
}

/** A job ran before the transaction that wrote its entry committed: a retryable failure. */
export class OutboxEntryNotVisibleError extends Error {
  constructor(outboxId: number) {
    super(`outbox entry ${outboxId} is not visible yet (its transaction has not committed); retrying`);
  }
}

/**
 * Runs an outbox job's work at most once per entry: an entry already processed (its job was
 * published twice) is skipped. The mark is written after the work succeeded, so a crash in
 * between means the work is retried, never silently dropped.
 */
export async function processOnce(outboxId: number | undefined, work: () => Promise<unknown>): Promise<unknown> {
  if (!outboxId) return work();
  const entry = await OutboxEntry.findByPk(outboxId);
  // The entry commits with its subject: while it cannot be seen, neither can the subject, so the
  // attempt fails and BullMQ retries it (never a skip that would mark the entry done).
  if (!entry) throw new OutboxEntryNotVisibleError(outboxId);
  if (entry.processed_at) return { skipped: 'already processed' };
  const result = await work();
  await markProcessed(outboxId);
  return result;
}

/**
 * Marks an entry's work done (a no-op once marked). Work that commits its own record of success
 * (a mail's delivery) marks it in that transaction, so a crash after it cannot run the work again.
 */
export async function markProcessed(outboxId: number, transaction?: Transaction): Promise<void> {
  await OutboxEntry.update({ processed_at: now() }, { where: { id: outboxId, processed_at: { [Op.is]: null } }, transaction });
}

/** The entry's job ran out of attempts (it stays in the queue's failed set, with its reason). */
export async function markFailed(outboxId: number): Promise<void> {
  await OutboxEntry.update({ failed_at: now() }, { where: { id: outboxId } });
}
