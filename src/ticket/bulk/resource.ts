import { Router } from 'express';
import { Op, QueryTypes, type WhereOptions } from 'sequelize';
import { Ticket } from '../../db/models';
import { now } from '../../db/entity';
import { sequelize } from '../../db/sequelize';
import { transaction } from '../../db/transaction';
import { presentJob } from '../../core/job';
import { NotFoundError, ValidationError } from '../../errors';
import { sendSuccess } from '../../http/envelope';
import { MethodNotAllowedError } from '../../http/errors';
import { inputOf, parseId } from '../../http/resource';
import { recorded, type RecordedRouter } from '../../http/routes';
import { Joi, field, validate } from '../../lib/validation';
import { enqueue } from '../../queue/outbox';
import { ticketSearchCondition, ticketSearchText } from '../tickets/search/compile';
import { bulkTicketJob, type BulkTicketChanges } from './job';

export const BULK_MAX = 1000;

export const bulkSchema = Joi.object({
  // Empty (`ids=`, as a form sends a field left blank): not given.
  ids: field.idArray().min(1).max(BULK_MAX).allow('', null).description(`The tickets (at most ${BULK_MAX}); or \`search\`.`),
  search: ticketSearchText().description(`The tickets that match a search (the ticket search language; at most ${BULK_MAX}, trashed and merged ones left out).`),
  status: field.id(),
  priority: field.id(),
  department: field.id(),
  tag: field.idArray().allow('', null).description('Replaces the tags (empty: none).'),
  assignedto: field.idArray().allow('', null).description('Replaces the assigned operators (empty: none).'),
  trash: field.flag().description('1: move the tickets to the trash.'),
  restore: field.flag().description('1: take the tickets out of the trash (with `ids`: a search leaves trashed tickets out).'),
});

/** The tickets of a search, in id order; more than BULK_MAX is refused. */
async function idsOfSearch(search: string): Promise<number[]> {
  const condition = await ticketSearchCondition(search);
  const rows = await Ticket.findAll({
    attributes: ['id'], where: { [Op.and]: [{ deleted_at: null, merged_into_id: null }, condition.literal as unknown as WhereOptions] },
    replacements: condition.replacements, order: [['id', 'ASC']], limit: BULK_MAX + 1, raw: true,
  });
  if (rows.length > BULK_MAX) throw new ValidationError(`The search matches more than ${BULK_MAX} tickets.`);
  return rows.map((r) => r.id);
}

/** The kind of job this area starts (bulk_jobs.type), and the only kind its job path shows. */
const TICKET_JOB_TYPE = 'ticket.bulk';

/** Where a ticket job's status is read with a ticket scope (`ticket:read`, which `ticket:write` implies). */
const ticketJobPath = (id: number) => `/api/ticket/job/${id}`;

/**
 * `POST /api/ticket/ticket/bulk`: records the job and its items and enqueues it (the outbox, in the
 * same transaction), answering 202 with the job at once (and its status URL in `Location`); the
 * worker does the changes (./job.ts). `GET /api/ticket/job/{id}`: the job as it goes, as
 * `/api/core/job/{id}` shows it, for a job of the ticket area only (any other id: 404), so that
 * the token that started it needs no core scope to follow it.
 */
function bulkRouter(): RecordedRouter {
  const router = Router();
  const path = '/ticket/bulk';
  const jobPath = '/job/:id';
  router.post(path, async (req, res) => {
    const input = validate<Record<string, any>>(bulkSchema, inputOf(req));
    if (input.ids && input.search) throw new ValidationError('The ids and search fields cannot both be sent: the tickets are either those listed or those found.');
    if (!input.ids && !input.search) throw new ValidationError('Either the ids or the search field is required.');
    const changes: BulkTicketChanges = {
      statusId: input.status, priorityId: input.priority, departmentId: input.department,
      tagIds: input.tag === undefined ? undefined : input.tag ?? [], assignedTo: input.assignedto === undefined ? undefined : input.assignedto ?? [],
      trash: input.trash === 1 ? true : undefined,
      restore: input.restore === 1 ? true : undefined,
    };
    if (changes.trash && changes.restore) throw new ValidationError('The trash and restore fields cannot both be 1.');
    for (const k of Object.keys(changes) as Array<keyof BulkTicketChanges>) if (changes[k] === undefined) delete changes[k];
    if (!Object.keys(changes).length) throw new ValidationError('At least one change (status, priority, department, tag, assignedto, trash, restore) is required.');
    const ids: number[] = input.ids ? [...new Set<number>(input.ids)] : await idsOfSearch(input.search);
    const jobId = await transaction(async (t) => {
      const at = now();
      const [id] = await sequelize().query(
        "INSERT INTO bulk_jobs (type, status, input, created_at, updated_at) VALUES (:type, 'queued', :input, :at, :at)",
        { replacements: { type: TICKET_JOB_TYPE, input: JSON.stringify(changes), at }, transaction: t, type: QueryTypes.INSERT },
      );
      if (ids.length) {
        await sequelize().query(
          `INSERT INTO bulk_job_items (job_id, position, record_id, status) VALUES ${ids.map((_, i) => `(:job, :p${i}, :id${i}, 'pending')`).join(', ')}`,
          { replacements: { job: id, ...Object.fromEntries(ids.flatMap((v, i) => [[`id${i}`, v], [`p${i}`, i + 1]])) }, transaction: t, type: QueryTypes.INSERT },
        );
      }
      await enqueue(t, bulkTicketJob, { jobId: Number(id) });
      return Number(id);
    });
    res.location(ticketJobPath(jobId));
    sendSuccess(res, await presentJob(jobId), 'The bulk change was queued.', 202);
  });
  router.get(jobPath, async (req, res) => {
    const id = parseId(req.params.id);
    const job = id === null ? null : await presentJob(id);
    if (!job || job.type !== TICKET_JOB_TYPE) throw new NotFoundError('job');
    sendSuccess(res, job);
  });
  router.all(jobPath, (req) => {
    throw new MethodNotAllowedError(req.method, 'GET');
  });
  return recorded(router, [
    { method: 'POST', path, action: 'bulk', label: 'ticket', body: bulkSchema, status: 202 },
    { method: 'GET', path: jobPath, action: 'show', label: 'job' },
  ]);
}

export const ticketBulkRouter = bulkRouter();
