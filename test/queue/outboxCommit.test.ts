/**
 * When an outbox entry's job reaches BullMQ: only after the outermost COMMIT, whatever savepoints
 * the code that wrote it opened, and never for an entry whose savepoint was rolled back. A job
 * that runs before its entry is visible fails (BullMQ retries it) instead of counting as done.
 */
import { OutboxEntry } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { transaction } from '../../src/db/transaction';
import { QUEUES } from '../../src/queue/names';
import { enqueue, jobIdOf, processOnce, OutboxEntryNotVisibleError } from '../../src/queue/outbox';
import { closeQueues, queue } from '../../src/queue/producer';
import { verificationMail } from '../../src/user/verificationMail';
import { useApi } from '../helpers/app';
import { waitFor } from '../helpers/smtp';

useApi();

const jobOf = (entry: OutboxEntry) => queue(QUEUES.mail).getJob(jobIdOf(entry));

afterAll(async () => {
  await queue(QUEUES.mail).obliterate({ force: true });
  // useApi's own afterAll closed the queues before this one ran: obliterate opened the queue again.
  await closeQueues();
});

it('an entry written in a savepoint is published after the outer COMMIT, not when the savepoint is released', async () => {
  let entry!: OutboxEntry;
  let seenBeforeCommit: unknown = 'not checked';
  await transaction(async (t) => {
    entry = (await sequelize().transaction({ transaction: t }, (savepoint) => enqueue(savepoint, verificationMail, { userId: 2147483647 })))!;
    // The savepoint is released: its own afterCommit hooks have run. Give a publish a chance to land.
    await new Promise((r) => setImmediate(r));
    seenBeforeCommit = await jobOf(entry);
  });
  expect(seenBeforeCommit).toBeUndefined();
  const job = await waitFor(() => jobOf(entry), 10000, 'the job after the commit');
  expect(job.data.outboxId).toBe(entry.id);
  await job.remove();
});

it('an entry whose savepoint was rolled back is never published, though the outer transaction commits', async () => {
  let entry!: OutboxEntry;
  let marker!: OutboxEntry;
  await transaction(async (t) => {
    await sequelize().transaction({ transaction: t }, async (savepoint) => {
      entry = (await enqueue(savepoint, verificationMail, { userId: 2147483646 }))!;
      throw new Error('refused');
    }).catch(() => undefined);
    marker = (await enqueue(t, verificationMail, { userId: 2147483645 }))!;
  });
  // The entry of the outer transaction is published; by then the rolled-back one would have been too.
  await waitFor(() => jobOf(marker), 10000, 'the outer entry published');
  expect(await jobOf(entry)).toBeUndefined();
  expect(await OutboxEntry.findByPk(entry.id)).toBeNull();
  await (await jobOf(marker))?.remove();
});

it('a job whose entry is not visible yet fails without marking anything done, and runs once it is', async () => {
  let ran = 0;
  const work = async () => ++ran;
  let pending!: OutboxEntry;
  const committed = transaction(async (t) => {
    pending = (await enqueue(t, verificationMail, { userId: 2147483644 }))!;
    // Inside the open transaction, another connection cannot see the entry.
    await expect(processOnce(pending.id, work)).rejects.toBeInstanceOf(OutboxEntryNotVisibleError);
  });
  await committed;
  expect(ran).toBe(0);
  expect((await OutboxEntry.findByPk(pending.id))!.processed_at).toBeNull();
  await processOnce(pending.id, work);
  expect(ran).toBe(1);
  expect((await OutboxEntry.findByPk(pending.id))!.processed_at).not.toBeNull();
  // A second delivery of the same job does the work no second time.
  expect(await processOnce(pending.id, work)).toEqual({ skipped: 'already processed' });
  expect(ran).toBe(1);
  await (await jobOf(pending))?.remove();
});
