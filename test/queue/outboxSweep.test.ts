/**
 * What the outbox sweep reaches when other entries are stuck: entries whose jobs wait in a queue no
 * worker serves (they stay unprocessed, so every sweep finds them again) take turns with a job that
 * was lost, and a queue whose add fails holds back no other queue's entries.
 */
import { OutboxEntry } from '../../src/db/models';
import { now } from '../../src/db/entity';
import { QUEUES, type QueueName } from '../../src/queue/names';
import { jobIdOf, publish, sweepOutbox } from '../../src/queue/outbox';
import { queue } from '../../src/queue/producer';
import { useApi } from '../helpers/app';

const written: OutboxEntry[] = [];
// Declared before useApi's hooks: after-all hooks run in their order, and useApi's closes the database.
afterAll(async () => {
  // Nothing of this file stays a candidate for the sweeps of later files on this database.
  await OutboxEntry.destroy({ where: { id: written.map((e) => e.id) } });
  await queue(QUEUES.webhooks).obliterate({ force: true });
  await queue(QUEUES.mail).obliterate({ force: true });
});
useApi();

/** An entry as `enqueue` writes it, with the given publish state and options. */
async function entry(q: QueueName, publishedAt: number | null, options: object = {}): Promise<OutboxEntry> {
  const e = await OutboxEntry.create({
    job_key: Math.random().toString(16).slice(2, 18).padEnd(16, '0'), queue: q, name: 'user.verification',
    payload: JSON.stringify({ userId: 2147483600 + written.length }), options: JSON.stringify(options),
    published_at: publishedAt, created_at: now() - 3600,
  });
  written.push(e);
  return e;
}
const jobOf = (e: OutboxEntry) => queue(e.queue as QueueName).getJob(jobIdOf(e));

it('re-adds a lost job although more waiting entries than a sweep takes were published before it', async () => {
  // Seven entries published long ago whose jobs wait in a queue no worker serves: unprocessed at
  // every sweep. Their published_at (1 to 7) puts them before every other entry of this database.
  for (let i = 1; i <= 7; i++) await entry(QUEUES.webhooks, i);
  // A mail whose job died with Redis: published after them, never processed, no job.
  const lost = await entry(QUEUES.mail, 100);
  expect(await jobOf(lost)).toBeUndefined();

  // Three a sweep: the seven waiting entries take two sweeps and part of a third, then the lost one.
  const sweeps: boolean[] = [];
  for (let i = 0; i < 3; i++) {
    await sweepOutbox(0, 0, 3);
    sweeps.push((await jobOf(lost)) !== undefined);
  }
  expect(sweeps).toEqual([false, false, true]);
  expect((await lost.reload()).published_at).toBeGreaterThan(100);
});

it('publishes the entries of one queue when another queue refuses its add', async () => {
  // A job BullMQ refuses to add (over its size limit), written first, in another queue.
  const refused = await entry(QUEUES.webhooks, null, { sizeLimit: 1 });
  const mail = await entry(QUEUES.mail, null);
  expect(await publish([refused, mail])).toBe(1);
  expect((await jobOf(mail))?.data.outboxId).toBe(mail.id);
  expect((await mail.reload()).published_at).not.toBeNull();
  expect(await jobOf(refused)).toBeUndefined();
  expect((await refused.reload()).published_at).toBeNull();
});

it('publishes more entries than one add takes, in pieces, and marks every one', async () => {
  const many: OutboxEntry[] = [];
  for (let i = 0; i < 230; i++) many.push(await entry(QUEUES.mail, null));
  expect(await publish(many)).toBe(230);
  for (const e of [many[0], many[99], many[100], many[229]]) expect((await jobOf(e))?.data.outboxId).toBe(e.id);
  expect(await OutboxEntry.count({ where: { id: many.map((e) => e.id), published_at: null } })).toBe(0);
});
