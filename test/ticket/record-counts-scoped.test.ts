/**
 * The ticket attachment, ticket feedback and webhook delivery lists read their `count` from the
 * record counters (migration 057, src/db/recordCounts.ts) when no filter narrows them (a
 * webhook's deliveries: within the webhook; feedback: or its rating alone): exact whatever writes
 * or deletes the records, the cascades of a ticket's, a message's, an event's and a webhook's
 * delete too (InnoDB's cascades run no trigger), with no COUNT over the records; a filter counts
 * its matches. So do the mail log (migration 059: the mail queue's outbox entries), whose pages
 * read an index led by the queue, and the incoming mail log (migration 060). One filter of few
 * values is counted too (migration 066): a delivery's `status` or `event`, a mail's `type`, an
 * incoming mail's `decision`.
 */
import { randomUUID } from 'node:crypto';
import { capture } from '../../bench/capture';
import { DomainEvent, FeedbackForm, IncomingMail, OutboxEntry, Ticket, TicketAttachment, TicketMessage, Webhook, WebhookDelivery } from '../../src/db/models';
import { execute, select } from '../../src/db/select';
import { createFeedbackRequest } from '../../src/ticket/feedbackRequest';
import { useApi, nowSec, unique } from '../helpers/app';
import { expectDeleted, expectList, expectSuccess } from '../helpers/envelope';
import { builderPagePlan, measureList } from '../helpers/queries';
import { b64, ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
let ctx: TicketContext;
beforeAll(async () => { ctx = await ticketContext(); });
const f = ticketFactories(api, () => ctx);

/** The records that match, COUNTed. */
const counted = async (sql: string, values: Record<string, unknown> = {}) => Number((await select<{ n: number }>(`SELECT COUNT(*) AS n FROM ${sql}`, values))[0].n);

/** A list's count and whether it COUNTed the table (a page of one: the count is what is checked). */
async function listed(path: string, table: string, query: Record<string, unknown> = {}) {
  const { res, queries } = await measureList(api, path, { limit: 1, ...query });
  expectList(res);
  return { count: res.body.count as number, countedTable: queries.some((q) => new RegExp(`COUNT\\(\\*\\)[^;]*FROM \`${table}\``).test(q)) };
}

/** The list's count, checked to come from the counters and to be every record's. */
async function expectCounted(path: string, table: string, where = '1 = 1', values: Record<string, unknown> = {}) {
  const list = await listed(path, table);
  expect(list.countedTable).toBe(false);
  expect(list.count).toBe(await counted(`${table} WHERE ${where}`, values));
  return list.count;
}

const file = (name: string) => ({ filename: name, contents: b64(`${name} ${randomUUID()}`) });

describe('attachment and feedback counts from the record counters', () => {
  it('count attachments as tickets, replies and statements add them, and as attachments, messages and tickets are deleted', async () => {
    const start = await expectCounted('/api/ticket/attachment', 'ticket_attachments');
    const ticket = await f.ticket({ attachment: [file('a.txt'), file('b.txt')] });
    const reply = await f.message(ticket, { attachment: [file('c.txt'), file('d.txt')] });
    const other = await f.ticket({ attachment: [file('e.txt')] });
    expect(await expectCounted('/api/ticket/attachment', 'ticket_attachments')).toBe(start + 5);

    const [a] = expectList(await api.get('/api/ticket/attachment', { ticket_id: ticket.id }));
    expectDeleted(await api.del(`/api/ticket/attachment/${a.id}`), 'attachment');
    expect(await expectCounted('/api/ticket/attachment', 'ticket_attachments')).toBe(start + 4);
    // A message's delete cascades to its attachments.
    expectDeleted(await api.del(`/api/ticket/message/${reply.id}`), 'message');
    expect(await TicketAttachment.count({ where: { message_id: reply.id } })).toBe(0);
    expect(await expectCounted('/api/ticket/attachment', 'ticket_attachments')).toBe(start + 2);
    // A ticket's delete (as a customer's is) cascades to its messages and to their attachments.
    await Ticket.destroy({ where: { id: ticket.id } });
    expect(await TicketMessage.count({ where: { ticket_id: ticket.id } })).toBe(0);
    expect(await expectCounted('/api/ticket/attachment', 'ticket_attachments')).toBe(start + 1);
    // A statement of its own, and a filter (counted by its matches).
    await execute('DELETE FROM ticket_attachments WHERE ticket_id = :id', { id: other.id }, undefined);
    expect(await expectCounted('/api/ticket/attachment', 'ticket_attachments')).toBe(start);
    const narrowed = await listed('/api/ticket/attachment', 'ticket_attachments', { ticket_id: other.id });
    expect(narrowed).toEqual({ count: 0, countedTable: true });
  });

  it('count feedback, of all ratings and of one, as it is requested, rated and deleted with its ticket', async () => {
    const form = (await FeedbackForm.findOne({ order: [['id', 'ASC']], rejectOnEmpty: true }));
    const start = await expectCounted('/api/ticket/feedback', 'ticket_feedback');
    const tickets = [await f.ticket(), await f.ticket(), await f.ticket()];
    const requests = [];
    for (const t of tickets) requests.push(await createFeedbackRequest({ ticketId: t.id, userId: t.user_id, form }));
    expectSuccess(await api.put(`/api/ticket/feedback/${requests[0].id}`, { rating: 0 }), 'Successfully updated the ticket feedback!');
    expect(await expectCounted('/api/ticket/feedback', 'ticket_feedback')).toBe(start + 3);
    // One rating alone is its counters' too, moved as a rating is given or changed.
    for (const rating of [0, 1, 2]) {
      expect(await listed('/api/ticket/feedback', 'ticket_feedback', { rating })).toEqual({ count: await counted('ticket_feedback WHERE rating = :rating', { rating }), countedTable: false });
    }
    const bad = (await listed('/api/ticket/feedback', 'ticket_feedback', { rating: 0 })).count;
    expectSuccess(await api.put(`/api/ticket/feedback/${requests[0].id}`, { rating: 1 }), 'Successfully updated the ticket feedback!');
    expect((await listed('/api/ticket/feedback', 'ticket_feedback', { rating: 0 })).count).toBe(bad - 1);
    expectSuccess(await api.put(`/api/ticket/feedback/${requests[0].id}`, { rating: 0 }), 'Successfully updated the ticket feedback!');
    // Another filter beside it counts its matches.
    expect(await listed('/api/ticket/feedback', 'ticket_feedback', { rating: 0, ticket_id: tickets[0].id })).toEqual({ count: 1, countedTable: true });

    // A ticket's delete takes its rated feedback off its rating's count.
    await Ticket.destroy({ where: { id: tickets[0].id } });
    expect(await expectCounted('/api/ticket/feedback', 'ticket_feedback')).toBe(start + 2);
    expect((await listed('/api/ticket/feedback', 'ticket_feedback', { rating: 0 })).count).toBe(bad - 1);
    await execute('DELETE FROM ticket_feedback WHERE id = :id', { id: requests[1].id }, undefined);
    expect(await expectCounted('/api/ticket/feedback', 'ticket_feedback')).toBe(start + 1);
  });
});

describe('webhook delivery counts from the record counters', () => {
  const webhook = (name: string) => Webhook.create({ description: name, url: 'https://hooks.example.com/x', events: JSON.stringify(['user.created']), secret: randomUUID(), enabled: 0 } as any);
  const event = () => DomainEvent.create({ name: 'user.created', payload: '{}', created_at: nowSec() } as any);
  const deliver = (hook: Webhook, e: DomainEvent, status = 'succeeded') =>
    WebhookDelivery.create({ webhook_id: hook.id, event_id: e.id, uuid: randomUUID(), event_name: e.name, status, attempts: 1 } as any);
  const path = (hook: Webhook) => `/api/core/webhook/${hook.id}/delivery`;

  it('counts each webhook\'s deliveries apart, as they are written and as their events and webhooks are deleted', async () => {
    const [one, two] = [await webhook('Counted one'), await webhook('Counted two')];
    const [e1, e2] = [await event(), await event()];
    await deliver(one, e1);
    await deliver(one, e2, 'failed');
    await deliver(two, e1);
    expect(await expectCounted(path(one), 'webhook_deliveries', 'webhook_id = :id', { id: one.id })).toBe(2);
    expect(await expectCounted(path(two), 'webhook_deliveries', 'webhook_id = :id', { id: two.id })).toBe(1);
    expect(await listed(path(one), 'webhook_deliveries', { status: 'failed' })).toEqual({ count: 1, countedTable: false });
    expect(await listed(path(one), 'webhook_deliveries', { status: 'failed', created_at_min: 1 })).toEqual({ count: 1, countedTable: true });

    // An event's delete cascades to its deliveries, to every webhook.
    await DomainEvent.destroy({ where: { id: e1.id } });
    expect(await expectCounted(path(one), 'webhook_deliveries', 'webhook_id = :id', { id: one.id })).toBe(1);
    expect(await expectCounted(path(two), 'webhook_deliveries', 'webhook_id = :id', { id: two.id })).toBe(0);
    // By status and by event (migration 066), as a delivery's status changes and as an event's
    // delete takes its deliveries; two of them together count their matches.
    const e3 = await DomainEvent.create({ name: 'ticket.created', payload: '{}', created_at: nowSec() } as any);
    const pending = await deliver(one, e3, 'pending');
    const byValue = async (hook: Webhook, query: Record<string, string>) => {
      const list = await listed(path(hook), 'webhook_deliveries', query);
      expect(list.countedTable).toBe(false);
      const [[filter, value]] = Object.entries(query);
      const column = filter === 'event' ? 'event_name' : filter;
      expect(list.count).toBe(await counted(`webhook_deliveries WHERE webhook_id = :id AND ${column} = :value`, { id: hook.id, value }));
      return list.count;
    };
    expect([await byValue(one, { status: 'failed' }), await byValue(one, { status: 'pending' }), await byValue(one, { event: 'ticket.created' })]).toEqual([1, 1, 1]);
    await pending.update({ status: 'succeeded' });
    expect([await byValue(one, { status: 'pending' }), await byValue(one, { status: 'succeeded' }), await byValue(one, { event: 'user.created' })]).toEqual([0, 1, 1]);
    expect(await listed(path(one), 'webhook_deliveries', { status: 'succeeded', event: 'ticket.created' })).toEqual({ count: 1, countedTable: true });
    await DomainEvent.destroy({ where: { id: e3.id } });
    expect([await byValue(one, { status: 'succeeded' }), await byValue(one, { event: 'ticket.created' }), await byValue(one, { status: 'failed' })]).toEqual([0, 0, 1]);
    // A webhook's delete cascades to its deliveries: its counts go with them.
    await one.destroy();
    expect(await counted("record_counts WHERE kind = 'delivery' AND scope_id = :id", { id: one.id })).toBe(0);
    expect(await WebhookDelivery.count({ where: { event_id: e2.id } })).toBe(0);
  });
});

/** The EXPLAIN of the page statement a list runs for `query` (of `table`). */
async function pagePlan(path: string, table: string, query: Record<string, unknown>) {
  const { statements } = await capture(() => api.get(path, { limit: 5, ...query }));
  return (await builderPagePlan(statements, table)).map((r) => ({ key: r.key, filesort: /filesort/.test(r.Extra ?? '') }));
}

describe('mail log counts from the record counters', () => {
  const entry = (queue: string) => OutboxEntry.create({ job_key: unique('k').slice(-16), queue, name: 'counted.mail', payload: '{}', created_at: nowSec() } as any);

  it('counts the mail queue\'s entries only, as they are written and deleted', async () => {
    const start = await expectCounted('/api/core/mail', 'outbox', "queue = 'mail'");
    const [a, , other] = [await entry('mail'), await entry('mail'), await entry('webhooks')];
    expect(await expectCounted('/api/core/mail', 'outbox', "queue = 'mail'")).toBe(start + 2);
    // An entry never changes queue; were one to, it would move between the counts, its type's too.
    await execute("UPDATE outbox SET queue = 'mail' WHERE id = :id", { id: other.id }, undefined);
    expect(await expectCounted('/api/core/mail', 'outbox', "queue = 'mail'")).toBe(start + 3);
    expect(await listed('/api/core/mail', 'outbox', { type: 'counted.mail' })).toEqual({ count: await counted("outbox WHERE queue = 'mail' AND name = 'counted.mail'"), countedTable: false });
    await execute("UPDATE outbox SET queue = 'webhooks' WHERE id = :id", { id: other.id }, undefined);
    expect(await expectCounted('/api/core/mail', 'outbox', "queue = 'mail'")).toBe(start + 2);
    await execute('DELETE FROM outbox WHERE id = :id', { id: a.id }, undefined);
    expect(await expectCounted('/api/core/mail', 'outbox', "queue = 'mail'")).toBe(start + 1);
    // A type alone is counted (migration 066), compared as the column compares it (any case);
    // a status counts the few entries of its own or, `sent`, of every other status
    // (test/mail/mail-log-status.test.ts), less from the type's counters in any case too.
    for (const type of ['counted.mail', 'Counted.MAIL']) {
      expect(await listed('/api/core/mail', 'outbox', { type })).toEqual({ count: await counted("outbox WHERE queue = 'mail' AND name = 'counted.mail'"), countedTable: false });
    }
    expect(await listed('/api/core/mail', 'outbox', { type: 'counted.mail', status: 'queued' })).toEqual({ count: await counted(`outbox WHERE queue = 'mail' AND name = 'counted.mail' AND processed_at IS NULL AND failed_at IS NULL
      AND id NOT IN (SELECT outbox_id FROM mail_deliveries WHERE status <> 'queued')`), countedTable: true });
    for (const type of ['counted.mail', 'Counted.MAIL']) {
      expect((await listed('/api/core/mail', 'outbox', { type, status: 'sent' })).count).toBe(await counted(`outbox WHERE queue = 'mail' AND name = 'counted.mail'
        AND (id IN (SELECT outbox_id FROM mail_deliveries WHERE status = 'sent') OR (processed_at IS NOT NULL AND failed_at IS NULL
        AND id NOT IN (SELECT outbox_id FROM mail_deliveries WHERE status <> 'queued')))`));
    }
  });

  it('reads a page in created_at order from the queue\'s date index, not a sort of the outbox', async () => {
    for (let i = 0; i < 30; i++) await entry(i % 3 ? 'mail' : 'webhooks');
    for (const order_direction of ['asc', 'desc']) {
      expect(await pagePlan('/api/core/mail', 'outbox', { order_column: 'created_at', order_direction })).toEqual([{ key: 'outbox_queue_created_at', filesort: false }]);
    }
  });
});

describe('incoming mail log counts from the record counters', () => {
  const received = (decision: string) => IncomingMail.create({
    department_email_id: null, remote_uid: null, message_id: `<${randomUUID()}@example.com>`, from_address: 'someone@example.com', subject: 'Counted',
    decision, reason: null, ticket_id: null, ticket_message_id: null, size: 100,
  } as any);

  it('counts every mail fetched, as it is recorded and deleted; a decision counts its matches', async () => {
    const start = await expectCounted('/api/ticket/incomingmail', 'incoming_mails');
    const [a] = [await received('spam'), await received('rejected'), await received('spam')];
    expect(await expectCounted('/api/ticket/incomingmail', 'incoming_mails')).toBe(start + 3);
    await execute('DELETE FROM incoming_mails WHERE id = :id', { id: a.id }, undefined);
    expect(await expectCounted('/api/ticket/incomingmail', 'incoming_mails')).toBe(start + 2);
    // A decision alone is counted (migration 066), moved as a mail's decision changes.
    expect(await listed('/api/ticket/incomingmail', 'incoming_mails', { decision: 'spam' })).toEqual({ count: await counted("incoming_mails WHERE decision = 'spam'"), countedTable: false });
    const spam = (await listed('/api/ticket/incomingmail', 'incoming_mails', { decision: 'spam' })).count;
    await execute("UPDATE incoming_mails SET decision = 'rejected' WHERE id = (SELECT MAX(id) FROM incoming_mails WHERE decision = 'spam')", {}, undefined);
    expect(await listed('/api/ticket/incomingmail', 'incoming_mails', { decision: 'spam' })).toEqual({ count: spam - 1, countedTable: false });
    expect(await listed('/api/ticket/incomingmail', 'incoming_mails', { decision: 'rejected' })).toEqual({ count: await counted("incoming_mails WHERE decision = 'rejected'"), countedTable: false });
  });

  it('reads a page in updated_at order from its index, not a sort of every mail', async () => {
    // Enough mails that a sort of them would cost more than reading the index's range.
    await execute(`INSERT INTO incoming_mails (message_id, from_address, subject, decision, size, created_at, updated_at)
      SELECT CONCAT('<plan-', seq, '@example.com>'), 'someone@example.com', 'Plan', 'reply', 100, :at - seq, :at - seq MOD 17
      FROM seq_1_to_400`, { at: nowSec() }, undefined);
    // The optimiser's statistics of the table as it is now (InnoDB updates them in the background).
    await select('ANALYZE TABLE incoming_mails', {});
    for (const order_direction of ['asc', 'desc']) {
      expect(await pagePlan('/api/ticket/incomingmail', 'incoming_mails', { order_column: 'updated_at', order_direction })).toEqual([{ key: 'incoming_mails_updated_at', filesort: false }]);
    }
  });
});
