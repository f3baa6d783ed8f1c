import { QueryTypes, type Transaction } from 'sequelize';
import { runAs } from '../../audit/actor';
import { Ticket } from '../../db/models';
import { lockById } from '../../db/load';
import { now } from '../../db/entity';
import { sequelize } from '../../db/sequelize';
import { select } from '../../db/select';
import { transaction } from '../../db/transaction';
import { DomainError, NotFoundError } from '../../errors';
import { Joi } from '../../lib/validation';
import { logger } from '../../logger';
import { defineJob } from '../../queue/jobs';
import { QUEUES } from '../../queue/names';
import { restoreTicket, trashTicket, updateTicket, type UpdateTicketInput } from '../tickets/service';

/**
 * A bulk change of tickets, run by a worker: each ticket through the ticket service in its own
 * transaction (events, audit, notifications as for a single change), its item marked done or
 * failed in that same transaction. A crash or a retry resumes with the items still pending.
 */

export interface BulkTicketChanges {
  statusId?: number;
  priorityId?: number;
  departmentId?: number;
  tagIds?: number[];
  assignedTo?: number[];
  trash?: boolean;
  restore?: boolean;
}

const q = <T extends object>(sql: string, replacements: Record<string, unknown>, t?: Transaction) =>
  select<T>(sql, replacements, { transaction: t });
const exec = (sql: string, replacements: Record<string, unknown>, t?: Transaction) =>
  sequelize().query(sql, { replacements, transaction: t, type: QueryTypes.UPDATE });

/** The job's `updated_at` moves with its progress: each item's outcome is a change of the job. */
const touchJob = (jobId: number, t: Transaction) =>
  exec('UPDATE bulk_jobs SET updated_at = GREATEST(updated_at, :at) WHERE id = :jobId', { jobId, at: now() }, t);

/**
 * One ticket: the change and its item's outcome commit together. The item is claimed first, in
 * that transaction (pending to done, a conditional UPDATE whose affected rows decide): a second run
 * of the same item (a stalled job handed to another worker, a worker that read the item as pending
 * before another applied it) waits on the item's row until the first commits, then finds it done
 * and changes nothing. So each item is applied at most once; a refusal rolls the claim back with
 * the change, and the item is then marked failed.
 */
export async function applyTo(jobId: number, position: number, ticketId: number, changes: BulkTicketChanges): Promise<void> {
  try {
    await transaction(async (t) => {
      const [, claimed] = await exec("UPDATE bulk_job_items SET status = 'done' WHERE job_id = :jobId AND position = :position AND status = 'pending'", { jobId, position }, t);
      if (!claimed) return;
      await touchJob(jobId, t);
      const ticket = await lockById(Ticket, ticketId, t, 'update');
      if (!ticket) throw new NotFoundError('ticket');
      const { trash, restore, ...update } = changes;
      const input: UpdateTicketInput = update;
      // Out of the trash first, so that the changes apply to the ticket as it comes back.
      if (restore) await restoreTicket(ticket, t);
      if (Object.keys(input).length) await updateTicket(ticket, input, t);
      if (trash) await trashTicket(ticket, t);
    });
  } catch (err) {
    // A refusal (a domain error: unknown ticket, a rule of the service) is this item's result; anything else stops the job for a retry.
    if (!(err instanceof DomainError)) throw err;
    await transaction(async (t) => {
      const [, failed] = await exec("UPDATE bulk_job_items SET status = 'failed', message = :message WHERE job_id = :jobId AND position = :position AND status = 'pending'",
        { jobId, position, message: err.message.slice(0, 1000) }, t);
      if (failed) await touchJob(jobId, t);
    });
  }
}

export async function runBulkTicketJob(jobId: number): Promise<{ done: number }> {
  const [row] = await q<{ input: string; status: string }>('SELECT input, status FROM bulk_jobs WHERE id = :jobId', { jobId });
  if (!row || row.status === 'completed' || row.status === 'failed') return { done: 0 };
  await exec("UPDATE bulk_jobs SET status = 'working', started_at = IFNULL(started_at, :at), updated_at = :at WHERE id = :jobId", { jobId, at: now() });
  const changes = JSON.parse(row.input) as BulkTicketChanges;
  const pending = await q<{ position: number; record_id: number }>(
    "SELECT position, record_id FROM bulk_job_items WHERE job_id = :jobId AND status = 'pending' ORDER BY position", { jobId },
  );
  await runAs({ type: 'job', id: jobId, channel: 'job' }, async () => {
    for (const item of pending) await applyTo(jobId, Number(item.position), Number(item.record_id), changes);
  });
  await exec("UPDATE bulk_jobs SET status = 'completed', finished_at = :at, updated_at = :at WHERE id = :jobId", { jobId, at: now() });
  return { done: pending.length };
}

/** Out of attempts: the job is failed, with the reason; items not reached stay pending. */
async function markJobFailed(jobId: number, reason: string): Promise<void> {
  await exec("UPDATE bulk_jobs SET status = 'failed', error = :reason, finished_at = :at, updated_at = :at WHERE id = :jobId AND status <> 'completed'", { jobId, reason: reason.slice(0, 1000), at: now() });
}

export const bulkTicketJob = defineJob<{ jobId: number }>({
  name: 'ticket.bulk',
  // The scheduler's worker runs the project's background work besides mail, mailboxes and webhooks.
  queue: QUEUES.scheduler,
  schema: Joi.object({ jobId: Joi.number().integer().min(1).required() }),
  options: () => ({ attempts: 5, backoff: { type: 'exponential', delay: 2000 }, removeOnComplete: 1000, removeOnFail: 5000 }),
  async handle(p) {
    try {
      return await runBulkTicketJob(p.jobId);
    } catch (err) {
      logger.warn({ jobId: p.jobId, reason: (err as Error).message }, 'bulk ticket job interrupted; it resumes with the pending items');
      throw err;
    }
  },
  // Out of attempts (also when its worker stopped during it too often): failed, with the reason; items not reached stay pending.
  failed: (p, reason) => markJobFailed(p.jobId, reason),
});
