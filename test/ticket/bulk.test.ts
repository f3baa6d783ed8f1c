/**
 * Bulk changes as jobs: `POST /api/ticket/ticket/bulk` answers 202 with a job at once; a worker
 * (the scheduler queue) changes each ticket through the ticket service (events, audit); `GET
 * /api/core/job/{id}` shows the status, progress and a result per id; a job resumes after a crash
 * with the items still pending.
 */
import { QueryTypes } from 'sequelize';
import { DomainEvent, Ticket, TicketTag } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { createWorker } from '../../src/queue/runWorker';
import { QUEUES } from '../../src/queue/names';
import { bulkTicketJob, runBulkTicketJob } from '../../src/ticket/bulk/job';
import { unique, useApi } from '../helpers/app';
import { expectError, expectNotFound, expectSuccess } from '../helpers/envelope';
import { waitFor } from '../helpers/smtp';
import { ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
let ctx: TicketContext;
const f = ticketFactories(api, () => ctx);
const BULK = '/api/ticket/ticket/bulk';
const word = () => Array.from({ length: 12 }, () => 'abcdefghijklmnopqrstuvwxyz'[Math.floor(Math.random() * 26)]).join('');

let worker: Awaited<ReturnType<typeof createWorker>> | undefined;
beforeAll(async () => {
  ctx = await ticketContext();
});
afterAll(async () => {
  await worker?.close();
});
const startWorker = async () => {
  worker ??= await createWorker({ queue: QUEUES.scheduler, jobs: [bulkTicketJob] });
};

const job = async (id: number) => expectSuccess(await api.get(`/api/core/job/${id}`));
const finished = (id: number) => waitFor(async () => {
  const j = await job(id);
  return j.status === 'completed' || j.status === 'failed' ? j : null;
}, 30000, `job ${id} to finish`);

describe('POST /api/ticket/ticket/bulk', () => {
  it('answers 202 with the queued job at once; the worker changes each ticket through the service and reports per id', async () => {
    const tag = await TicketTag.create({ name: unique('bulk') });
    const op = await f.operator();
    const tickets = [await f.ticket(), await f.ticket(), await f.ticket()];
    const res = await api.post(BULK, { ids: [...tickets.map((t) => t.id), 999999999], status: ctx.otherStatus, tag: [tag.id], assignedto: [op.id] });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'success', message: 'The bulk change was queued.' });
    const queued = res.body.data;
    expect(queued).toMatchObject({
      type: 'ticket.bulk', status: 'queued', progress: { total: 4, done: 0, failed: 0, pending: 4 },
      input: { statusId: ctx.otherStatus, tagIds: [tag.id], assignedTo: [op.id] },
    });
    expect(queued.results.map((r: any) => r.status)).toEqual(['pending', 'pending', 'pending', 'pending']);
    // Nothing changed yet: the request only queued the work.
    expect((await Ticket.findByPk(tickets[0].id))!.status_id).toBe(ctx.openStatus);

    await startWorker();
    const done = await finished(queued.id);
    expect(done).toMatchObject({ status: 'completed', progress: { total: 4, done: 3, failed: 1, pending: 0 }, error: null });
    expect(done.results).toEqual([
      ...tickets.map((t) => ({ id: t.id, status: 'done', message: null })),
      { id: 999999999, status: 'failed', message: 'The ticket with given ID was not found.' },
    ]);
    expect(done.started_at).toEqual(expect.any(Number));
    expect(done.finished_at).toEqual(expect.any(Number));
    for (const t of tickets) {
      const shown = expectSuccess(await api.get(`/api/ticket/ticket/${t.id}`));
      expect(shown).toMatchObject({ status_id: ctx.otherStatus });
      expect(shown.tags.map((x: any) => x.id)).toEqual([tag.id]);
      expect(shown.assigned.map((x: any) => x.id)).toEqual([op.id]);
      // Through the service: its event and its audit entry, with the job as actor.
      const events = await DomainEvent.findAll({ where: { name: 'ticket.updated' } });
      expect(events.some((e) => JSON.parse(e.payload).ticketId === t.id)).toBe(true);
      const audit = (await api.get(`/api/ticket/ticket/${t.id}/audit`)).body.data;
      expect(audit.at(-1)).toMatchObject({ action: 'updated', actor: { type: 'job', id: queued.id }, channel: 'job', changes: { status_id: { after: ctx.otherStatus } } });
    }
  });

  it('takes a search instead of ids, and trash', async () => {
    const w = word();
    const [a, b] = [await f.ticket({ subject: `Bulk ${w} one` }), await f.ticket({ subject: `Bulk ${w} two` })];
    const res = await api.post(BULK, { search: `${w} -two`, trash: 1 });
    expect(res.status).toBe(202);
    expect(res.body.data.results.map((r: any) => r.id)).toEqual([a.id]);
    await startWorker();
    expect(await finished(res.body.data.id)).toMatchObject({ status: 'completed', progress: { done: 1 } });
    expect((await Ticket.findByPk(a.id))!.deleted_at).not.toBeNull();
    expect((await Ticket.findByPk(b.id))!.deleted_at).toBeNull();
  });

  it('a refusal of the service is that ticket\'s result; the others go on', async () => {
    const [a, b] = [await f.ticket(), await f.ticket()];
    const res = await api.post(BULK, { ids: [a.id, b.id], priority: 999999 });
    await startWorker();
    const done = await finished(res.body.data.id);
    expect(done.results).toEqual([
      { id: a.id, status: 'failed', message: 'The selected priority is invalid.' },
      { id: b.id, status: 'failed', message: 'The selected priority is invalid.' },
    ]);
  });

  it('resumes after a crash with the items still pending: a ticket done before is not changed again', async () => {
    const [a, b] = [await f.ticket(), await f.ticket()];
    const at = Math.floor(Date.now() / 1000);
    const [jobId] = await sequelize().query(
      "INSERT INTO bulk_jobs (type, status, input, started_at, created_at, updated_at) VALUES ('ticket.bulk', 'working', :input, :at, :at, :at)",
      { replacements: { input: JSON.stringify({ statusId: ctx.otherStatus }), at }, type: QueryTypes.INSERT },
    );
    // The worker died after the first ticket's transaction committed (its item done with it).
    await sequelize().query(
      "INSERT INTO bulk_job_items (job_id, position, record_id, status) VALUES (:j, 1, :a, 'done'), (:j, 2, :b, 'pending')",
      { replacements: { j: jobId, a: a.id, b: b.id }, type: QueryTypes.INSERT },
    );
    expect(await runBulkTicketJob(Number(jobId))).toEqual({ done: 1 });
    expect((await Ticket.findByPk(a.id))!.status_id).toBe(ctx.openStatus);
    expect((await Ticket.findByPk(b.id))!.status_id).toBe(ctx.otherStatus);
    expect(await job(Number(jobId))).toMatchObject({ status: 'completed', progress: { done: 2, pending: 0 } });
    // Run again (a retry after the crash of a later step): nothing left to do.
    expect(await runBulkTicketJob(Number(jobId))).toEqual({ done: 0 });
  });

  it.each([
    [{ status: 2 }, 'Either the ids or the search field is required.'],
    [{ ids: [1], search: 'x', status: 2 }, 'Either the ids or the search field is required.'],
    [{ ids: [1] }, 'At least one change (status, priority, department, tag, assignedto, trash) is required.'],
    [{ ids: Array.from({ length: 1001 }, (_, i) => i + 1), status: 2 }, 'The ids may not have more than 1000 items.'],
    [{ search: 'status:', status: 2 }, 'The search is invalid at position 8: status: needs a value.'],
    [{ ids: ['x'], status: 2 }, 'The ids.0 must be an integer.'],
  ] as Array<[Record<string, unknown>, string]>)('422 %#: %s, and no job', async (body, message) => {
    const [{ n: before }] = await sequelize().query<{ n: number }>('SELECT COUNT(*) AS n FROM bulk_jobs', { type: QueryTypes.SELECT });
    expectError(await api.postJson(BULK, body), 422, message);
    const [{ n: after }] = await sequelize().query<{ n: number }>('SELECT COUNT(*) AS n FROM bulk_jobs', { type: QueryTypes.SELECT });
    expect(Number(after)).toBe(Number(before));
  });

  it('GET /api/core/job/{id}: 404 for an unknown job', async () => {
    expectNotFound(await api.get('/api/core/job/999999999'), 'job');
  });
});
