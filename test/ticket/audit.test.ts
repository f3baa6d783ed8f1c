/**
 * Ticket audit history (`GET /api/ticket/ticket/{id}/audit`): every change through the ticket
 * service with its actor, channel, time and each field's before and after, written in the
 * transaction of the change.
 */
import { Op } from 'sequelize';
import { runAs } from '../../src/audit/actor';
import { ApiToken, CustomField, DepartmentEmail, DomainEvent, SlaPlan, SlaPlanTarget, Ticket, TicketMessage, TicketTag, Webhook } from '../../src/db/models';
import { transaction } from '../../src/db/transaction';
import { countQueries } from '../../src/db/sequelize';
import { ingestMail } from '../../src/mailbox/ingest';
import { createWorker } from '../../src/queue/runWorker';
import { recomputeDueTimes } from '../../src/ticket/dueTimes';
import { addMessage } from '../../src/ticket/messages/service';
import { updateTicket } from '../../src/ticket/tickets/service';
import { hashToken } from '../../src/auth/tokens';
import { webhooksSpec } from '../../src/wiring';
import { newEmail, nowSec, unique, useApi } from '../helpers/app';
import { expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';
import { startReceiver } from '../helpers/receiver';
import { waitFor } from '../helpers/smtp';
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
    // The second source was a merge target itself (merged 1 before).
    const [second, earlier] = [await f.ticket(), await f.ticket()];
    await api.post(`${BASE}/${second.id}/merge`, { ids: [earlier.id] }).expect(200);
    await api.post(`${BASE}/${target.id}/merge`, { ids: [source.id, second.id] }).expect(200);
    // One entry on the target, listing its sources; one on each source, naming the target.
    const targetEntries = (await audit(target.id)).filter((e: { action: string }) => e.action === 'merged');
    expect(targetEntries).toHaveLength(1);
    expect(targetEntries[0]).toMatchObject({ changes: { merged: { before: 0, after: 1 }, merged_ids: { before: null, after: [source.id, second.id] } } });
    expect((await audit(source.id)).at(-1)).toMatchObject({
      action: 'merged_into', changes: { merged: { before: 0, after: 1 }, merged_into_id: { before: null, after: target.id } },
    });
    // Only what changed: it was merged (a target) already.
    expect((await audit(second.id)).at(-1)).toMatchObject({ action: 'merged_into', changes: { merged_into_id: { before: null, after: target.id } } });
    expect((await audit(second.id)).at(-1).changes.merged).toBeUndefined();
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

  it('takes its snapshot once the update is known to apply: a refused update reads nothing for it', async () => {
    const ticket = await f.ticket();
    const operator = await f.operator();
    // The snapshot reads the ticket's audited columns, then its links (ticket_tag_links ... UNION ALL).
    const snapshots = (queries: string[]) => queries.filter((q) => /FROM ticket_tag_links WHERE ticket_id = /.test(q));
    for (const [body, message] of [
      [{ tag: [999999999] }, 'The selected tag.0 is invalid.'],
      [{ assignedto: [operator.id, 999999999] }, 'The selected assignedto.1 is invalid.'],
      [{ link: [ticket.id] }, 'The selected link.0 is invalid.'],
    ] as Array<[Record<string, unknown>, string]>) {
      const { result, queries } = await countQueries(() => api.put(`${BASE}/${ticket.id}`, body));
      expectError(result, 422, message);
      expect(snapshots(queries)).toEqual([]);
    }
    const { result, queries } = await countQueries(() => api.put(`${BASE}/${ticket.id}`, { assignedto: [operator.id] }));
    expectSuccess(result, 'Successfully updated the ticket!');
    expect(snapshots(queries)).toHaveLength(2); // before and after
  });

  it('pages with start and limit; 404 for an unknown ticket; 405 for a write', async () => {
    const ticket = await f.ticket();
    for (const subject of ['One', 'Two', 'Three']) await api.put(`${BASE}/${ticket.id}`, { subject }).expect(200);
    const res = await api.get(`${BASE}/${ticket.id}/audit`, { start: 2, limit: 2 });
    expect(res.body.count).toBe(4);
    expect(res.body.data.map((e: any) => e.changes.subject.after)).toEqual(['One', 'Two']);
    const newest = await api.get(`${BASE}/${ticket.id}/audit`, { order_direction: 'desc', limit: 2, start: '' });
    expect(newest.body.data.map((e: any) => e.changes.subject.after)).toEqual(['Three', 'Two']);
    expectError(await api.get(`${BASE}/${ticket.id}/audit`, { order_direction: 'sideways' }), 422, 'The selected order direction is invalid.');
    expectError(await api.get(`${BASE}/${ticket.id}/audit`, { order_column: 'action' }), 422, 'The selected order column is invalid.');
    expectNotFound(await api.get(`${BASE}/999999999/audit`), 'ticket');
    expect((await api.post(`${BASE}/${ticket.id}/audit`, {})).status).toBe(405);
    expectSuccess(await api.get(`${BASE}/${ticket.id}`));
  });
});

describe('changes a message makes to its ticket', () => {
  const reply = async (ticketId: number, userId: number, extra: Record<string, unknown> = {}) =>
    expectSuccess(await api.post('/api/ticket/message', { ticket_id: ticketId, user_id: userId, text: `Reply ${unique('r')}`, ...extra }), 'Successfully created new message!');

  it('a user reply reopening a resolved ticket: its author as actor, the api channel, status and resolution before and after', async () => {
    const ticket = await f.ticket();
    await api.put(`${BASE}/${ticket.id}`, { status: ctx.resolvedStatus }).expect(200);
    const resolvedAt = (await Ticket.findByPk(ticket.id))!.resolved_time;
    expect(resolvedAt).toEqual(expect.any(Number));
    const message = await reply(ticket.id, ticket.user_id);
    expect((await audit(ticket.id)).at(-1)).toEqual({
      id: expect.any(Number), ticket_id: ticket.id, action: 'replied', actor: { type: 'user', id: ticket.user_id }, channel: 'api',
      created_at: expect.any(Number),
      changes: {
        status_id: { before: ctx.resolvedStatus, after: ctx.openStatus }, resolved_time: { before: resolvedAt, after: null },
        message_id: { before: null, after: message.id },
      },
    });
  });

  it('an operator\'s first reply moves the SLA due time; CC addresses of a reply join the list; a reply, note or draft that changes nothing writes nothing', async () => {
    const plan = await SlaPlan.create({ name: unique('Plan'), enabled: 1, business_hours: 0, timezone: 'UTC' });
    await SlaPlanTarget.create({ plan_id: plan.id, priority_id: ctx.priorityId, first_reply: 60, resolution: 600 });
    const ticket = await f.ticket({ sla_plan: plan.id });
    const op = await f.operator();
    const first = await reply(ticket.id, op.id);
    expect((await audit(ticket.id)).at(-1)).toMatchObject({
      action: 'replied', actor: { type: 'operator', id: op.id }, channel: 'api',
      changes: { due_time: { before: ticket.reply_due_time, after: ticket.resolve_due_time }, message_id: { before: null, after: first.id } },
    });
    const count = (await audit(ticket.id)).length;
    // A second operator reply, a note and a draft change no audited field.
    await reply(ticket.id, op.id);
    await reply(ticket.id, op.id, { message_type: 1 });
    await reply(ticket.id, ticket.user_id, { is_draft: 1 });
    expect(await audit(ticket.id)).toHaveLength(count);
    const copied = await reply(ticket.id, op.id, { cc: ['Copy@Example.com'] });
    expect((await audit(ticket.id)).at(-1)).toMatchObject({
      action: 'replied', changes: { cc: { before: [], after: ['copy@example.com'] }, message_id: { before: null, after: copied.id } },
    });
  });

  it('a mail: the reply by its sender through the email channel, a stranger joining as CC by the mailbox; an automatic mail changes nothing', async () => {
    const department = await f.department();
    const address = (await DepartmentEmail.findOne({ where: { department_id: department.id } }))!;
    const source = () => ({ departmentEmail: address, remoteUid: unique('uid') });
    const customer = newEmail('cust');
    const originalId = `<${unique('orig')}@sender.test>`;
    const opened = await ingestMail(await rawMail({ from: customer, to: address.address, messageId: originalId }), source());
    const ticketId = opened.ticketId!;
    await api.put(`${BASE}/${ticketId}`, { status: ctx.resolvedStatus }).expect(200);
    const owner = (await Ticket.findByPk(ticketId))!.user_id;

    const answered = await ingestMail(await rawMail({ from: customer, to: address.address, subject: 'Re: it', inReplyTo: originalId, references: [originalId] }), source());
    expect(answered).toMatchObject({ decision: 'reply', ticketId });
    expect((await audit(ticketId)).at(-1)).toMatchObject({
      action: 'replied', actor: { type: 'user', id: owner }, channel: 'email',
      changes: { status_id: { before: ctx.resolvedStatus, after: ctx.openStatus }, message_id: { before: null, after: answered.messageId } },
    });

    const stranger = newEmail('boss');
    const joined = await ingestMail(await rawMail({ from: stranger, to: address.address, subject: 'Re: it', references: [originalId] }), source());
    expect(joined).toMatchObject({ decision: 'reply', ticketId });
    // Joining is the stranger's reply's doing: one `replied` entry by its author holds the CC change.
    const author = (await TicketMessage.findByPk(joined.messageId!))!.user_id;
    expect(author).not.toBe(owner);
    expect((await audit(ticketId)).at(-1)).toMatchObject({
      action: 'replied', actor: { type: 'user', id: author }, channel: 'email',
      changes: { cc: { before: [], after: [stranger] }, message_id: { before: null, after: joined.messageId } },
    });

    await api.put(`${BASE}/${ticketId}`, { status: ctx.resolvedStatus }).expect(200);
    const count = (await audit(ticketId)).length;
    const auto = await ingestMail(await rawMail({
      from: customer, to: address.address, subject: 'Out of office', inReplyTo: originalId, headers: { 'Auto-Submitted': 'auto-replied' },
    }), source());
    expect(auto).toMatchObject({ decision: 'reply', ticketId });
    expect(await audit(ticketId)).toHaveLength(count);
    expect((await Ticket.findByPk(ticketId))!.status_id).toBe(ctx.resolvedStatus);
  });

  it('SLA times recomputed outside an update, as the work in progress; a reply rolled back leaves no entry', async () => {
    const plan = await SlaPlan.create({ name: unique('Plan'), enabled: 1, business_hours: 0, timezone: 'UTC' });
    const target = await SlaPlanTarget.create({ plan_id: plan.id, priority_id: ctx.priorityId, first_reply: 60, resolution: 600 });
    const ticket = await f.ticket({ sla_plan: plan.id });
    await target.update({ first_reply: 120 });
    await runAs({ type: 'scheduler', id: null, channel: 'scheduler' }, () => transaction((t) => recomputeDueTimes(ticket.id, t)));
    const after = (await Ticket.findByPk(ticket.id))!;
    expect(after.reply_due_time).toBe(ticket.reply_due_time + 3600);
    expect((await audit(ticket.id)).at(-1)).toMatchObject({
      action: 'updated', actor: { type: 'scheduler', id: null }, channel: 'scheduler',
      changes: { reply_due_time: { before: ticket.reply_due_time, after: after.reply_due_time }, due_time: { before: ticket.due_time, after: after.due_time } },
    });
    // Nothing to recompute: nothing written.
    const count = (await audit(ticket.id)).length;
    await transaction((t) => recomputeDueTimes(ticket.id, t));
    expect(await audit(ticket.id)).toHaveLength(count);

    await api.put(`${BASE}/${ticket.id}`, { status: ctx.resolvedStatus }).expect(200);
    const before = (await audit(ticket.id)).length;
    await expect(transaction(async (t) => {
      await addMessage({ ticketId: ticket.id, userId: ticket.user_id, text: 'Reopen?' }, t);
      throw new Error('rolled back');
    })).rejects.toThrow('rolled back');
    expect(await audit(ticket.id)).toHaveLength(before);
  });
});

describe('the change set in the ticket events', () => {
  it('webhooks and the event feed carry the audit entry written in the same transaction', async () => {
    const receiver = await startReceiver();
    const webhooks = await createWorker(webhooksSpec());
    let hookId = 0;
    try {
      const hook = expectSuccess(await api.post('/api/core/webhook', {
        url: `${receiver.url}?${unique('audit')}`, events: ['ticket.created', 'ticket.updated', 'message.created', 'ticket.trashed'],
      }), 'Successfully created new webhook!');
      hookId = hook.id;
      const from = Number((await DomainEvent.max('id')) ?? 0);
      const ticket = await f.ticket();
      await api.put(`${BASE}/${ticket.id}`, { status: ctx.resolvedStatus, subject: 'Renamed' }).expect(200);
      const message = expectSuccess(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: ticket.user_id, text: 'Still broken.' }), 'Successfully created new message!');
      await api.del(`${BASE}/${ticket.id}`).expect(200);
      const entries = await audit(ticket.id);
      expect(entries.map((e: any) => e.action)).toEqual(['created', 'updated', 'replied', 'trashed']);
      const asCarried = (e: any) => ({ action: e.action, actor: e.actor, channel: e.channel, changes: e.changes });

      // The feed: each event of the ticket with its entry, exactly as the audit shows it.
      const events = (await DomainEvent.findAll({ where: { id: { [Op.gt]: from } }, order: [['id', 'ASC']] }))
        .filter((e) => JSON.parse(e.payload).ticketId === ticket.id);
      const feed = await Promise.all(events.map(async (e) => expectSuccess(await api.get(`/api/core/event/${e.id}`))));
      const byType = (type: string) => feed.find((e: any) => e.type === type)!.data;
      expect(byType('ticket.created').audit).toEqual(asCarried(entries[0]));
      expect(byType('ticket.updated')).toMatchObject({ changes: ['subject', 'status'], audit: asCarried(entries[1]) });
      expect(byType('ticket.updated').audit.changes).toMatchObject({ status_id: { before: ctx.openStatus, after: ctx.resolvedStatus }, subject: { after: 'Renamed' } });
      expect(byType('message.created')).toMatchObject({ messageId: message.id, audit: asCarried(entries[2]) });
      expect(byType('ticket.trashed').audit).toEqual(asCarried(entries[3]));

      // The webhook receiver: the same four, signed deliveries of the same payloads.
      const delivered = await waitFor(() => {
        const bodies = receiver.at(hook.url).map((r) => JSON.parse(r.body)).filter((b) => b.data.ticketId === ticket.id);
        return bodies.length === 4 ? bodies : undefined;
      }, 30000, 'the four webhook deliveries');
      for (const type of ['ticket.created', 'ticket.updated', 'message.created', 'ticket.trashed']) {
        expect(delivered.find((b: any) => b.type === type).data).toEqual(byType(type));
      }
    } finally {
      await Webhook.destroy({ where: { id: hookId } });
      await webhooks.close();
      await receiver.close();
    }
  });

  it('a change that writes no entry (a note, a link) carries none', async () => {
    const ticket = await f.ticket();
    const other = await f.ticket();
    const from = Number((await DomainEvent.max('id')) ?? 0);
    await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: (await f.operator()).id, text: 'Note', message_type: 1 }).expect(200);
    await api.put(`${BASE}/${ticket.id}`, { link: [other.id] }).expect(200);
    const payloads = (await DomainEvent.findAll({ where: { id: { [Op.gt]: from } } })).map((e) => JSON.parse(e.payload)).filter((p) => p.ticketId === ticket.id);
    expect(payloads).toHaveLength(2);
    for (const p of payloads) expect(p).not.toHaveProperty('audit');
  });
});
