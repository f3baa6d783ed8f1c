/**
 * The outbox's retention (OUTBOX_RETENTION_DAYS): pruneOutbox removes the entries done with
 * (processed, or failed for good) queued before it, in every queue, with their mail delivery
 * records; the mail log's count follows; an entry still to do is kept whatever its age.
 */
import { randomBytes } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { config } from '../../src/config';
import { sequelize } from '../../src/db/sequelize';
import { schedulerIdOf } from '../../src/queue/jobs';
import { outboxPruneJob, pruneOutbox } from '../../src/queue/outboxPrune';
import { schedulerSpec } from '../../src/wiring';
import { nowSec, useApi } from '../helpers/app';
import { expectNotFound, expectSuccess } from '../helpers/envelope';

const api = useApi();
const DAY = 86400;
// What earlier files of this worker's database left past the retention goes first.
beforeAll(async () => { await pruneOutbox(); });

interface Entry { queue?: string; created_at: number; published_at?: number | null; processed_at?: number | null; failed_at?: number | null; delivery?: string }

/** An outbox entry as the outbox and the mail worker write it (and its delivery record, if any); its id. */
async function entry(e: Entry): Promise<number> {
  const [id] = await sequelize().query(`INSERT INTO outbox (job_key, queue, name, payload, options, published_at, processed_at, failed_at, created_at)
    VALUES (:key, :queue, 'ticket.mail', '{}', '{}', :published, :processed, :failed, :created)`, {
    replacements: {
      key: randomBytes(8).toString('hex'), queue: e.queue ?? 'mail', created: e.created_at,
      published: e.published_at ?? null, processed: e.processed_at ?? null, failed: e.failed_at ?? null,
    },
    type: QueryTypes.INSERT,
  });
  if (e.delivery) {
    await sequelize().query(`INSERT INTO mail_deliveries (outbox_id, status, attempts, created_at, updated_at) VALUES (:id, :status, 1, :at, :at)`, {
      replacements: { id, status: e.delivery, at: e.created_at },
    });
  }
  return id as number;
}

const kept = async (ids: number[]) => (await sequelize().query<{ id: number }>('SELECT id FROM outbox WHERE id IN (:ids) ORDER BY id', {
  replacements: { ids }, type: QueryTypes.SELECT,
})).map((r) => r.id);
const deliveries = async (ids: number[]) => (await sequelize().query<{ outbox_id: number }>('SELECT outbox_id FROM mail_deliveries WHERE outbox_id IN (:ids) ORDER BY outbox_id', {
  replacements: { ids }, type: QueryTypes.SELECT,
})).map((r) => r.outbox_id);
const mailCount = async () => (await api.get('/api/core/mail')).body.count as number;

it('removes the entries done with past the retention, in every queue, with their delivery records and from the mail log count', async () => {
  expect(schedulerSpec().jobs.filter((j) => j.schedule).map(schedulerIdOf)).toContain(schedulerIdOf(outboxPruneJob));
  const at = nowSec();
  const old = at - 91 * DAY;
  const sent = await entry({ created_at: old, published_at: old, processed_at: old + 5, delivery: 'sent' });
  const failed = await entry({ created_at: old, published_at: old, failed_at: old + 600, delivery: 'failed' });
  const unpublished = await entry({ created_at: old });
  const retrying = await entry({ created_at: old, published_at: at - 60, delivery: 'queued' });
  const recent = await entry({ created_at: at - 89 * DAY, published_at: at - 89 * DAY, processed_at: at - 89 * DAY, delivery: 'sent' });
  const webhookJob = await entry({ queue: 'webhooks', created_at: old, published_at: old, processed_at: old + 1 });
  const all = [sent, failed, unpublished, retrying, recent, webhookJob];
  const before = await mailCount();

  expect(await pruneOutbox(at)).toBeGreaterThanOrEqual(3);
  expect(await kept(all)).toEqual([unpublished, retrying, recent]);
  expect(await deliveries(all)).toEqual([retrying, recent]);
  expect(await mailCount()).toBe(before - 2);
  expectNotFound(await api.get(`/api/core/mail/${sent}`), 'mail');
  expect(expectSuccess(await api.get(`/api/core/mail/${retrying}`))).toMatchObject({ id: retrying, status: 'queued' });
  expect(expectSuccess(await api.get(`/api/core/mail/${unpublished}`))).toMatchObject({ id: unpublished, status: 'queued', published_at: null });
  expect(await pruneOutbox(at)).toBe(0);
});

it('walks one queue’s range of its (queue, created_at) index, and removes nothing with a retention of 0', async () => {
  const [plan] = await sequelize().query<{ type: string; key: string }>(`EXPLAIN DELETE FROM outbox WHERE queue = 'mail' AND created_at < 1
    AND (processed_at IS NOT NULL OR failed_at IS NOT NULL) ORDER BY created_at LIMIT 5000`, { type: QueryTypes.SELECT });
  expect(plan).toMatchObject({ type: 'range', key: 'outbox_queue_created_at' });

  const at = nowSec();
  const done = await entry({ created_at: at - 4000 * DAY, published_at: at - 4000 * DAY, processed_at: at - 4000 * DAY });
  const retention = config().outboxRetentionSeconds;
  config().outboxRetentionSeconds = 0;
  try {
    expect(await pruneOutbox(at)).toBe(0);
    expect(await kept([done])).toEqual([done]);
  } finally {
    config().outboxRetentionSeconds = retention;
  }
  expect(await pruneOutbox(at)).toBe(1);
});
