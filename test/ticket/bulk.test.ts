/**
 * Bulk changes as jobs: `POST /api/ticket/ticket/bulk` answers 202 with a job at once; a worker
 * (the scheduler queue) changes each ticket through the ticket service (events, audit); `GET
 * /api/core/job/{id}` and, for a ticket scope, `GET /api/ticket/job/{id}` show the status, progress
 * and a result per id; a job resumes after a crash with the items still pending, and applies each
 * item at most once however many times it runs.
 */
import { QueryTypes } from 'sequelize';
import request from 'supertest';
import { runAs } from '../../src/audit/actor';
import { createToken } from '../../src/auth/tokens';
import { DomainEvent, Ticket, TicketTag } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { createWorker } from '../../src/queue/runWorker';
import { QUEUES } from '../../src/queue/names';
import { applyTo, bulkTicketJob, runBulkTicketJob, type BulkTicketChanges } from '../../src/ticket/bulk/job';
import { unique, useApi } from '../helpers/app';
import { expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';
import { encodeForm } from '../helpers/form';
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

  it('restore=1 takes tickets out of the trash, with the other changes applied to them', async () => {
    const [a, b] = [await f.ticket(), await f.ticket()];
    await api.del(`/api/ticket/ticket/${a.id}`);
    expectError(await api.post(BULK, { ids: [a.id], trash: 1, restore: 1 }), 422, 'The trash and restore fields cannot both be 1.');
    const res = await api.post(BULK, { ids: [a.id, b.id], restore: 1, priority: ctx.priorityId });
    expect(res.status).toBe(202);
    await startWorker();
    expect(await finished(res.body.data.id)).toMatchObject({ status: 'completed', progress: { done: 2 } });
    for (const id of [a.id, b.id]) expect(await Ticket.findByPk(id)).toMatchObject({ deleted_at: null, priority_id: ctx.priorityId });
  });

  it('a search that excludes a day takes every ticket not created on it', async () => {
    const w = word();
    const day = (d: number) => Date.UTC(2024, 0, d, 12) / 1000;
    const [a, b, c] = [
      await f.ticket({ subject: `Bulk ${w} a`, created_at: day(19) }),
      await f.ticket({ subject: `Bulk ${w} b`, created_at: day(20) }),
      await f.ticket({ subject: `Bulk ${w} c`, created_at: day(21) }),
    ];
    const res = await api.post(BULK, { search: `${w} -created:2024-01-20`, priority: ctx.priorityId });
    expect(res.status).toBe(202);
    // b, created that day, left out.
    expect(res.body.data.results.map((r: any) => r.id)).toEqual([a.id, c.id]);
    expect(b.created_at).toBe(day(20));
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

  it('the job\'s updated_at moves with each item done or failed, not only at its start and end', async () => {
    const a = await f.ticket();
    const long = Math.floor(Date.now() / 1000) - 3600;
    const [jobId] = await sequelize().query(
      "INSERT INTO bulk_jobs (type, status, input, started_at, created_at, updated_at) VALUES ('ticket.bulk', 'working', :input, :at, :at, :at)",
      { replacements: { input: JSON.stringify({ statusId: ctx.otherStatus }), at: long }, type: QueryTypes.INSERT },
    );
    await sequelize().query(
      "INSERT INTO bulk_job_items (job_id, position, record_id, status) VALUES (:j, 1, :a, 'pending'), (:j, 2, 999999999, 'pending')",
      { replacements: { j: jobId, a: a.id }, type: QueryTypes.INSERT },
    );
    const changes = { statusId: ctx.otherStatus };
    await runAs({ type: 'job', id: Number(jobId), channel: 'job' }, () => applyTo(Number(jobId), 1, a.id, changes));
    const afterDone = await job(Number(jobId));
    expect(afterDone).toMatchObject({ status: 'working', progress: { done: 1, pending: 1 }, started_at: long });
    expect(afterDone.updated_at).toBeGreaterThan(long);
    await sequelize().query('UPDATE bulk_jobs SET updated_at = :at WHERE id = :j', { replacements: { j: jobId, at: long }, type: QueryTypes.UPDATE });
    await runAs({ type: 'job', id: Number(jobId), channel: 'job' }, () => applyTo(Number(jobId), 2, 999999999, changes));
    const afterFailed = await job(Number(jobId));
    expect(afterFailed).toMatchObject({ status: 'working', progress: { done: 1, failed: 1, pending: 0 } });
    expect(afterFailed.updated_at).toBeGreaterThan(long);
  });

  describe('each item is applied at most once, whatever runs it twice (a stalled job handed to a second worker)', () => {
    /** A job of one pending item, ticket `ticketId`, as the request writes it. */
    const pendingJob = async (ticketId: number, changes: BulkTicketChanges): Promise<number> => {
      const at = Math.floor(Date.now() / 1000);
      const [jobId] = await sequelize().query(
        "INSERT INTO bulk_jobs (type, status, input, started_at, created_at, updated_at) VALUES ('ticket.bulk', 'working', :input, :at, :at, :at)",
        { replacements: { input: JSON.stringify(changes), at }, type: QueryTypes.INSERT },
      );
      await sequelize().query("INSERT INTO bulk_job_items (job_id, position, record_id, status) VALUES (:j, 1, :t, 'pending')",
        { replacements: { j: jobId, t: ticketId }, type: QueryTypes.INSERT });
      return Number(jobId);
    };
    /** A worker's run of the item, as the job's actor. */
    const apply = (jobId: number, ticketId: number, changes: BulkTicketChanges) =>
      runAs({ type: 'job', id: jobId, channel: 'job' }, () => applyTo(jobId, 1, ticketId, changes));
    /** The ticket's audit entries written by the job. */
    const byJob = async (ticketId: number, jobId: number) => (expectList(await api.get(`/api/ticket/ticket/${ticketId}/audit`, { limit: 100 })) as any[])
      .filter((e) => e.actor?.type === 'job' && e.actor.id === jobId);
    /**
     * Statements of this worker's database running now (another connection's) that lock this
     * ticket (`FOR UPDATE`) or claim an item of this job: with the ticket held by the test, each one
     * is waiting. Only those naming the ticket or the job: a statement of other work in the
     * database (a job of an earlier file, housekeeping) locking another row is no step of this test.
     * (PROCESSLIST, not INNODB_TRX: the latter is a cached snapshot that does not always list them.
     * The driver sends the values in the statement's text.)
     */
    const waiting = async (ticketId: number, jobId: number) => {
      const [row] = await sequelize().query<{ locks: number; claims: number }>(
        `SELECT SUM(INFO LIKE '%tickets%FOR UPDATE' AND INFO REGEXP :ticket) AS locks,
                SUM(INFO LIKE 'UPDATE bulk_job_items%' AND INFO REGEXP :job) AS claims
           FROM information_schema.PROCESSLIST
          WHERE DB = DATABASE() AND ID <> CONNECTION_ID() AND COMMAND = 'Query'`,
        // The lock's statement is db/load.ts recordById's: WHERE `id` IN (<id>) ... FOR UPDATE.
        { replacements: { ticket: `\`id\` IN \\(${ticketId}\\)`, job: `job_id = ${jobId}[^0-9]` }, type: QueryTypes.SELECT },
      );
      return { locks: Number(row.locks ?? 0), claims: Number(row.claims ?? 0) };
    };

    it('one after the other: the second run finds the item done and changes nothing (an operator\'s change since stands)', async () => {
      const ticket = await f.ticket();
      const changes = { statusId: ctx.otherStatus };
      const jobId = await pendingJob(ticket.id, changes);
      await apply(jobId, ticket.id, changes);
      expect((await Ticket.findByPk(ticket.id))!.status_id).toBe(ctx.otherStatus);
      expectSuccess(await api.put(`/api/ticket/ticket/${ticket.id}`, { status: ctx.openStatus }), 'Successfully updated the ticket!');
      // The second worker read the item as pending before the first applied it.
      await apply(jobId, ticket.id, changes);
      expect((await Ticket.findByPk(ticket.id))!.status_id).toBe(ctx.openStatus);
      expect(await byJob(ticket.id, jobId)).toHaveLength(1);
      expect(await job(jobId)).toMatchObject({ progress: { total: 1, done: 1, pending: 0 } });
    });

    it('at the same time: the second run waits for the first, then changes nothing', async () => {
      const ticket = await f.ticket();
      const changes = { statusId: ctx.otherStatus };
      const jobId = await pendingJob(ticket.id, changes);
      const waits = () => waiting(ticket.id, jobId);
      // The ticket held by another transaction: the first run, an operator's change and the second
      // run queue up behind it, in that order (each waiting before the next starts).
      const holder = await sequelize().transaction();
      let first: Promise<void>;
      let operator: Promise<Awaited<ReturnType<typeof api.put>>>;
      let second: Promise<void>;
      try {
        await sequelize().query('SELECT id FROM tickets WHERE id = :id FOR UPDATE', { replacements: { id: ticket.id }, transaction: holder, type: QueryTypes.SELECT });
        first = apply(jobId, ticket.id, changes);
        await waitFor(async () => (await waits()).locks >= 1, 15000, 'the first run to wait for the ticket');
        // (then(): a supertest request is sent when awaited.) A status of its own, so that the
        // operator's change is one whichever order the changes take.
        operator = api.put(`/api/ticket/ticket/${ticket.id}`, { status: ctx.resolvedStatus }).then((res) => res);
        await waitFor(async () => (await waits()).locks >= 2, 15000, 'the operator\'s change to wait for the ticket');
        second = apply(jobId, ticket.id, changes);
        // For the ticket, or (claiming the item first) for the item the first run claimed.
        await waitFor(async () => {
          const w = await waits();
          return w.locks + w.claims >= 3;
        }, 15000, 'the second run to wait');
      } finally {
        await holder.rollback();
      }
      await first;
      expectSuccess(await operator, 'Successfully updated the ticket!');
      await second;
      // The job's change once, and the operator's. The locks are granted in the order asked, so
      // the first run's change comes first and the operator's stands; but a lock conflict with other
      // work (a deadlock whose victim the first run is) runs the first run again after the
      // operator, and then the second run is the one that applies the item: either way once, and
      // the ticket holds the change committed last.
      expect(await byJob(ticket.id, jobId)).toHaveLength(1);
      const statusChanges = (expectList(await api.get(`/api/ticket/ticket/${ticket.id}/audit`, { limit: 100 })) as any[])
        .filter((e) => e.action === 'updated' && e.changes?.status_id);
      expect(statusChanges.map((e) => e.actor?.type === 'job')).toEqual(expect.arrayContaining([true, false]));
      expect(statusChanges).toHaveLength(2);
      expect((await Ticket.findByPk(ticket.id))!.status_id).toBe(statusChanges.at(-1).changes.status_id.after);
      const events = (await DomainEvent.findAll({ where: { name: 'ticket.updated' } })).filter((e) => JSON.parse(e.payload).ticketId === ticket.id);
      // The job's and the operator's.
      expect(events).toHaveLength(2);
      expect(await job(jobId)).toMatchObject({ progress: { total: 1, done: 1, pending: 0 } });
    });
  });

  it.each([
    [{ status: 2 }, 'Either the ids or the search field is required.'],
    [{ ids: [1], search: 'x', status: 2 }, 'The ids and search fields cannot both be sent: the tickets are either those listed or those found.'],
    [{ ids: '', status: 2 }, 'Either the ids or the search field is required.'],
    [{ ids: [1] }, 'At least one change (status, priority, department, tag, assignedto, trash, restore) is required.'],
    [{ ids: Array.from({ length: 1001 }, (_, i) => i + 1), status: 2 }, 'The ids may not have more than 1000 items.'],
    [{ search: 'status:', status: 2 }, 'The search is invalid at position 8: status: needs a value.'],
    [{ ids: ['x'], status: 2 }, 'The ids.0 must be an integer.'],
  ] as Array<[Record<string, unknown>, string]>)('422 %#: %s, and no job', async (body, message) => {
    const [{ n: before }] = await sequelize().query<{ n: number }>('SELECT COUNT(*) AS n FROM bulk_jobs', { type: QueryTypes.SELECT });
    expectError(await api.postJson(BULK, body), 422, message);
    const [{ n: after }] = await sequelize().query<{ n: number }>('SELECT COUNT(*) AS n FROM bulk_jobs', { type: QueryTypes.SELECT });
    expect(Number(after)).toBe(Number(before));
  });

  it('an Idempotency-Key replay answers the same job, with its Location', async () => {
    const ticket = await f.ticket();
    const send = () => request(api.app).post(BULK).auth(api.token, 'x').set('Idempotency-Key', `bulk-${ticket.id}`).type('form')
      .send(encodeForm({ ids: [ticket.id], priority: ctx.priorityId }));
    const first = await send();
    expect(first.status).toBe(202);
    const again = await send();
    expect(again.status).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(again.headers.location).toBe(`/api/ticket/job/${first.body.data.id}`);
  });

  it('GET /api/core/job/{id}: 404 for an unknown job', async () => {
    expectNotFound(await api.get('/api/core/job/999999999'), 'job');
  });

  it('a ticket:write token follows the job it started at GET /api/ticket/job/{id} (its Location); the core path still needs core:read', async () => {
    const { token } = await createToken(unique('bulk'), undefined, { scopes: ['ticket:write'] });
    const as = (req: request.Test) => req.auth(token, 'x');
    const ticket = await f.ticket();
    const res = await as(request(api.app).post(BULK).type('form').send(encodeForm({ ids: [ticket.id], status: ctx.otherStatus })));
    expect(res.status).toBe(202);
    const id = res.body.data.id;
    expect(res.headers.location).toBe(`/api/ticket/job/${id}`);
    // (The worker of the tests before may have started it already.)
    expect(expectSuccess(await as(request(api.app).get(res.headers.location)))).toMatchObject({ id, type: 'ticket.bulk', input: { statusId: ctx.otherStatus } });
    await startWorker();
    const done = await waitFor(async () => {
      const j = expectSuccess(await as(request(api.app).get(`/api/ticket/job/${id}`)));
      return j.status === 'completed' ? j : null;
    }, 30000, `job ${id} to finish`);
    expect(done).toMatchObject({ progress: { total: 1, done: 1 }, results: [{ id: ticket.id, status: 'done', message: null }] });
    // The same job at the core path: as before, for a token with core:read only.
    expect(await job(id)).toEqual(done);
    expectError(await as(request(api.app).get(`/api/core/job/${id}`)), 403, 'The API token does not have the core:read scope this request needs.');
    // Only the ticket area's jobs; an unknown id, a malformed one: 404; a write: 405.
    const at = Math.floor(Date.now() / 1000);
    const [other] = await sequelize().query(
      "INSERT INTO bulk_jobs (type, status, input, created_at, updated_at) VALUES ('core.other', 'queued', '{}', :at, :at)",
      { replacements: { at }, type: QueryTypes.INSERT },
    );
    expect(await job(Number(other))).toMatchObject({ id: Number(other), type: 'core.other' });
    for (const path of [`/api/ticket/job/${other}`, '/api/ticket/job/999999999', '/api/ticket/job/x']) {
      expectNotFound(await as(request(api.app).get(path)), 'job');
    }
    expect((await as(request(api.app).post(`/api/ticket/job/${id}`))).status).toBe(405);
  });
});
