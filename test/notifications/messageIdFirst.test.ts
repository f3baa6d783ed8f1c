/**
 * A ticket mail's Message-ID is stored before the mail goes out: when storing it fails (the
 * database refuses the row here, through a trigger), the attempt fails before anything reaches
 * the SMTP server, and the retry that stores it sends the mail once. Stored after the send, each
 * failed attempt would have sent the mail again.
 */
import './retryEnv';
import { MailDelivery, MailMessageId } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { jobIdOf } from '../../src/queue/outbox';
import { unique, useApi } from '../helpers/app';
import { mailQueue } from '../helpers/jobs';
import { waitForProgress } from '../helpers/smtp';
import { addMessage, mailEntries, mailsOf, openTicket, settled, useMailWorld } from './support';

useApi(); // the worker's database
const m = useMailWorld();
const trigger = unique('fail_message_id').replace(/[^A-Za-z0-9_]/g, '_');
let jobs: ReturnType<typeof mailQueue>;

beforeAll(() => { jobs = mailQueue(); });
afterAll(() => jobs.close());

it('a Message-ID that cannot be stored fails the attempt before the send; the mail goes out once it can', async () => {
  const { ticket } = await openTicket(m.world, { sendUserEmail: false, sendOperatorsEmail: false });
  await settled(ticket.id);
  const earlier = (await mailEntries(ticket.id)).length;
  // The database refuses this ticket's outgoing Message-IDs until the trigger is dropped.
  await sequelize().query(`CREATE TRIGGER ${trigger} BEFORE INSERT ON mail_message_ids FOR EACH ROW BEGIN
    IF NEW.ticket_id = ${Number(ticket.id)} AND NEW.direction = 'out' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'test: the Message-ID cannot be stored'; END IF; END`);
  const dropTrigger = () => sequelize().query(`DROP TRIGGER IF EXISTS ${trigger}`);

  const reply = await addMessage(ticket, m.world.grouped, { text: 'We are on it.' }).catch(async (err) => { await dropTrigger(); throw err; });
  const entry = await (async () => {
    try {
      const [{ entry: e }] = await waitForProgress(() => mailEntries(ticket.id).then((all) => all.slice(earlier)), (all) => all.length === 1, 'the reply\'s mail entry');
      // Three failed attempts, each where the id is stored: nothing reached the SMTP server.
      const failing = await waitForProgress(async () => {
        const job = await jobs.job(jobIdOf(e));
        return { attempts: job?.attemptsMade ?? 0, reason: job?.failedReason ?? null };
      }, (p) => p.attempts >= 3, 'three failed attempts');
      expect(failing.reason).toContain('test: the Message-ID cannot be stored');
      expect(mailsOf(m.smtp, ticket).map((mail) => mail.parsed.messageId)).toEqual([]);
      return e;
    } finally {
      await dropTrigger();
    }
  })();

  await settled(ticket.id);
  const sent = mailsOf(m.smtp, ticket);
  expect(sent).toHaveLength(1);
  expect(sent[0].parsed.messageId).toMatch(new RegExp(`^<t${ticket.id}\\.m${reply.id}\\.`));
  // Stored once, as the mail carries it; the delivery counts every attempt.
  const stored = await MailMessageId.findAll({ where: { ticket_id: ticket.id, direction: 'out' } });
  expect(stored.map((row) => `<${row.message_id}>`)).toEqual([sent[0].parsed.messageId]);
  const delivery = await MailDelivery.findOne({ where: { outbox_id: entry.id } });
  expect(delivery).toMatchObject({ status: 'sent' });
  expect(delivery!.attempts).toBeGreaterThanOrEqual(4);
});
