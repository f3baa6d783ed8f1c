/**
 * Ticket audit history (`GET /api/ticket/ticket/{id}/audit`): every change through the ticket
 * service with its actor, channel, time and each field's before and after, written in the
 * transaction of the change.
 */
import { runAs } from '../../src/audit/actor';
import { ApiToken, CustomField, DepartmentEmail, Ticket, TicketTag } from '../../src/db/models';
import { transaction } from '../../src/db/transaction';
import { ingestMail } from '../../src/mailbox/ingest';
import { updateTicket } from '../../src/ticket/tickets/service';
import { hashToken } from '../../src/auth/tokens';
import { newEmail, nowSec, unique, useApi } from '../helpers/app';
import { expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';
import { rawMail } from '../mailbox/support';
import { ids, ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
let ctx: TicketContext;
const f = ticketFactories(api, () => ctx);
let tokenId: number;
beforeAll(async () => {
  ctx = await ticketContext();
  tokenId = (await ApiToken.findOne({ where: { token_hash: hashToken(api.token) } }))!.id;
});

const BASE = '/api/ticket/ticket';
const audit = async (id: number, query: Record<string, unknown> = {}) => expectList(await api.get(`${BASE}/${id}/audit`, { limit: 1000, ...query }));

describe('GET /api/ticket/ticket/{id}/audit', () => {
  it('records the opening and each update with the token as actor, the api channel and each field before and after', async () => {
    const t0 = nowSec();
    const [a, b] = [await f.operator(), await f.operator()];
    const [tag1, tag2] = await TicketTag.bulkCreate([{ name: unique('tag') }, { name: unique('tag') }]);
    const field = await CustomField.create({ kind: 'ticket', name: unique('Order'), type: 8 });
    const ticket = await f.ticket({ tag: [tag1.id], assignedto: [a.id] });
    const [created] = await audit(ticket.id);
    expect(created).toMatchObject({
      ticket_id: ticket.id, action: 'created', actor: { type: 'token', id: tokenId }, channel: 'api',
      changes: {
        status_id: { before: null, after: ctx.openStatus }, priority_id: { before: null, after: ctx.priorityId },
        department_id: { before: null, after: ctx.departmentId }, tags: { before: null, after: [tag1.id] }, assigned: { before: null, after: [a.id] },
      },
    });
    expect(created.created_at).toBeGreaterThanOrEqual(t0);

    await api.put(`${BASE}/${ticket.id}`, {
      status: ctx.otherStatus, tag: [tag2.id], assignedto: [a.id, b.id], customfield: { [field.id]: 'A-1' }, reply_due_time: nowSec() + 3600,
    }).expect(200);
    const entries = await audit(ticket.id);
    expect(entries.map((e: any) => e.action)).toEqual(['created', 'updated']);
    const { changes } = entries[1];
    expect(changes).toMatchObject({
      status_id: { before: ctx.openStatus, after: ctx.otherStatus },
      tags: { before: [tag1.id], after: [tag2.id] },
      assigned: { before: [a.id], after: [a.id, b.id].sort((x, y) => x - y) },
      [`customfield.${field.id}`]: { before: null, after: 'A-1' },
      reply_due_time: { before: null, after: expect.any(Number) },
    });
    // Only what changed.
    expect(changes.priority_id).toBeUndefined();
    expect(changes.subject).toBeUndefined();
    // An update that changes nothing writes nothing.
    await api.put(`${BASE}/${ticket.id}`, { status: ctx.otherStatus }).expect(200);
    expect(await audit(ticket.id)).toHaveLength(2);
  });

  it('records the trash and a merge on both sides', async () => {
    const [target, source, trashed] = [await f.ticket(), await f.ticket(), await f.ticket()];
    await api.del(`${BASE}/${trashed.id}`).expect(200);
    expect((await audit(trashed.id)).at(-1)).toMatchObject({ action: 'trashed', changes: { deleted_at: { before: null, after: expect.any(Number) } } });
    await api.post(`${BASE}/${target.id}/merge`, { ids: [source.id] }).expect(200);
    expect((await audit(target.id)).at(-1)).toMatchObject({ action: 'merged', changes: { merged: { before: 0, after: 1 }, merged_ids: { before: null, after: [source.id] } } });
    expect((await audit(source.id)).at(-1)).toMatchObject({ action: 'merged_into', changes: { merged_into_id: { before: null, after: target.id } } });
  });

  it('names the actor of work outside a request: the mailbox a mail came from, or who runs the work', async () => {
    const department = await f.department();
    const address = (await DepartmentEmail.findOne({ where: { department_id: department.id } }))!;
    const result = await ingestMail(await rawMail({ from: newEmail('cust'), to: address.address }), { departmentEmail: address, remoteUid: unique('uid') });
    expect(result.decision).toBe('new_ticket');
    expect((await audit(result.ticketId!))[0]).toMatchObject({ action: 'created', actor: { type: 'mailbox', id: address.id }, channel: 'email' });

    const ticket = await f.ticket();
    await runAs({ type: 'scheduler', id: null, channel: 'scheduler' }, () => transaction(async (t) => {
      await updateTicket((await Ticket.findByPk(ticket.id, { transaction: t, lock: t.LOCK.UPDATE }))!, { statusId: ctx.otherStatus }, t);
    }));
    expect((await audit(ticket.id)).at(-1)).toMatchObject({ action: 'updated', actor: { type: 'scheduler', id: null }, channel: 'scheduler' });
  });

  it('is written in the transaction of the change: a change rolled back leaves no entry, a refused one neither', async () => {
    const ticket = await f.ticket();
    await expect(transaction(async (t) => {
      await updateTicket((await Ticket.findByPk(ticket.id, { transaction: t, lock: t.LOCK.UPDATE }))!, { statusId: ctx.otherStatus }, t);
      throw new Error('rolled back');
    })).rejects.toThrow('rolled back');
    expectError(await api.put(`${BASE}/${ticket.id}`, { status: 999999 }), 422, 'The selected status is invalid.');
    expect(ids(await audit(ticket.id))).toHaveLength(1);
    expect((await Ticket.findByPk(ticket.id))!.status_id).toBe(ctx.openStatus);
  });

  it('pages with start and limit; 404 for an unknown ticket; 405 for a write', async () => {
    const ticket = await f.ticket();
    for (const subject of ['One', 'Two', 'Three']) await api.put(`${BASE}/${ticket.id}`, { subject }).expect(200);
    const res = await api.get(`${BASE}/${ticket.id}/audit`, { start: 2, limit: 2 });
    expect(res.body.count).toBe(4);
    expect(res.body.data.map((e: any) => e.changes.subject.after)).toEqual(['One', 'Two']);
    expectNotFound(await api.get(`${BASE}/999999999/audit`), 'ticket');
    expect((await api.post(`${BASE}/${ticket.id}/audit`, {})).status).toBe(405);
    expectSuccess(await api.get(`${BASE}/${ticket.id}`));
  });
});
