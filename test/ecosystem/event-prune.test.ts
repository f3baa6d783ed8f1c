/**
 * The event feed's retention (EVENT_RETENTION_DAYS): pruneEvents removes events older than it
 * with their webhook deliveries, oldest id first, never past an event whose delivery is pending;
 * the deliveries' counts follow; a feed cursor below what was removed is refused instead of
 * skipping it, and a cursor at the mark or after it reads on.
 */
import { QueryTypes } from 'sequelize';
import { config } from '../../src/config';
import { eventPruneJob, pruneEvents } from '../../src/core/eventPrune';
import { DomainEvent } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { schedulerIdOf } from '../../src/queue/jobs';
import { schedulerSpec } from '../../src/wiring';
import { nowSec, unique, useApi } from '../helpers/app';
import { expectDeleted, expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';

const api = useApi();
const DAY = 86400;

const latestId = async () => (await DomainEvent.max<number, DomainEvent>('id')) ?? 0;
const exists = async (ids: number[]) => (await DomainEvent.findAll({ attributes: ['id'], where: { id: ids }, order: [['id', 'ASC']] })).map((e) => e.id);
const mark = async () => (await sequelize().query<{ through_id: number }>("SELECT through_id FROM log_prunes WHERE log = 'events'", { type: QueryTypes.SELECT }))[0].through_id;

/** A new organisation's event, and that event's delivery to `hook` (pending: no worker runs here). */
async function organisationEvent(hook: number): Promise<{ event: number; delivery: number }> {
  const before = await latestId();
  expectSuccess(await api.post('/api/user/organisation', { name: unique('Org ') }), 'Successfully created new organisation!');
  const [event] = (await DomainEvent.findAll({ where: { name: 'organisation.created' }, order: [['id', 'DESC']], limit: 1 })).map((e) => e.id);
  expect(event).toBeGreaterThan(before);
  const delivery = expectList(await api.get(`/api/core/webhook/${hook}/delivery`, { limit: 100 })).find((d) => d.event_id === event);
  expect(delivery).toMatchObject({ event_id: event, status: 'pending' });
  return { event, delivery: delivery.id };
}

const setStatus = (delivery: number, status: string) => sequelize().query('UPDATE webhook_deliveries SET status = :status WHERE id = :delivery', { replacements: { status, delivery } });

it('is scheduled hourly, and removes nothing with a retention of 0', async () => {
  expect(schedulerSpec().jobs.filter((j) => j.schedule).map(schedulerIdOf)).toContain(schedulerIdOf(eventPruneJob));
  const kept = config().eventRetentionSeconds;
  expectSuccess(await api.post('/api/user/organisation', { name: unique('Org ') }), 'Successfully created new organisation!');
  const id = await latestId();
  expect(id).toBeGreaterThan(0);
  await sequelize().query('UPDATE events SET created_at = :old WHERE id <= :id', { replacements: { old: nowSec() - 4000 * DAY, id } });
  config().eventRetentionSeconds = 0;
  try {
    expect(await pruneEvents()).toBe(0);
    expect(await latestId()).toBe(id);
  } finally {
    config().eventRetentionSeconds = kept;
  }
});

it('removes old events with their deliveries, oldest first, stopping at a pending delivery and at a young event; the feed refuses a cursor before the mark', async () => {
  const hook = expectSuccess(await api.post('/api/core/webhook', { url: 'https://93.184.215.14/hook', events: ['organisation.created'] }), 'Successfully created new webhook!');
  const first = await organisationEvent(hook.id);
  const a = await organisationEvent(hook.id);
  const b = await organisationEvent(hook.id);
  const c = await organisationEvent(hook.id);
  const young = await organisationEvent(hook.id);
  const at = nowSec();
  // Everything up to c is past the retention (90 days by default); `young` is a day inside it.
  await sequelize().query('UPDATE events SET created_at = :old WHERE id <= :c', { replacements: { old: at - 91 * DAY, c: c.event } });
  await sequelize().query('UPDATE events SET created_at = :recent WHERE id = :young', { replacements: { recent: at - 89 * DAY, young: young.event } });
  // Deliveries earlier files of this worker's database left pending (no worker runs here) are done with.
  await sequelize().query("UPDATE webhook_deliveries SET status = 'skipped' WHERE status = 'pending' AND webhook_id <> :hook", { replacements: { hook: hook.id } });
  await setStatus(first.delivery, 'succeeded');
  await setStatus(a.delivery, 'failed');
  const count = async () => (await api.get(`/api/core/webhook/${hook.id}/delivery`)).body.count;
  expect(await count()).toBe(5);

  // b's delivery is pending: its job needs the event, so the removal stops just before it.
  expect(await pruneEvents(at)).toBeGreaterThanOrEqual(2);
  expect(await mark()).toBe(b.event - 1);
  expect(await exists([first.event, a.event, b.event, c.event, young.event])).toEqual([b.event, c.event, young.event]);
  expect(await count()).toBe(3);
  expectNotFound(await api.get(`/api/core/event/${a.event}`), 'event');
  expectNotFound(await api.get(`/api/core/webhook/${hook.id}/delivery/${a.delivery}`), 'webhook delivery');
  const expired = 'The cursor has expired: events after it have been removed (events are kept for 90 days). Read the feed again from cursor 0.';
  // A reader who had read `first` would skip `a`: refused.
  expectError(await api.get('/api/core/event', { cursor: first.event }), 422, expired);
  // At the mark nothing was missed: the next event is the first kept.
  const onward = expectSuccess(await api.get('/api/core/event', { cursor: b.event - 1, limit: 1 }));
  expect(onward.events.map((e: { id: number }) => e.id)).toEqual([b.event]);
  expect(expectSuccess(await api.get('/api/core/event', { limit: 1 })).events[0].id).toBe(b.event);

  // Done with: two runs at once take turns on the mark, and together remove b and c, not `young`.
  await setStatus(b.delivery, 'failed');
  await setStatus(c.delivery, 'succeeded');
  const runs = await Promise.all([pruneEvents(at), pruneEvents(at)]);
  expect(runs[0] + runs[1]).toBe(2);
  expect(await mark()).toBe(young.event - 1);
  expect(await exists([b.event, c.event, young.event])).toEqual([young.event]);
  expect(await count()).toBe(1);
  expectError(await api.get('/api/core/event', { cursor: b.event }), 422, expired);
  expect(expectSuccess(await api.get('/api/core/event', { cursor: c.event, limit: 1 })).events.map((e: { id: number }) => e.id)).toEqual([young.event]);
  expect(await pruneEvents(at)).toBe(0);

  expectDeleted(await api.del(`/api/core/webhook/${hook.id}`), 'webhook');
});

it('removes more than one batch (1,000 events) in a run; a feed whose events are all removed answers the reader at the mark with an empty page', async () => {
  const at = nowSec();
  await sequelize().query("INSERT INTO events (name, payload, created_at) SELECT 'organisation.created', '{}', :at FROM seq_1_to_2100", { replacements: { at } });
  const id = await latestId();
  await sequelize().query("UPDATE webhook_deliveries SET status = 'skipped' WHERE status = 'pending' AND event_id <= :id", { replacements: { id } });
  await sequelize().query('UPDATE events SET created_at = :old WHERE id <= :id', { replacements: { old: at - 91 * DAY, id } });
  expect(await pruneEvents(at)).toBeGreaterThanOrEqual(2100);
  expect(await mark()).toBe(id);
  expect(await latestId()).toBe(0);
  expect(expectSuccess(await api.get('/api/core/event', { cursor: id }))).toEqual({ events: [], next_cursor: id, has_more: false });
  expectError(await api.get('/api/core/event', { cursor: id + 1 }), 422, 'The selected cursor is invalid.');
});
