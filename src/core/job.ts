import { Router } from 'express';
import { select } from '../db/select';
import { sendSuccess } from '../http/envelope';
import { MethodNotAllowedError } from '../http/errors';
import { NotFoundError } from '../errors';
import { parseId } from '../http/resource';
import { recorded, type RecordedRouter } from '../http/routes';

interface JobRow { id: number; type: string; status: string; input: string; error: string | null; started_at: number | null; finished_at: number | null; created_at: number; updated_at: number }
interface ItemRow { position: number; record_id: number; status: string; message: string | null }

/**
 * A background job as the API shows it (`GET /api/core/job/{id}`, and the 202 that started it):
 * its status (queued, working, completed, failed), progress, and a result per record.
 */
export async function presentJob(jobId: number): Promise<Record<string, unknown> | null> {
  const [job] = await select<JobRow>('SELECT * FROM bulk_jobs WHERE id = ?', [jobId]);
  if (!job) return null;
  const items = await select<ItemRow>('SELECT position, record_id, status, message FROM bulk_job_items WHERE job_id = ? ORDER BY position', [jobId]);
  const count = (status: string) => items.filter((i) => i.status === status).length;
  return {
    id: Number(job.id), type: job.type, status: job.status, input: JSON.parse(job.input),
    progress: { total: items.length, done: count('done'), failed: count('failed'), pending: count('pending') },
    results: items.map((i) => ({ id: Number(i.record_id), status: i.status, message: i.message })),
    error: job.error, created_at: Number(job.created_at), updated_at: Number(job.updated_at),
    started_at: job.started_at === null ? null : Number(job.started_at), finished_at: job.finished_at === null ? null : Number(job.finished_at),
  };
}

function jobRouter(): RecordedRouter {
  const router = Router();
  const path = '/job/:id';
  router.get(path, async (req, res) => {
    const id = parseId(req.params.id);
    const job = id === null ? null : await presentJob(id);
    if (!job) throw new NotFoundError('job');
    sendSuccess(res, job);
  });
  router.all(path, (req) => {
    throw new MethodNotAllowedError(req.method, 'GET');
  });
  return recorded(router, [{ method: 'GET', path, action: 'show', label: 'job' }]);
}

export const jobStatusRouter = jobRouter();
