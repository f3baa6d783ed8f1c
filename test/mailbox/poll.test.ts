/**
 * The mailbox worker against a real dovecot (test/helpers/dovecot.ts): IMAP with no encryption,
 * STARTTLS and implicit TLS, POP3 likewise; only new mail fetched, flagged or deleted after; a
 * UIDVALIDITY reset; a wrong password beside a good mailbox; mailboxes added through the API
 * picked up by the running worker; and a whole conversation with a real SMTP server: the
 * notification's threading headers, a reply by them, and a customer's auto-responder that gets
 * no answer. (Killing the compiled worker mid-poll: test/ecosystem/processes.test.ts.)
 */
import './mailboxEnv';
import { rmSync, writeFileSync } from 'node:fs';
import { DepartmentEmail, DomainEvent, IncomingMail, Ticket } from '../../src/db/models';
import { mailSpec } from '../../src/wiring';
import { closeTransports } from '../../src/mail/transports';
import { mailboxSpec } from '../../src/wiring';
import { pollMailbox } from '../../src/mailbox/poll';
import { resetTlsOptions } from '../../src/mailbox/pollSummary';
import { createWorker } from '../../src/queue/runWorker';
import { overNotificationCap } from '../../src/ticket/mail/notificationCap';
import { startDovecot, type Dovecot } from '../helpers/dovecot';
import { newEmail, nowSec, unique, useApi } from '../helpers/app';
import { expectSuccess } from '../helpers/envelope';
import { startSmtp, waitFor, type TestSmtp } from '../helpers/smtp';
import { mailWorld, mailsOf, openTicket, settled, type MailWorld } from '../notifications/support';
import { transaction } from '../../src/db/transaction';
import { enqueue } from '../../src/queue/outbox';
import { ticketMail } from '../../src/ticket/mail/job';
import { messagesOf, rawMail } from './support';
import { dropQueuedMail } from '../helpers/jobs';

// Before useApi: jest runs afterAll hooks in the order they were added, and useApi's closes the database.
afterAll(() => dropQueuedMail());
const api = useApi();
const tag = unique('mb').toLowerCase();
const PASSWORD = 'secret-1';
/** A mailbox user of the test dovecot, which is also a department address. */
const user = (name: string) => `${name}@${tag}.test`;
const USERS = ['imap-none', 'imap-tls', 'imap-ssl', 'imap-del', 'imap-reset', 'imap-first', 'imap-moved', 'pop-none', 'pop-tls', 'pop-ssl', 'pop-del', 'good', 'bad', 'later', 'talk'];

let dovecot: Dovecot;
let smtp: TestSmtp;
let world: MailWorld;

beforeAll(async () => {
  dovecot = await startDovecot(USERS.map((u) => ({ user: user(u), password: PASSWORD })));
  writeFileSync(process.env.MAILBOX_TLS_CA_FILE!, dovecot.cert);
  resetTlsOptions();
  smtp = await startSmtp();
  world = await mailWorld(smtp.port);
});

afterAll(async () => {
  await dovecot?.stop();
  closeTransports();
  await smtp?.close();
  rmSync(process.env.MAILBOX_TLS_CA_FILE!, { force: true });
});

type Protocol = 'imap' | 'pop3';
type Encryption = 'none' | 'tls' | 'ssl';

/** A remote mailbox of the department, created through the API as an integrator would. */
async function remoteMailbox(name: string, protocol: Protocol, encryption: Encryption, extra: Record<string, unknown> = {}): Promise<DepartmentEmail> {
  const port = protocol === 'imap' ? (encryption === 'ssl' ? dovecot.ports.imaps : dovecot.ports.imap) : (encryption === 'ssl' ? dovecot.ports.pop3s : dovecot.ports.pop3);
  const created = expectSuccess(await api.post(`/api/ticket/department/${world.department.id}/email`, {
    address: user(name), type: 1, protocol, server: '127.0.0.1', port, encryption, username: user(name), password: PASSWORD, ...extra,
  }), 'Successfully created new department email!');
  return (await DepartmentEmail.findByPk(created.id))!;
}

const mailTo = (name: string, from = newEmail('cust'), extra: Partial<Parameters<typeof rawMail>[0]> = {}) =>
  rawMail({ from, to: user(name), ...extra });

const ticketsOf = async (mailboxId: number) =>
  (await IncomingMail.findAll({ where: { department_email_id: mailboxId, decision: 'new_ticket' } })).map((l) => l.ticket_id);

describe('an IMAP mailbox', () => {
  it.each([['none'], ['tls'], ['ssl']] as Array<[Encryption]>)('with encryption %s: only new mail is fetched, each imported once and flagged seen', async (encryption) => {
    const name = `imap-${encryption}`;
    const mailbox = await remoteMailbox(name, 'imap', encryption);
    const first = await dovecot.append(user(name), await mailTo(name));
    const second = await dovecot.append(user(name), await mailTo(name));
    expect(await pollMailbox(mailbox.id)).toEqual({ fetched: 2, decisions: { new_ticket: 2 } });
    expect((await dovecot.messages(user(name))).map((m) => m.flags.includes('\\Seen'))).toEqual([true, true]);
    await mailbox.reload();
    expect(mailbox).toMatchObject({ imap_uidvalidity: first.uidValidity, imap_last_uid: second.uid, last_error: null, poll_failures: 0 });
    expect(mailbox.last_polled_at).toBeGreaterThanOrEqual(nowSec() - 5);

    await dovecot.append(user(name), await mailTo(name));
    expect(await pollMailbox(mailbox.id)).toEqual({ fetched: 1, decisions: { new_ticket: 1 } });
    expect(await pollMailbox(mailbox.id)).toEqual({ fetched: 0, decisions: {} });
    expect(new Set(await ticketsOf(mailbox.id)).size).toBe(3);
    // What an operator sees of it over the API.
    const shown = expectSuccess(await api.get(`/api/ticket/department/${world.department.id}/email/${mailbox.id}`));
    expect(shown).toMatchObject({ protocol: 0, encryption: ['none', 'ssl', 'tls'].indexOf(encryption), last_error: null, poll_failures: 0, password: '********' });
  });

  it('with delete_downloaded deletes what it imported, also what an interrupted poll left behind', async () => {
    const mailbox = await remoteMailbox('imap-del', 'imap', 'none', { delete_downloaded: 1 });
    await dovecot.append(user('imap-del'), await mailTo('imap-del'));
    await dovecot.append(user('imap-del'), await mailTo('imap-del'));
    expect(await pollMailbox(mailbox.id)).toEqual({ fetched: 2, decisions: { new_ticket: 2 } });
    expect(await dovecot.messages(user('imap-del'))).toEqual([]);
    // A mail imported (its ledger line written, the cursor moved past it) but still there, as after
    // a crash before the delete: here imported by a poll with delete_downloaded off.
    await DepartmentEmail.update({ delete_downloaded: 0 }, { where: { id: mailbox.id } });
    await dovecot.append(user('imap-del'), await mailTo('imap-del'));
    expect(await pollMailbox(mailbox.id)).toEqual({ fetched: 1, decisions: { new_ticket: 1 } });
    expect(await dovecot.messages(user('imap-del'))).toHaveLength(1);
    await DepartmentEmail.update({ delete_downloaded: 1 }, { where: { id: mailbox.id } });
    expect(await pollMailbox(mailbox.id)).toEqual({ fetched: 0, decisions: {} });
    expect(await dovecot.messages(user('imap-del'))).toEqual([]);
    expect((await mailbox.reload()).imap_swept_uid).toBe(3);
    // One at or below the cursor that the ledger knows nothing of (the cursor moved by hand) is
    // not known to be imported: it stays.
    const unknown = await dovecot.append(user('imap-del'), await mailTo('imap-del'));
    await DepartmentEmail.update({ imap_last_uid: unknown.uid }, { where: { id: mailbox.id } });
    expect(await pollMailbox(mailbox.id)).toEqual({ fetched: 0, decisions: {} });
    expect((await dovecot.messages(user('imap-del'))).map((msg) => msg.uid)).toEqual([unknown.uid]);
  });

  it('after a UIDVALIDITY reset reads the mailbox again and imports nothing twice', async () => {
    const mailbox = await remoteMailbox('imap-reset', 'imap', 'none');
    await dovecot.append(user('imap-reset'), await mailTo('imap-reset'));
    await dovecot.append(user('imap-reset'), await mailTo('imap-reset'));
    await pollMailbox(mailbox.id);
    const tickets = await ticketsOf(mailbox.id);
    await dovecot.setUidValidity(user('imap-reset'), 12345);
    expect(await pollMailbox(mailbox.id)).toEqual({ fetched: 2, decisions: { duplicate: 2 } });
    expect(await ticketsOf(mailbox.id)).toEqual(tickets);
    expect((await mailbox.reload()).imap_uidvalidity).toBe('12345');
  });
});

describe('the first poll of an IMAP mailbox', () => {
  /** Appends mails with these subjects to the user's INBOX, those marked `read` flagged \Seen (read in a mail client). */
  const deliver = async (name: string, mails: Array<[string, 'read' | 'unread']>) => {
    for (const [subject, state] of mails) await dovecot.append(user(name), await mailTo(name, newEmail('first'), { subject }), { flags: state === 'read' ? ['\\Seen'] : [] });
  };
  const subjects = async (mailboxId: number) => (await IncomingMail.findAll({ where: { department_email_id: mailboxId }, order: [['id', 'ASC']] })).map((l) => l.subject);

  it('imports only the mails not read yet; a later mail is imported read or not', async () => {
    // Mail read long before the help desk took the mailbox over, among two unread ones.
    await deliver('imap-first', [['Old 1', 'read'], ['Unread 2', 'unread'], ['Old 3', 'read'], ['Old 4', 'read'], ['Unread 5', 'unread'], ['Old 6', 'read']]);
    const mailbox = await remoteMailbox('imap-first', 'imap', 'none');
    expect(await pollMailbox(mailbox.id)).toEqual({ fetched: 2, decisions: { new_ticket: 2 } });
    expect(await subjects(mailbox.id)).toEqual(['Unread 2', 'Unread 5']);
    expect(await mailbox.reload()).toMatchObject({ imap_last_uid: 6, imap_first_poll_uid: 6 });
    expect((await dovecot.messages(user('imap-first'))).every((m) => m.flags.includes('\\Seen'))).toBe(true);

    // A first poll that died after its first mail goes on without the read ones either.
    await DepartmentEmail.update({ imap_last_uid: 2 }, { where: { id: mailbox.id } });
    expect(await pollMailbox(mailbox.id)).toEqual({ fetched: 0, decisions: {} });
    expect((await mailbox.reload()).imap_last_uid).toBe(6);

    // Later mail is new to the help desk, even read already in a mail client.
    await deliver('imap-first', [['Later 7', 'read'], ['Later 8', 'unread']]);
    expect(await pollMailbox(mailbox.id)).toEqual({ fetched: 2, decisions: { new_ticket: 2 } });
    expect(await subjects(mailbox.id)).toEqual(['Unread 2', 'Unread 5', 'Later 7', 'Later 8']);
  });

  it('moved to another account, the first poll of the new one leaves its read mails alone too', async () => {
    const mailbox = await remoteMailbox('imap-moved', 'imap', 'none');
    expect(await pollMailbox(mailbox.id)).toEqual({ fetched: 0, decisions: {} });
    await deliver('imap-first', [['Other old', 'read'], ['Other unread', 'unread']]);
    expectSuccess(await api.put(`/api/ticket/department/${world.department.id}/email/${mailbox.id}`, { username: user('imap-first') }), 'Successfully updated the department email!');
    expect(await pollMailbox(mailbox.id)).toEqual({ fetched: 1, decisions: { new_ticket: 1 } });
    expect(await subjects(mailbox.id)).toEqual(['Other unread']);
  });
});

describe('a POP3 mailbox', () => {
  it.each([['none'], ['tls'], ['ssl']] as Array<[Encryption]>)('with encryption %s: each mail imported once by its UIDL', async (encryption) => {
    const name = `pop-${encryption}`;
    const mailbox = await remoteMailbox(name, 'pop3', encryption);
    // 8-bit text arrives intact: POP3 hands over bytes, not text.
    const raw = Buffer.concat([
      Buffer.from(`From: ${newEmail('latin')}\r\nTo: ${user(name)}\r\nSubject: Caf\xe9\r\nMessage-ID: <${unique('p')}@x.test>\r\nContent-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: 8bit\r\n\r\n`, 'latin1'),
      Buffer.from('Le caf\xe9 est froid.\r\n.\r\nFin.\r\n', 'latin1'),
    ]);
    await dovecot.append(user(name), raw);
    await dovecot.append(user(name), await mailTo(name));
    expect(await pollMailbox(mailbox.id)).toEqual({ fetched: 2, decisions: { new_ticket: 2 } });
    expect(await pollMailbox(mailbox.id)).toEqual({ fetched: 0, decisions: {} });
    const [ticketId] = await ticketsOf(mailbox.id);
    const [message] = await messagesOf(ticketId!);
    expect(message.text).toBe('Le café est froid.\n.\nFin.');
    expect(await dovecot.messages(user(name))).toHaveLength(2);
  });

  it('with delete_downloaded deletes what it imported', async () => {
    const mailbox = await remoteMailbox('pop-del', 'pop3', 'none', { delete_downloaded: 1 });
    await dovecot.append(user('pop-del'), await mailTo('pop-del'));
    expect(await pollMailbox(mailbox.id)).toEqual({ fetched: 1, decisions: { new_ticket: 1 } });
    expect(await dovecot.messages(user('pop-del'))).toEqual([]);
  });
});

describe('the worker', () => {
  it('polls every mailbox on its schedule: a wrong password is recorded and backed off, the good mailbox beside it goes on, a new one is picked up', async () => {
    // The worker polls this test's mailboxes alone. The earlier tests' are due at every round (a
    // poll that succeeds schedules none: the next round polls again), so they kept the worker's
    // four slots busy, the queue's counts steady (no progress to see), and on a loaded machine the
    // mailbox added below waited its turn past the 15 s the wait allows.
    await DepartmentEmail.update({ next_poll_at: nowSec() + 86400 }, { where: {} });
    const worker = await createWorker(mailboxSpec());
    try {
      const good = await remoteMailbox('good', 'imap', 'none');
      const bad = await remoteMailbox('bad', 'imap', 'tls', { password: 'wrong' });
      const cursor = (await DomainEvent.max('id') as number | null) ?? 0;
      await dovecot.append(user('good'), await mailTo('good'));
      await waitFor(async () => (await ticketsOf(good.id)).length === 1, 15000, 'the good mailbox to be imported');
      await waitFor(async () => (await bad.reload()).poll_failures >= 1, 15000, 'the bad mailbox to fail');
      expect(bad.last_error).toMatch(/^Login refused by the server/);
      expect(bad.next_poll_at).toBeGreaterThan(bad.last_error_at!);
      expect(bad.password).not.toContain('wrong');
      const events = await DomainEvent.findAll({ where: { name: 'mailbox.error' } });
      expect(events.filter((e) => e.id > cursor).map((e) => JSON.parse(e.payload as unknown as string))).toContainEqual({ departmentEmailId: bad.id });

      // Added while the worker runs: polled at its next round.
      const later = await remoteMailbox('later', 'pop3', 'ssl');
      await dovecot.append(user('later'), await mailTo('later'));
      await waitFor(async () => (await ticketsOf(later.id)).length === 1, 15000, 'the new mailbox to be polled');
      await dovecot.append(user('good'), await mailTo('good'));
      await waitFor(async () => (await ticketsOf(good.id)).length === 2, 15000, 'the good mailbox to go on');

      // The right password: tried at once, and the error is gone.
      expectSuccess(await api.put(`/api/ticket/department/${world.department.id}/email/${bad.id}`, { password: PASSWORD }), 'Successfully updated the department email!');
      await waitFor(async () => (await bad.reload()).last_error === null && bad.poll_failures === 0 && bad.last_polled_at! > 0, 15000, 'the fixed mailbox to be polled');
    } finally {
      await worker.close();
    }
  });
});

describe('a conversation by mail', () => {
  it('threads the reply to a notification, and never answers an auto-responder', async () => {
    const mailer = await createWorker(mailSpec());
    try {
      const mailbox = await remoteMailbox('talk', 'imap', 'none');
      const customer = newEmail('talker');
      await dovecot.append(user('talk'), await mailTo('talk', customer, { subject: 'My order is late' }));
      await pollMailbox(mailbox.id);
      const [ticketId] = await ticketsOf(mailbox.id);
      const ticket = (await Ticket.findByPk(ticketId!))!;

      // The acknowledgement: an automatic reply to the customer's mail, threaded on it, answerable by sub-address.
      const ack = await waitFor(() => smtp.mailsTo(customer)[0], 15000, 'the acknowledgement');
      const headers = ack.parsed.headers;
      expect(headers.get('auto-submitted')).toBe('auto-replied');
      expect(headers.get('x-loop')).toBe(user('talk'));
      expect(ack.parsed.subject).toContain(`[#${ticket.number}]`);
      expect(ack.parsed.replyTo?.value[0].address).toMatch(new RegExp(`^talk\\+t${ticket.id}-[0-9a-f]{10}@`));
      const incomingId = (await IncomingMail.findOne({ where: { ticket_id: ticket.id } }))!.message_id;
      expect(ack.parsed.inReplyTo).toBe(`<${incomingId}>`);

      // The customer answers it (headers only: a new subject); then their auto-responder answers it too.
      await dovecot.append(user('talk'), await rawMail({ from: customer, to: user('talk'), subject: 'about that', inReplyTo: ack.parsed.messageId, references: [ack.parsed.messageId!], text: 'Any news?\n\n> quoted ack' }));
      await dovecot.append(user('talk'), await rawMail({ from: customer, to: ack.parsed.replyTo!.value[0].address!, subject: 'Out of office', headers: { 'Auto-Submitted': 'auto-replied' }, text: 'I am away.' }));
      expect(await pollMailbox(mailbox.id)).toEqual({ fetched: 2, decisions: { reply: 2 } });
      expect((await messagesOf(ticket.id)).map((m) => m.text)).toEqual(['Hello, my printer is broken.', 'Any news?', 'I am away.']);
      // The customer's reply told the operators; nothing at all went back to the customer (once
      // every mail of the ticket has been handled).
      await settled(ticket.id);
      expect(smtp.mailsTo(customer)).toHaveLength(1);
    } finally {
      await mailer.close();
    }
  });

  it('sends a user at most MAIL_NOTIFY_CAP (3) automatic mails about a ticket, and operators all of theirs', async () => {
    const mailer = await createWorker(mailSpec());
    try {
      const { ticket, user: owner } = await openTicket(world, { emitEvent: false });
      await transaction(async (t) => {
        for (let i = 0; i < 5; i++) {
          await enqueue(t, ticketMail, { kind: 'user_ticket_autoclose', ticketId: ticket.id });
          await enqueue(t, ticketMail, { kind: 'operator_assigned', ticketId: ticket.id, recipientId: world.direct.id });
        }
      });
      await settled(ticket.id);
      const to = (address: string) => mailsOf(smtp, ticket).filter((m) => m.envelopeTo.includes(address));
      expect(to(owner.email)).toHaveLength(3);
      expect(to(world.direct.email)).toHaveLength(5);
    } finally {
      await mailer.close();
    }
  });

  it('caps automatic mails to one address about one ticket (MAIL_NOTIFY_CAP=3)', async () => {
    const ticketId = 900000 + Math.floor(Math.random() * 99999);
    const address = newEmail('capped');
    const rounds = [];
    for (let i = 0; i < 5; i++) rounds.push([...(await overNotificationCap(ticketId, [address, 'other@x.test']))]);
    expect(rounds).toEqual([[], [], [], [address, 'other@x.test'], [address, 'other@x.test']]);
    expect([...(await overNotificationCap(ticketId + 1, [address]))]).toEqual([]);
  });
});
