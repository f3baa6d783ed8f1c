/**
 * An outbox entry written inside a savepoint (the mailbox worker opens tickets in one) is
 * published after the outermost commit, not when the savepoint is released: published earlier,
 * the job ran before its ticket existed for other connections and skipped its mail.
 */
import { OutboxEntry } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { transaction } from '../../src/db/transaction';
import { enqueue, jobIdOf } from '../../src/queue/outbox';
import { ticketMail } from '../../src/ticket/mail/job';
import { useApi } from '../helpers/app';
import { mailQueue } from '../helpers/jobs';
import { waitFor } from '../helpers/smtp';

useApi();
const q = mailQueue();
afterAll(async () => {
  await q.queue.obliterate({ force: true });
  await q.close();
});

it('publishes a savepoint\'s entry only after the outer commit, and never one whose savepoint was rolled back', async () => {
  let kept: OutboxEntry | undefined;
  let dropped: OutboxEntry | undefined;
  await transaction(async (t) => {
    kept = await sequelize().transaction({ transaction: t }, (sp) => enqueue(sp, ticketMail, { kind: 'user_ticket_opened', ticketId: 4294967295 }));
    await sequelize().transaction({ transaction: t }, async (sp) => {
      dropped = await enqueue(sp, ticketMail, { kind: 'user_ticket_opened', ticketId: 4294967294 });
      throw new Error('refused');
    }).catch(() => undefined);
    // The savepoints are released; the outer transaction is still open.
    await new Promise((r) => setTimeout(r, 300));
    expect(await q.job(jobIdOf(kept!))).toBeUndefined();
  });
  await waitFor(async () => (await OutboxEntry.findByPk(kept!.id))?.published_at, 5000, 'the entry to be published');
  expect(await q.job(jobIdOf(kept!))).toBeDefined();
  expect(await q.job(jobIdOf(dropped!))).toBeUndefined();
  expect(await OutboxEntry.findByPk(dropped!.id)).toBeNull();
});
