/**
 * A mail job whose workers stopped while sending it more often than BullMQ allows is failed by
 * BullMQ without running again: its delivery record says why (failed, with `mail.failed`), where
 * it had no reason and no event told integrators of it, and nothing reaches the SMTP server. The job is
 * marked as stalled too often before a worker takes it (test/helpers/jobs.ts).
 */
import { DomainEvent } from '../../src/db/models';
import { closeTransports } from '../../src/mail/transports';
import { jobIdOf } from '../../src/queue/outbox';
import { createWorker } from '../../src/queue/runWorker';
import { mailSpec } from '../../src/wiring';
import { useApi } from '../helpers/app';
import { expectSuccess } from '../helpers/envelope';
import { dropQueuedMail, mailQueue } from '../helpers/jobs';
import { startSmtp, waitForProgress, type TestSmtp } from '../helpers/smtp';
import { mailEntries, mailWorld, openTicket, type MailWorld } from '../notifications/support';

const api = useApi();
let smtp: TestSmtp;
let world: MailWorld;
let jobs: ReturnType<typeof mailQueue>;
let worker: Awaited<ReturnType<typeof createWorker>> | undefined;
beforeAll(async () => {
  smtp = await startSmtp();
  world = await mailWorld(smtp.port);
  jobs = mailQueue();
});
afterAll(async () => {
  await worker?.close();
  closeTransports();
  await jobs.close();
  await smtp.close();
});

it('is recorded as failed, with mail.failed, and is not sent', async () => {
  // This file's worker must take the stalled job, not spend its five slots on older jobs first.
  await dropQueuedMail();
  const { ticket } = await openTicket(world, { sendUserEmail: false, sendOperatorsEmail: false });
  expectSuccess(await api.post('/api/ticket/forward', {
    ticket_id: ticket.id, user_id: world.direct.id, text: 'Please have a look.', subject: 'Fwd', to_address: ['vendor@example.com'],
  }), 'Successfully created new message!');
  const [{ entry }] = await mailEntries(ticket.id);
  await jobs.stallBeyondLimit(jobIdOf(entry));
  worker = await createWorker(mailSpec());

  const record = await waitForProgress(async () => expectSuccess(await api.get(`/api/core/mail/${entry.id}`)),
    (d) => d.status !== 'queued', 'the forward to be recorded');
  expect(record).toMatchObject({ status: 'failed', error: 'Not sent: job stalled more than allowable limit.' });
  const events = (await DomainEvent.findAll({ where: { name: 'mail.failed' } })).filter((e) => JSON.parse(e.payload).outboxId === entry.id);
  expect(events).toHaveLength(1);
  expect(smtp.mailsTo('vendor@example.com')).toHaveLength(0);
});
