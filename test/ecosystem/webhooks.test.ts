import { randomUUID } from 'node:crypto';
/**
 * Webhooks: CRUD with a secret shown once and stored encrypted; deliveries to a real HTTP receiver,
 * signed, retried with backoff (the receiver fails first), logged, redelivered; written in the
 * transaction of the change (a rollback delivers nothing).
 */
import { Webhook, WebhookDelivery, OutboxEntry, DomainEvent } from '../../src/db/models';
import { QUEUES } from '../../src/queue/names';
import { jobIdOf } from '../../src/queue/outbox';
import { transaction } from '../../src/db/transaction';
import { emit } from '../../src/events';
import { createWorker } from '../../src/queue/runWorker';
import { webhooksSpec } from '../../src/wiring';
import { verifySignature } from '../../src/webhooks/signing';
import { unique, useApi } from '../helpers/app';
import { expectDeleted, expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';
import { readQueue } from '../helpers/jobs';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { waitFor } from '../helpers/smtp';

const api = useApi();
let worker: Awaited<ReturnType<typeof createWorker>>;
let receiver: Receiver;
const created: number[] = [];

beforeAll(async () => {
  worker = await createWorker(webhooksSpec());
  receiver = await startReceiver();
});

afterAll(async () => {
  await worker.close();
  await receiver.close();
});

/** Runs before useApi's afterAll closes the database (top-level hooks run in the order they were added). */
function cleanUp() {
  // Later test files of this worker's database must not deliver to a receiver that is gone.
  afterAll(async () => {
    await Webhook.destroy({ where: { id: created } });
  });
}

async function webhook(events: string[], extra: Record<string, unknown> = {}) {
  const res = await api.post('/api/core/webhook', { url: `${receiver.url}?${unique('w')}`, events, ...extra });
  const data = expectSuccess(res, 'Successfully created new webhook!');
  created.push(data.id);
  return data as { id: number; url: string; secret: string; events: string[] };
}

/** What the receiver got for one webhook (each has its own query string). */
const deliveriesTo = (url: string) => receiver.at(url);

describe('webhook CRUD', () => {
  it('creates with a generated secret shown once, stored encrypted', async () => {
    const hook = await webhook(['organisation.created', 'user.created'], { description: 'CRM sync' });
    expect(hook).toMatchObject({ events: ['organisation.created', 'user.created'], enabled: 1, description: 'CRM sync' });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const shown = expectSuccess(await api.get(`/api/core/webhook/${hook.id}`));
    expect(shown).not.toHaveProperty('secret');
    expect(shown.url).toBe(hook.url);
    const stored = (await Webhook.findByPk(hook.id))!;
    expect(stored.secret).toMatch(/^v1:[0-9a-f]{8}:/);
    expect(stored.secret).not.toContain(hook.secret);
    const listed = expectList(await api.get('/api/core/webhook', { limit: 1000 })).find((w) => w.id === hook.id);
    expect(listed).toBeDefined();
    expect(listed).not.toHaveProperty('secret');
  });

  it('takes http and https URLs and known event names (or *) only', async () => {
    expectError(await api.post('/api/core/webhook', { events: ['*'] }), 422, 'The url field is required.');
    for (const url of ['ftp://example.com/x', 'https://example.com:99999/x', 'http://example.com:0/x', 'mailto:a@example.com']) {
      expectError(await api.post('/api/core/webhook', { url, events: ['*'] }), 422, 'The url must be a valid URL.');
    }
    // A scheme in capitals is http(s) too, stored in lower case.
    const upper = expectSuccess(await api.post('/api/core/webhook', { url: 'HTTPS://Example.com/Hook', events: ['*'], enabled: 0 }), 'Successfully created new webhook!');
    created.push(upper.id);
    expect(upper.url).toBe('https://Example.com/Hook');
    expectError(await api.post('/api/core/webhook', { url: 'https://example.com/x' }), 422, 'The events field is required.');
    expectError(await api.post('/api/core/webhook', { url: 'https://example.com/x', events: ['ticket.exploded'] }), 422, 'The selected events.0 is invalid.');
    const json = expectSuccess(await api.postJson('/api/core/webhook', { url: 'https://127.0.0.1:9/x', events: ['*', 'user.created'], enabled: false }), 'Successfully created new webhook!');
    created.push(json.id);
    expect(json.events).toEqual(['*']);
  });

  it('refuses a URL with a user name or password; shows the password of one stored before as ********', async () => {
    const refusal = 'The url must not contain a user name or password: verify deliveries with the signing secret.';
    for (const url of ['http://alice:hunter2@example.com/path', 'https://alice@example.com/x', 'https://:hunter2@example.com/x', 'HTTPS://a%40b:p%3Aw@example.com/x']) {
      expectError(await api.post('/api/core/webhook', { url, events: ['*'] }), 422, refusal);
    }
    const hook = await webhook(['user.created'], { enabled: 0 });
    expectError(await api.put(`/api/core/webhook/${hook.id}`, { url: 'https://alice:hunter2@example.com/path', events: ['*'] }), 422, refusal);
    expect((await Webhook.findByPk(hook.id))!.url).toBe(hook.url);
    expect(expectSuccess(await api.get(`/api/core/webhook/${hook.id}`)).events).toEqual(['user.created']);

    // One stored before the refusal keeps working, but never shows its password.
    await Webhook.update({ url: 'https://alice:hunter2@example.com/path?x=a:b@c' }, { where: { id: hook.id } });
    const masked = 'https://alice:********@example.com/path?x=a:b@c';
    expect(expectSuccess(await api.get(`/api/core/webhook/${hook.id}`)).url).toBe(masked);
    const listed = expectList(await api.get('/api/core/webhook', { enabled: 0, limit: 1000 })).find((w) => w.id === hook.id);
    expect(listed.url).toBe(masked);
    expect(expectSuccess(await api.put(`/api/core/webhook/${hook.id}`, { description: 'kept' }), 'Successfully updated the webhook!').url).toBe(masked);
    expect((await Webhook.findByPk(hook.id))!.url).toBe('https://alice:hunter2@example.com/path?x=a:b@c');
    // A user name alone is no secret; a password of p@ss (the last @ ends it) is masked whole.
    await Webhook.update({ url: 'https://alice@example.com/path' }, { where: { id: hook.id } });
    expect(expectSuccess(await api.get(`/api/core/webhook/${hook.id}`)).url).toBe('https://alice@example.com/path');
    await Webhook.update({ url: 'https://alice:p@ss@example.com/' }, { where: { id: hook.id } });
    expect(expectSuccess(await api.get(`/api/core/webhook/${hook.id}`)).url).toBe('https://alice:********@example.com/');
  });

  it('updates, filters by event and enabled, deletes', async () => {
    const hook = await webhook(['article.created']);
    const updated = expectSuccess(await api.put(`/api/core/webhook/${hook.id}`, { events: ['article.updated', 'article.deleted'], enabled: 0 }), 'Successfully updated the webhook!');
    expect(updated).toMatchObject({ events: ['article.updated', 'article.deleted'], enabled: 0 });
    expect(updated).not.toHaveProperty('secret');
    const byEvent = expectList(await api.get('/api/core/webhook', { event: 'article.deleted', enabled: 0, limit: 1000 })).map((w) => w.id);
    expect(byEvent).toContain(hook.id);
    expect(expectList(await api.get('/api/core/webhook', { event: 'article.created', enabled: 0, limit: 1000 })).map((w) => w.id)).not.toContain(hook.id);
    expectDeleted(await api.del(`/api/core/webhook/${hook.id}`), 'webhook');
    expectNotFound(await api.get(`/api/core/webhook/${hook.id}`), 'webhook');
    expectNotFound(await api.get(`/api/core/webhook/${hook.id}/delivery`), 'webhook');
  });
});

describe('deliveries', () => {
  cleanUp();
  it('are signed, retried after a failure with the same delivery id, and logged', async () => {
    const hook = await webhook(['organisation.created']);
    receiver.answerNext(hook.url, 500);
    const org = expectSuccess(await api.post('/api/user/organisation', { name: unique('Org ') }), 'Successfully created new organisation!');
    const mine = () => deliveriesTo(hook.url);
    await waitFor(() => mine().length >= 2, 15000, 'the retry');
    const [first, second] = mine();
    expect(first.headers['x-helpdesk-delivery']).toMatch(/^[0-9a-f-]{36}$/);
    expect(second.headers['x-helpdesk-delivery']).toBe(first.headers['x-helpdesk-delivery']);
    expect(second.at).toBeGreaterThan(first.at);
    for (const r of [first, second]) {
      expect(r.method).toBe('POST');
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['x-helpdesk-event']).toBe('organisation.created');
      expect(r.headers['x-helpdesk-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(verifySignature(hook.secret, r.headers['x-helpdesk-signature'] as string, r.body)).toBe(true);
      // Another secret, or a body changed on the way, does not verify.
      expect(verifySignature(`${hook.secret}x`, r.headers['x-helpdesk-signature'] as string, r.body)).toBe(false);
      expect(verifySignature(hook.secret, r.headers['x-helpdesk-signature'] as string, r.body.replace('organisation', 'organisatio'))).toBe(false);
    }
    const body = JSON.parse(second.body);
    expect(body).toEqual({ id: expect.any(Number), type: 'organisation.created', created_at: expect.any(Number), data: { organisationId: org.id } });
    // The same event in the feed.
    expect(expectSuccess(await api.get(`/api/core/event/${body.id}`))).toEqual(body);

    const log = await waitFor(async () => {
      const [d] = expectList(await api.get(`/api/core/webhook/${hook.id}/delivery`));
      return d?.status === 'succeeded' ? d : null;
    }, 10000, 'the delivery to succeed');
    expect(log).toMatchObject({
      webhook_id: hook.id, event_id: body.id, event: 'organisation.created', delivery: first.headers['x-helpdesk-delivery'],
      status: 'succeeded', attempts: 2, response_code: 200, error: null,
    });
    expect(log.delivered_at).toBeGreaterThanOrEqual(log.created_at);
    expect(expectSuccess(await api.get(`/api/core/webhook/${hook.id}/delivery/${log.id}`))).toEqual(log);
  });

  it('fail for good after their attempts, with the reason; redeliver sends the same delivery again', async () => {
    const hook = await webhook(['organisation.updated']);
    const org = expectSuccess(await api.post('/api/user/organisation', { name: unique('Org ') }), 'Successfully created new organisation!');
    receiver.answerAlways(hook.url, 503);
    try {
      expectSuccess(await api.put(`/api/user/organisation/${org.id}`, { notes: 'x' }), 'Successfully updated the organisation!');
      const failed = await waitFor(async () => {
        const [d] = expectList(await api.get(`/api/core/webhook/${hook.id}/delivery`, { status: 'failed' }));
        return d;
      }, 15000, 'the delivery to fail for good');
      expect(failed).toMatchObject({ status: 'failed', attempts: 4, response_code: 503 });
      expect(failed.error).toMatch(/^The receiver answered 503 after \d+ ms\.$/);
      expect(deliveriesTo(hook.url)).toHaveLength(4);
      receiver.answerAlways(hook.url, null);
      const again = expectSuccess(await api.post(`/api/core/webhook/${hook.id}/delivery/${failed.id}/redeliver`), 'The delivery was queued again.');
      expect(again).toMatchObject({ id: failed.id, status: 'pending', error: null });
      const done = await waitFor(async () => {
        const d = expectSuccess(await api.get(`/api/core/webhook/${hook.id}/delivery/${failed.id}`));
        return d.status === 'succeeded' ? d : null;
      }, 10000, 'the redelivery');
      expect(done).toMatchObject({ attempts: 5, response_code: 200 });
      const all = deliveriesTo(hook.url);
      expect(all).toHaveLength(5);
      expect(new Set(all.map((r) => r.headers['x-helpdesk-delivery'])).size).toBe(1);
    } finally {
      receiver.answerAlways(hook.url, null);
    }
  });

  it('reach only enabled webhooks subscribed to the event (or to *)', async () => {
    const wanted = await webhook(['organisation.deleted']);
    const everything = await webhook(['*']);
    const other = await webhook(['article.deleted']);
    const disabled = await webhook(['organisation.deleted'], { enabled: 0 });
    const org = expectSuccess(await api.post('/api/user/organisation', { name: unique('Org ') }), 'Successfully created new organisation!');
    expectDeleted(await api.del(`/api/user/organisation/${org.id}`), 'organisation');
    await waitFor(() => deliveriesTo(wanted.url).length === 1, 10000, 'the delivery');
    await waitFor(() => deliveriesTo(everything.url).length >= 2, 10000, 'the deliveries of *');
    expect(deliveriesTo(everything.url).map((r) => r.headers['x-helpdesk-event'])).toEqual(expect.arrayContaining(['organisation.created', 'organisation.deleted']));
    expect(deliveriesTo(other.url)).toHaveLength(0);
    expect(deliveriesTo(disabled.url)).toHaveLength(0);
    expect(await WebhookDelivery.count({ where: { webhook_id: [other.id, disabled.id] } })).toBe(0);
    // * stays subscribed to everything: it is not left to later files of this worker.
    await api.put(`/api/core/webhook/${everything.id}`, { enabled: 0 });
  });

  it('are written in the transaction of the change: a rollback leaves no event, delivery or job', async () => {
    const hook = await webhook(['organisation.created']);
    const before = { events: await DomainEvent.count(), outbox: await OutboxEntry.count() };
    await expect(transaction(async (t) => {
      await emit(t, 'organisation.created', { organisationId: 4242 });
      expect(await WebhookDelivery.count({ where: { webhook_id: hook.id }, transaction: t })).toBe(1);
      throw new Error('rolled back');
    })).rejects.toThrow('rolled back');
    expect(await DomainEvent.count()).toBe(before.events);
    expect(await OutboxEntry.count()).toBe(before.outbox);
    expect(await WebhookDelivery.count({ where: { webhook_id: hook.id } })).toBe(0);
  });

  it('has a delivery log with filters, 404s with their labels, and no redelivery of an unknown one', async () => {
    const hook = await webhook(['organisation.created']);
    expectList(await api.get(`/api/core/webhook/${hook.id}/delivery`, { status: 'succeeded', event: 'organisation.created' }));
    expectError(await api.get(`/api/core/webhook/${hook.id}/delivery`, { status: 'lost' }), 422, 'The selected status is invalid.');
    expectNotFound(await api.get(`/api/core/webhook/${hook.id}/delivery/4294967295`), 'webhook delivery');
    expectNotFound(await api.post(`/api/core/webhook/${hook.id}/delivery/4294967295/redeliver`), 'webhook delivery');
    expectNotFound(await api.post('/api/core/webhook/4294967295/delivery/1/redeliver'), 'webhook');
    // A delivery still being attempted is not sent again alongside (two chains of attempts).
    const event = (await DomainEvent.findOne({ order: [['id', 'DESC']] }))!;
    const pending = await WebhookDelivery.create({ webhook_id: hook.id, event_id: event.id, uuid: randomUUID(), event_name: event.name, status: 'pending', attempts: 1 } as any);
    expectError(await api.post(`/api/core/webhook/${hook.id}/delivery/${pending.id}/redeliver`), 422, 'The delivery is still being attempted: it can be sent again once it has succeeded or failed.');
    expect((await pending.reload()).attempts).toBe(1);
    expect(await OutboxEntry.count({ where: { payload: JSON.stringify({ deliveryId: pending.id }) } })).toBe(0);
  });

  it('refuses to redeliver to a disabled webhook and leaves the delivery as it was', async () => {
    const hook = await webhook(['organisation.created']);
    const event = (await DomainEvent.findOne({ order: [['id', 'DESC']] }))!;
    const done = await WebhookDelivery.create({
      webhook_id: hook.id, event_id: event.id, uuid: randomUUID(), event_name: event.name, status: 'succeeded', attempts: 1, response_code: 200, delivered_at: 1764030000,
    } as any);
    expectSuccess(await api.put(`/api/core/webhook/${hook.id}`, { enabled: 0 }), 'Successfully updated the webhook!');
    const before = expectSuccess(await api.get(`/api/core/webhook/${hook.id}/delivery/${done.id}`));
    expectError(await api.post(`/api/core/webhook/${hook.id}/delivery/${done.id}/redeliver`), 422, 'The webhook is disabled: enable it before sending a delivery again.');
    expect(expectSuccess(await api.get(`/api/core/webhook/${hook.id}/delivery/${done.id}`))).toEqual(before);
    expect(await OutboxEntry.count({ where: { payload: JSON.stringify({ deliveryId: done.id }) } })).toBe(0);
  });

  it('filters the log by the delivery\'s event type; * is no event type and is refused', async () => {
    const everything = await webhook(['*']);
    try {
      expectSuccess(await api.post('/api/user/organisation', { name: unique('Org ') }), 'Successfully created new organisation!');
      await waitFor(() => deliveriesTo(everything.url).length >= 1, 10000, 'the delivery of *');
      expect(expectList(await api.get(`/api/core/webhook/${everything.id}/delivery`, { event: 'organisation.created' })).length).toBeGreaterThanOrEqual(1);
      expectError(await api.get(`/api/core/webhook/${everything.id}/delivery`, { event: '*' }), 422, 'The selected event is invalid.');
    } finally {
      await api.put(`/api/core/webhook/${everything.id}`, { enabled: 0 });
    }
  });
});

describe('a delivery whose workers stopped while sending it, more often than allowed', () => {
  cleanUp();
  it('fails rather than stay pending for ever, and can be sent again', async () => {
    // No worker: the delivery's job waits, and is marked as stalled too often before one takes it.
    await worker.close();
    const jobs = readQueue(QUEUES.webhooks);
    try {
      const hook = await webhook(['organisation.created']);
      expectSuccess(await api.post('/api/user/organisation', { name: unique('Org ') }), 'Successfully created new organisation!');
      const delivery = (await WebhookDelivery.findOne({ where: { webhook_id: hook.id } }))!;
      const entry = (await OutboxEntry.findOne({ where: { name: 'webhook.deliver', payload: JSON.stringify({ deliveryId: delivery.id }) } }))!;
      await jobs.stallBeyondLimit(jobIdOf(entry));
      worker = await createWorker(webhooksSpec());

      const failed = await waitFor(async () => {
        const d = expectSuccess(await api.get(`/api/core/webhook/${hook.id}/delivery/${delivery.id}`));
        return d.status === 'failed' ? d : null;
      }, 15000, 'the delivery to fail');
      // It stayed 'pending', and redeliver refused it ('still being attempted').
      expect(failed).toMatchObject({ status: 'failed', attempts: 0, error: 'Not delivered: job stalled more than allowable limit.' });
      expect(deliveriesTo(hook.url)).toHaveLength(0);
      expectSuccess(await api.post(`/api/core/webhook/${hook.id}/delivery/${delivery.id}/redeliver`), 'The delivery was queued again.');
      await waitFor(async () => (expectSuccess(await api.get(`/api/core/webhook/${hook.id}/delivery/${delivery.id}`)).status === 'succeeded'), 15000, 'the redelivery');
      expect(deliveriesTo(hook.url)).toHaveLength(1);
    } finally {
      await jobs.close();
    }
  });
});
