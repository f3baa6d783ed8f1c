/**
 * No side effect of an imported mail is lost: a backlog of mails lands in a real dovecot at once,
 * the mailbox worker imports it while the mail worker sends through a real SMTP server, and every
 * sender gets exactly one acknowledgement; replies by mail notify each operator exactly once.
 * (The mailbox imports each mail inside a savepoint: its side effects must wait for the outer
 * COMMIT, and a job that runs before its entry is visible must retry, not count as done.)
 */
import './backlogEnv';
import { rmSync, writeFileSync } from 'node:fs';
import { Op } from 'sequelize';
import { DepartmentEmail, IncomingMail, MailDelivery, OutboxEntry, Ticket, TicketMessage } from '../../src/db/models';
import { mailSpec } from '../../src/wiring';
import { closeTransports } from '../../src/mail/transports';
import { mailboxSpec } from '../../src/wiring';
import { createWorker } from '../../src/queue/runWorker';
import { backgroundProgress } from '../helpers/background';
import { startDovecot, type Dovecot } from '../helpers/dovecot';
import { newEmail, unique, useApi } from '../helpers/app';
import { expectSuccess } from '../helpers/envelope';
import { startSmtp, waitForProgress, type TestSmtp } from '../helpers/smtp';
import { mailWorld, type MailWorld } from '../notifications/support';
import { rawMail } from './support';
import { dropQueuedMail } from '../helpers/jobs';

afterAll(() => dropQueuedMail());
const api = useApi();
const tag = unique('ack').toLowerCase();
const INBOX = `inbox@${tag}.test`;
const PASSWORD = 'secret-ack';
// Six batches of new tickets and two of replies (backlogEnv: 10 mails a batch).
const BACKLOG = 60;
const REPLIES = 20;
// Mails are imported a batch at a time (MAILBOX_BATCH_SIZE), so the count moves in steps: a
// batch on a loaded machine may take longer than the default stall bound.
const BATCH_STALL_MS = 60000;

let dovecot: Dovecot;
let smtp: TestSmtp;
let world: MailWorld;
let workers: Array<Awaited<ReturnType<typeof createWorker>>> = [];

beforeAll(async () => {
  dovecot = await startDovecot([{ user: INBOX, password: PASSWORD }]);
  writeFileSync(process.env.MAILBOX_TLS_CA_FILE!, dovecot.cert);
  smtp = await startSmtp();
  world = await mailWorld(smtp.port);
  // Earlier files' mail must not be the mail worker's first work (dropQueuedMail).
  await dropQueuedMail();
});

afterAll(async () => {
  for (const w of workers) await w.close();
  workers = [];
  await dovecot?.stop();
  closeTransports();
  await smtp?.close();
  rmSync(process.env.MAILBOX_TLS_CA_FILE!, { force: true });
});

const lastOutboxId = async () => Number((await OutboxEntry.max('id')) ?? 0);

/** Waits until every ticket mail queued after `afterId` was processed or failed for good; returns them. */
async function settledMails(afterId: number, expected: number): Promise<OutboxEntry[]> {
  const rows = () => OutboxEntry.findAll({ where: { id: { [Op.gt]: afterId }, name: 'ticket.mail' } });
  await waitForProgress(async () => {
    const all = await rows();
    return { queued: all.length, settled: all.filter((r) => r.processed_at || r.failed_at).length };
  }, (n) => n.queued >= expected && n.settled === n.queued, `${expected} ticket mails to settle`);
  return rows();
}

let mailboxId = 0;
const ledger = (decision: string) => IncomingMail.count({ where: { department_email_id: mailboxId, decision } });
/**
 * The mails imported with `decision`, and what shows a batch under way or a poll made, failed or
 * retried (the mailbox's poll state, the worker's queued jobs and outbox entries): progress for
 * the waits below, and the cause shown when one stalls.
 */
const importing = (decision: string) => async () => {
  const mailbox = await DepartmentEmail.findByPk(mailboxId, { attributes: ['last_polled_at', 'poll_failures', 'last_error', 'next_poll_at'] });
  return { imported: await ledger(decision), mailbox: mailbox?.get(), background: await backgroundProgress() };
};

it(`a backlog of ${BACKLOG} mails: every sender gets exactly one acknowledgement, and replies by mail notify each operator once`, async () => {
  const senders = Array.from({ length: BACKLOG }, () => newEmail('ack'));
  await dovecot.appendAll(INBOX, await Promise.all(senders.map((from, i) => rawMail({ from, to: INBOX, subject: `Backlog ${i} ${tag}` }))));
  const before = await lastOutboxId();

  mailboxId = expectSuccess(await api.post(`/api/ticket/department/${world.department.id}/email`, {
    address: INBOX, type: 1, protocol: 'imap', server: '127.0.0.1', port: dovecot.ports.imap, encryption: 'none', username: INBOX, password: PASSWORD,
  }), 'Successfully created new department email!').id;
  workers = [await createWorker(mailSpec()), await createWorker(mailboxSpec())];

  await waitForProgress(importing('new_ticket'), (n) => n.imported === BACKLOG, `${BACKLOG} mails imported`, BATCH_STALL_MS);
  // One acknowledgement per ticket, and one "ticket opened" per active operator of the department.
  const opened = await settledMails(before, BACKLOG * 3);
  expect(opened.filter((r) => r.failed_at)).toEqual([]);
  const skipped = await MailDelivery.count({ where: { outbox_id: { [Op.in]: opened.map((r) => r.id) }, status: { [Op.ne]: 'sent' } } });
  expect(skipped).toBe(0);
  const acknowledged = senders.map((s) => smtp.mailsTo(s).length);
  expect(acknowledged.filter((n) => n !== 1)).toEqual([]);
  for (const op of [world.direct, world.grouped]) expect(smtp.mailsTo(op.email).length).toBe(BACKLOG);

  // Replies to the acknowledgements, threaded by their headers, arriving at once.
  const replying = senders.slice(0, REPLIES);
  const beforeReplies = await lastOutboxId();
  const directBefore = smtp.mailsTo(world.direct.email).length;
  await dovecot.appendAll(INBOX, await Promise.all(replying.map((from) => {
    const ack = smtp.mailsTo(from)[0]!.parsed;
    return rawMail({ from, to: INBOX, subject: 'Re: any news?', inReplyTo: ack.messageId, references: [ack.messageId!], text: `Still waiting, ${from}` });
  })));
  await waitForProgress(importing('reply'), (n) => n.imported === REPLIES, `${REPLIES} replies imported`, BATCH_STALL_MS);
  const notified = await settledMails(beforeReplies, REPLIES * 2);
  expect(notified.filter((r) => r.failed_at)).toEqual([]);

  const replies = await TicketMessage.findAll({ where: { id: { [Op.in]: (await IncomingMail.findAll({ where: { department_email_id: mailboxId, decision: 'reply' } })).map((l) => l.ticket_message_id!) } } });
  expect(replies).toHaveLength(REPLIES);
  const tickets = new Map((await Ticket.findAll({ where: { id: { [Op.in]: replies.map((m) => m.ticket_id) } } })).map((t) => [t.id, t]));
  for (const op of [world.direct, world.grouped]) {
    const mails = smtp.mailsTo(op.email);
    for (const reply of replies) {
      const about = mails.filter((m) => m.parsed.messageId?.startsWith(`<t${reply.ticket_id}.m${reply.id}.`));
      expect({ ticket: tickets.get(reply.ticket_id)!.number, operator: op.email, mails: about.length }).toEqual({ ticket: tickets.get(reply.ticket_id)!.number, operator: op.email, mails: 1 });
    }
  }
  expect(smtp.mailsTo(world.direct.email).length - directBefore).toBe(REPLIES);
  // Nothing more went back to the customers: a user's reply tells the operators only.
  expect(replying.map((s) => smtp.mailsTo(s).length).filter((n) => n !== 1)).toEqual([]);
}, 600_000);
