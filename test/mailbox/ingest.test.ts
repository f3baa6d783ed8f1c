/**
 * The ingestion rules of the mailbox worker (src/mailbox/ingest.ts), mail by mail, on the real
 * database: new tickets, threading by headers, sub-address and subject, duplicates (also in
 * parallel), loops, auto-replies, bounces, spam, refused files, locked and merged tickets, the
 * dry run and the ledger over the API. The IMAP and POP3 transport is tested in mailbox-poll.
 */
import './mailboxEnv';
import { Op } from 'sequelize';
import {
  Department, DepartmentEmail, DomainEvent, IncomingMail, MailDelivery, MailMessageId, OutboxEntry, Setting, SpamRule, Ticket, TicketAttachment, User,
} from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { transaction } from '../../src/db/transaction';
import * as m044 from '../../migrations/044_incoming_mail_import_key';
import { emit } from '../../src/events';
import { ingestMail } from '../../src/mailbox/ingest';
import { replyAddress } from '../../src/ticket/mail/replyAddress';
import { newEmail, nowSec, unique, useApi } from '../helpers/app';
import { expectError, expectList, expectSuccess } from '../helpers/envelope';
import { mailWorld, operator, type MailWorld } from '../notifications/support';
import { messagesOf, rawMail, ticketMailsOf } from './support';
import { dropQueuedMail } from '../helpers/jobs';

// Before useApi: jest runs afterAll hooks in the order they were added, and useApi's closes the database.
afterAll(() => dropQueuedMail());
const api = useApi();
let world: MailWorld;
let mailbox: DepartmentEmail;

beforeAll(async () => {
  world = await mailWorld(9);
  mailbox = world.address;
});

const ingest = (raw: Buffer, source: DepartmentEmail | null = mailbox) => ingestMail(raw, { departmentEmail: source, remoteUid: unique('uid') });

/** A customer's first mail to the department: the ticket it opened. */
async function opened(from = newEmail('cust'), extra: Partial<Parameters<typeof rawMail>[0]> = {}) {
  const raw = await rawMail({ from: `Ada Lovelace <${from}>`, to: mailbox.address, ...extra });
  const result = await ingest(raw);
  expect(result.decision).toBe('new_ticket');
  return { result, ticket: (await Ticket.findByPk(result.ticketId!))!, from, raw };
}

/** A ticket opened by mail, and the acknowledgement we sent its user: its outbox entry, delivery record and Message-ID. */
async function ticketWithSentMail() {
  const { ticket, from } = await opened();
  const sentId = `t${ticket.id}.r${unique('z')}@support.test`;
  const entry = await OutboxEntry.create({ queue: 'mail', name: 'ticket.mail', payload: JSON.stringify({ kind: 'user_ticket_opened', ticketId: ticket.id }), job_key: unique('k').slice(0, 16), created_at: nowSec(), processed_at: nowSec() });
  await MailDelivery.create({ outbox_id: entry.id, status: 'sent', message_id: `<${sentId}>`, attempts: 1, sent_at: nowSec() });
  await MailMessageId.create({ message_id: sentId, ticket_id: ticket.id, direction: 'out', created_at: nowSec() });
  return { ticket, from, sentId, entry };
}

describe('a new mail', () => {
  it('opens a ticket in the department of its address, for a user of the brand created from its sender, with its CC and files', async () => {
    const from = newEmail('new');
    const cc = newEmail('cc');
    const raw = await rawMail({
      from: `Ada Lovelace <${from}>`, to: [mailbox.address], cc: [cc, world.address.address], subject: 'Printer on fire',
      text: 'It smokes.\n\nOn Mon, 1 Jan 2026, Bob <bob@x.test> wrote:\n> earlier text\n> more',
      attachments: [{ filename: 'photo.png', content: Buffer.from([137, 80, 78, 71, 1, 2, 3]) }, { filename: 'tool.exe', content: 'MZ' }],
    });
    const result = await ingest(raw);
    expect(result).toMatchObject({ decision: 'new_ticket', from, subject: 'Printer on fire' });
    expect(result.reason).toContain('files refused: tool.exe');
    const ticket = (await Ticket.findByPk(result.ticketId!))!;
    expect(ticket).toMatchObject({ department_id: world.department.id, department_email_id: mailbox.id, brand_id: world.brand.id, subject: 'Printer on fire' });
    expect(JSON.parse(ticket.cc!)).toEqual([cc]);
    const user = (await User.findByPk(ticket.user_id))!;
    expect(user).toMatchObject({ type: 'user', email: from, brand_id: world.brand.id, firstname: 'Ada', lastname: 'Lovelace' });
    const [message] = await messagesOf(ticket.id);
    expect(message.text).toBe('It smokes.');
    expect(message.id).toBe(result.messageId);
    const files = await TicketAttachment.findAll({ where: { ticket_id: ticket.id } });
    expect(files.map((f) => f.original_name)).toEqual(['photo.png']);
    // Its Message-ID threads later mails; the ledger has its line; the user is told about the file refused.
    expect(await MailMessageId.findOne({ where: { ticket_id: ticket.id, direction: 'in' } })).not.toBeNull();
    const line = (await IncomingMail.findByPk(result.ledgerId!))!;
    expect(line).toMatchObject({ decision: 'new_ticket', ticket_id: ticket.id, ticket_message_id: message.id, department_email_id: mailbox.id, size: raw.length });
    const kinds = (await ticketMailsOf(ticket.id)).map((p) => p.kind);
    expect(kinds).toContain('user_ticket_opened');
    expect(kinds).toContain('user_email_attachmentrejected');
    expect((await ticketMailsOf(ticket.id)).find((p) => p.kind === 'user_email_attachmentrejected')!.address).toBe(from);
  });

  it('keeps its files\' names recognisable: a path\'s last part, other slashes as _, a long name shortened with its extension', async () => {
    const png = (i: number) => Buffer.from([137, 80, 78, 71, 13, 10, i]);
    const long = `Quarterly_financial_report_${'x'.repeat(300)}.png`;
    const result = await ingest(await rawMail({
      from: newEmail('files'), to: mailbox.address,
      attachments: [
        { filename: long, content: png(1) }, { filename: 'quote"s <b>x</b>.png', content: png(2) },
        { filename: 'C:\\Users\\bob\\Desktop\\scan.png', content: png(3) }, { filename: '../../etc/passwd.png', content: png(4) },
      ],
    }));
    expect(result.decision).toBe('new_ticket');
    expect(result.reason ?? '').not.toContain('files refused');
    const names = (await TicketAttachment.findAll({ where: { ticket_id: result.ticketId! }, order: [['id', 'ASC']] })).map((f) => f.original_name);
    expect(names).toEqual([`${long.slice(0, 251)}.png`, 'quote"s <b>x<_b>.png', 'scan.png', 'passwd.png']);
    expect(names[0]).toHaveLength(255);
  });

  it('written in HTML only, with an inline image, keeps its text and the image', async () => {
    const png = Buffer.from([137, 80, 78, 71, 13, 10, 26, 10, 9, 9]);
    const result = await ingest(await rawMail({
      from: newEmail('html'), to: mailbox.address, text: undefined as unknown as string,
      html: '<p>The <b>screen</b> shows this:</p><img src="cid:shot@x"><blockquote>old</blockquote>',
      attachments: [{ filename: 'shot.png', content: png, cid: 'shot@x' }],
    }));
    expect(result.decision).toBe('new_ticket');
    const [message] = await messagesOf(result.ticketId!);
    expect(message.text).toMatch(/The screen shows this:/);
    const files = await TicketAttachment.findAll({ where: { ticket_id: result.ticketId! } });
    expect(files.map((f) => f.original_name)).toEqual(['shot.png']);
  });

  it('in plain text that looks like markup keeps every character: an address in brackets, a config line, a comparison', async () => {
    const text = 'Contact John <john@cust.test> or use <VirtualHost *:80> config & more.\nif a<b then c.\n\nThanks';
    const opening = await ingest(await rawMail({ from: newEmail('lt'), to: mailbox.address, text }));
    expect(opening.decision).toBe('new_ticket');
    const [first] = await messagesOf(opening.ticketId!);
    // Rich text that shows exactly what was sent: escaped, in paragraphs and line breaks.
    expect(first.text).toBe('<p>Contact John &lt;john@cust.test&gt; or use &lt;VirtualHost *:80&gt; config &amp; more.<br />\nif a&lt;b then c.</p>\n<p>Thanks</p>');
    // A reply too; and text with nothing that reads as markup stays as it was sent.
    const ticket = (await Ticket.findByPk(opening.ticketId!))!;
    const from = (await User.findByPk(ticket.user_id))!.email;
    const ids = (await MailMessageId.findAll({ where: { ticket_id: ticket.id } })).map((m) => m.message_id);
    const reply = await ingest(await rawMail({ from, to: mailbox.address, subject: `Re: ${ticket.subject}`, inReplyTo: ids[0], text: 'x <y> z' }));
    expect(reply.decision).toBe('reply');
    const plain = await ingest(await rawMail({ from, to: mailbox.address, subject: `Re: ${ticket.subject}`, inReplyTo: ids[0], text: 'a < b & c > d' }));
    expect(plain.decision).toBe('reply');
    expect((await messagesOf(ticket.id)).map((m) => m.text).slice(1)).toEqual(['<p>x &lt;y&gt; z</p>', 'a < b & c > d']);
  });

  it('with a Reply-To is its From\'s (MAIL_PRIORITISE_REPLY_TO is off by default; on: replyTo.test.ts)', async () => {
    const from = newEmail('form');
    const { result, ticket } = await opened(from, { headers: { 'Reply-To': newEmail('visitor') } });
    expect(result.reason).not.toContain('Reply-To');
    expect((await User.findByPk(ticket.user_id))!.email).toBe(from);
  });

  it('posted to a mailing list, or sent by an auto-responder, copies no one: not the list (its members would get the ticket\'s mail), nor those it names', async () => {
    const list = `users-${unique('l').toLowerCase()}@lists.example.test`;
    const colleague = newEmail('colleague');
    const post = await ingest(await rawMail({
      from: `Alice Member <${newEmail('member')}>`, to: list, cc: [mailbox.address, colleague], subject: 'How do I reset the router?',
      headers: { 'List-Id': `<${list.replace('@', '.')}>`, 'List-Unsubscribe': `<mailto:${list.replace('@', '-leave@')}>`, Precedence: 'list', Sender: list.replace('@', '-bounces@') },
    }));
    const outOfOffice = await ingest(await rawMail({ from: newEmail('robot'), to: mailbox.address, cc: [colleague], headers: { 'Auto-Submitted': 'auto-replied' } }));
    for (const result of [post, outOfOffice]) {
      expect(result.decision).toBe('new_ticket');
      expect(JSON.parse((await Ticket.findByPk(result.ticketId!))!.cc ?? '[]')).toEqual([]);
      expect((await ticketMailsOf(result.ticketId!)).filter((p) => !p.recipientId)).toEqual([]);
    }
  });

  it('to the department in Bcc only (only Delivered-To names it) copies no one: those it was written to never wrote to the help desk', async () => {
    const vic = newEmail('vic', 'bcc.test');
    const [partner, other] = [newEmail('partner', 'partner.test'), newEmail('other', 'partner.test')];
    const opening = await ingest(await rawMail({ from: vic, to: partner, cc: [other], subject: 'Our contract', headers: { 'Delivered-To': mailbox.address } }));
    expect(opening.decision).toBe('new_ticket');
    const ticket = (await Ticket.findByPk(opening.ticketId!))!;
    expect(JSON.parse(ticket.cc ?? '[]')).toEqual([]);
    // The acknowledgement (sent to the ticket's user and CC list) is the sender's alone.
    expect((await ticketMailsOf(ticket.id)).map((p) => p.kind)).toContain('user_ticket_opened');
    // Nor does the sender's reply with the desk in Bcc; one to the ticket's sub-address (ours too) copies as any reply does.
    const ours = `t${ticket.id}.r${unique('b')}@support.test`;
    await MailMessageId.create({ message_id: ours, ticket_id: ticket.id, direction: 'out', audience: 'user', created_at: nowSec() });
    const bcc = await ingest(await rawMail({ from: vic, to: partner, subject: 'Re: Our contract', inReplyTo: `<${ours}>`, headers: { 'Delivered-To': mailbox.address } }));
    expect(bcc).toMatchObject({ decision: 'reply', ticketId: ticket.id });
    expect(JSON.parse((await ticket.reload()).cc ?? '[]')).toEqual([]);
    const copied = await ingest(await rawMail({ from: vic, to: replyAddress(mailbox.address, ticket), cc: [other], subject: 'Re: Our contract' }));
    expect(copied).toMatchObject({ decision: 'reply', ticketId: ticket.id });
    expect(JSON.parse((await ticket.reload()).cc ?? '[]')).toEqual([other]);
  });

  it('with no department address among its recipients is refused, unless the mailbox consumes all mail', async () => {
    const raw = await rawMail({ from: newEmail('stray'), to: 'someone-else@elsewhere.test' });
    const refused = await ingest(raw);
    expect(refused).toMatchObject({ decision: 'rejected', reason: 'Failed to find a department address in the recipient list.', ticketId: null });
    const consuming = await DepartmentEmail.create({ department_id: world.department.id, brand_id: world.brand.id, address: newEmail('all', 'desk.test'), consume_all: 1 });
    const taken = await ingest(await rawMail({ from: newEmail('stray'), to: 'someone-else@elsewhere.test' }), consuming);
    expect(taken.decision).toBe('new_ticket');
    // Its To names someone else (the mail reached us by an alias or a Bcc): they are not copied.
    expect((await Ticket.findByPk(taken.ticketId!))!).toMatchObject({ department_email_id: consuming.id, cc: null });
  });

  it('without From, or too large, is refused; unreadable bytes are still recorded', async () => {
    const noFrom = Buffer.from(`To: ${mailbox.address}\r\nSubject: anonymous\r\nMessage-ID: <${unique('nf')}@x.test>\r\n\r\nhello\r\n`);
    expect(await ingest(noFrom)).toMatchObject({ decision: 'rejected', reason: 'From: header missing.' });
    const big = await ingestMail(Buffer.alloc(10), { departmentEmail: mailbox }, { declaredSize: 50 * 1024 * 1024 });
    expect(big.decision).toBe('rejected');
    expect(big.reason).toMatch(/over the limit/);
    expect((await IncomingMail.findByPk(big.ledgerId!))!.size).toBe(50 * 1024 * 1024);
  });
});

describe('the same mail again', () => {
  it('is a duplicate: from the same or another mailbox, and by a hash of the raw mail when it has no Message-ID', async () => {
    const { raw, ticket } = await opened();
    const again = await ingest(raw);
    expect(again).toMatchObject({ decision: 'duplicate', ticketId: ticket.id });
    const other = await DepartmentEmail.create({ department_id: world.department.id, brand_id: world.brand.id, address: newEmail('other', 'desk.test') });
    expect((await ingest(raw, other)).decision).toBe('duplicate');

    const bare = await rawMail({ from: newEmail('bare'), to: mailbox.address, messageId: null });
    expect(bare.toString()).not.toMatch(/^Message-ID:/im);
    const first = await ingest(bare);
    expect(first.decision).toBe('new_ticket');
    expect(first.mailMessageId).toBeNull();
    expect((await IncomingMail.findByPk(first.ledgerId!))!.import_key).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect((await ingest(bare)).decision).toBe('duplicate');
  });

  it('is the same sender\'s: another sender\'s mail reusing its Message-ID opens its own ticket, which does not take the thread', async () => {
    const messageId = `<m1-alice-${unique('r')}@gmail.test>`;
    const alice = await opened(newEmail('alice'), { messageId, subject: 'Printer is broken' });
    const zed = newEmail('zed', 'dup.test');
    const other = await ingest(await rawMail({ from: zed, to: mailbox.address, messageId, subject: 'Refund for order 99', text: 'Please refund order 99.' }));
    expect(other).toMatchObject({ decision: 'new_ticket', from: zed });
    expect(other.ticketId).not.toBe(alice.ticket.id);
    expect((await messagesOf(other.ticketId!))[0].text).toBe('Please refund order 99.');
    expect(await messagesOf(alice.ticket.id)).toHaveLength(1);
    // The Message-ID threads Alice's ticket still; each mail delivered again is its own duplicate.
    expect((await MailMessageId.findOne({ where: { message_id: messageId.slice(1, -1) } }))!.ticket_id).toBe(alice.ticket.id);
    expect(await ingest(alice.raw)).toMatchObject({ decision: 'duplicate', ticketId: alice.ticket.id });
  });

  it('imported before migration 044 (its line keyed by the bare Message-ID) is still a duplicate after it', async () => {
    const from = newEmail('old');
    const messageId = `${unique('old')}@sender.test`;
    const raw = await rawMail({ from, to: mailbox.address, messageId: `<${messageId}>` });
    const { ticket } = await opened();
    const line = await IncomingMail.create({
      department_email_id: mailbox.id, message_id: messageId, import_key: messageId, from_address: from, decision: 'new_ticket', ticket_id: ticket.id, size: raw.length,
    });
    await m044.up(sequelize().getQueryInterface());
    expect((await line.reload()).import_key).toMatch(/^id:[0-9a-f]{64}$/);
    expect(await ingest(raw)).toMatchObject({ decision: 'duplicate', reason: `Already imported (incoming mail ${line.id}).`, ticketId: ticket.id });
    expect((await ingest(await rawMail({ from: newEmail('new'), to: mailbox.address, messageId: `<${messageId}>` }))).decision).toBe('new_ticket');
  });

  it('refused for good (a locked ticket, too large) and delivered again is a duplicate: its sender is told once', async () => {
    const locked = await opened();
    await locked.ticket.update({ locked: 1 });
    const raw = await rawMail({ from: locked.from, to: mailbox.address, subject: `Re: [#${locked.ticket.number}]` });
    const first = await ingest(raw);
    expect(first.decision).toBe('rejected');
    const again = await ingest(raw);
    expect(again).toMatchObject({ decision: 'duplicate', reason: `Already received (incoming mail ${first.ledgerId}: rejected).`, ticketId: locked.ticket.id });
    expect((await ticketMailsOf(locked.ticket.id)).filter((p) => p.kind === 'user_ticket_locked')).toHaveLength(1);

    const big = await rawMail({ from: newEmail('big'), to: mailbox.address });
    const tooLarge = () => ingestMail(big, { departmentEmail: mailbox, remoteUid: unique('uid') }, { declaredSize: 50 * 1024 * 1024 });
    const refused = await tooLarge();
    expect(refused.decision).toBe('rejected');
    const copy = await tooLarge();
    expect(copy).toMatchObject({ decision: 'duplicate', reason: `Already received (incoming mail ${refused.ledgerId}: rejected).` });
    const notices = (id: number) => DomainEvent.count({ where: { name: 'mailbox.unread_refused', payload: { [Op.like]: `%"incomingMailId":${id}}%` } } });
    expect([await notices(refused.ledgerId!), await notices(copy.ledgerId!)]).toEqual([1, 0]);
  });

  it('imported ten times at once makes one ticket', async () => {
    const from = newEmail('race');
    const raw = await rawMail({ from, to: mailbox.address });
    const results = await Promise.all(Array.from({ length: 10 }, () => ingest(raw)));
    expect(results.filter((r) => r.decision === 'new_ticket')).toHaveLength(1);
    expect(results.filter((r) => r.decision === 'duplicate')).toHaveLength(9);
    const ids = new Set(results.map((r) => r.ticketId));
    expect(ids.size).toBe(1);
    expect(await IncomingMail.count({ where: { from_address: from } })).toBe(10);
    expect(await User.count({ where: { email: from } })).toBe(1);
  });
});

describe('a reply', () => {
  it('finds its ticket by In-Reply-To/References, adds the user\'s message and reopens the ticket', async () => {
    const { ticket, from } = await opened();
    await ticket.update({ status_id: world.resolvedStatus, resolved_time: nowSec() });
    const ours = `t${ticket.id}.r${unique('x')}@support.test`;
    await MailMessageId.create({ message_id: ours, ticket_id: ticket.id, direction: 'out', created_at: nowSec() });
    const result = await ingest(await rawMail({ from, to: mailbox.address, subject: 'Re: something else', inReplyTo: `<${ours}>`, references: [`<${ours}>`], text: 'Still broken.' }));
    expect(result).toMatchObject({ decision: 'reply', ticketId: ticket.id });
    expect(result.reason).toMatch(/^Found by In-Reply-To\/References/);
    const messages = await messagesOf(ticket.id);
    expect(messages.map((m) => m.text)).toEqual(['Hello, my printer is broken.', 'Still broken.']);
    await ticket.reload();
    expect(ticket.status_id).toBe(world.openStatus);
    expect(ticket.resolved_time).toBeNull();
    expect((await ticketMailsOf(ticket.id)).some((p) => p.kind === 'operator_user_ticket_reply' && p.messageId === result.messageId)).toBe(true);
  });

  it('from one of the user\'s additional addresses is the user\'s: it neither joins the CC list nor needs the headers', async () => {
    const { ticket } = await opened();
    const other = newEmail('home');
    expectSuccess(await api.put(`/api/user/user/${ticket.user_id}`, { additional_email: [other] }), 'Successfully updated the user!');
    const ours = `t${ticket.id}.r${unique('x')}@support.test`;
    await MailMessageId.create({ message_id: ours, ticket_id: ticket.id, direction: 'out', created_at: nowSec() });
    const byHeaders = await ingest(await rawMail({ from: other, to: mailbox.address, subject: 'Re: it', inReplyTo: `<${ours}>`, text: 'From home.' }));
    expect(byHeaders).toMatchObject({ decision: 'reply', ticketId: ticket.id });
    expect(byHeaders.reason).not.toMatch(/joined the ticket as a CC/);
    const byNumber = await ingest(await rawMail({ from: other, to: mailbox.address, subject: `Re: [#${ticket.number}] ${ticket.subject}`, text: 'Again.' }));
    expect(byNumber).toMatchObject({ decision: 'reply', ticketId: ticket.id });
    await ticket.reload();
    expect(JSON.parse(ticket.cc ?? '[]')).toEqual([]);
    const authors = (await messagesOf(ticket.id)).map((m) => m.user_id);
    expect(authors).toEqual([ticket.user_id, ticket.user_id, ticket.user_id]);
  });

  it('to one of our forwards, from its recipient, is a note for the operators: it joins nothing and reaches no customer', async () => {
    const { ticket, from } = await opened(newEmail('cust'), { cc: [newEmail('colleague')] });
    const before = ticket.cc;
    const agent = await operator();
    const vendor = newEmail('vendor');
    const forward = expectSuccess(await api.post('/api/ticket/forward', {
      ticket_id: ticket.id, user_id: agent.id, text: 'What would this cost?', subject: 'Printer issue for a customer', to_address: [vendor],
    }), 'Successfully created new message!');
    // What the mail jobs record once the mails are sent: the customer's acknowledgement, then the forward.
    const acknowledged = `t${ticket.id}.r${unique('x')}@support.test`;
    await MailMessageId.create({ message_id: acknowledged, ticket_id: ticket.id, direction: 'out', audience: 'user', created_at: nowSec() });
    const sent = `t${ticket.id}.f${unique('x')}@support.test`;
    await MailMessageId.create({ message_id: sent, ticket_id: ticket.id, ticket_message_id: forward.id, direction: 'out', audience: 'forward', created_at: nowSec() });
    // It answers the forward (In-Reply-To); its References also name the customer's mail (as a
    // forward sent before forwards named no thread carried them).
    const answer = await ingest(await rawMail({
      from: vendor, to: mailbox.address, cc: [newEmail('vendorboss')], subject: `Re: [#${ticket.number}] Printer issue for a customer`,
      inReplyTo: `<${sent}>`, references: [`<${acknowledged}>`, `<${sent}>`], text: 'Our cost is 40 EUR.',
    }));
    expect(answer).toMatchObject({ decision: 'reply', ticketId: ticket.id });
    expect(answer.reason).toContain('the answer to a forward: filed as a note');
    const note = (await messagesOf(ticket.id)).find((m) => m.id === answer.messageId)!;
    expect(note).toMatchObject({ type: 1, by: 1, text: 'Our cost is 40 EUR.' });
    expect((await User.findByPk(note.user_id!))!.email).toBe(vendor);
    await ticket.reload();
    expect(ticket.cc).toBe(before);
    // No copy to the customer or their CC: only the operators' note mail, if any.
    const kinds = (await ticketMailsOf(ticket.id)).filter((p) => p.messageId === answer.messageId).map((p) => p.kind);
    expect(kinds.filter((k) => k.startsWith('user_'))).toEqual([]);
    // The customer's own reply to the same thread is still theirs.
    const own = await ingest(await rawMail({ from, to: mailbox.address, subject: 'Re: it', inReplyTo: `<${sent}>`, text: 'Me again.' }));
    expect(own).toMatchObject({ decision: 'reply', ticketId: ticket.id });
    expect((await messagesOf(ticket.id)).find((m) => m.id === own.messageId)).toMatchObject({ type: 0, by: 1 });
  });

  it('finds its ticket by the ticket number in the subject only from its user, a CC, or an operator', async () => {
    const cc = newEmail('cc');
    const { ticket, from } = await opened(newEmail('subj'), { cc: [cc] });
    const subject = `Re: [#${ticket.number}] Question`;
    expect(await ingest(await rawMail({ from, to: mailbox.address, subject }))).toMatchObject({ decision: 'reply', ticketId: ticket.id });
    expect(await ingest(await rawMail({ from: cc, to: mailbox.address, subject }))).toMatchObject({ decision: 'reply', ticketId: ticket.id });
    // An operator's mail found by the number only is filed, as a note (anyone can write From: an operator):
    // below, 'a mail from an operator's address'.
    const op = await operator();
    const byOperator = await ingest(await rawMail({ from: op.email, to: mailbox.address, subject }));
    expect(byOperator).toMatchObject({ decision: 'reply', ticketId: ticket.id });
    expect((await messagesOf(ticket.id)).at(-1)!).toMatchObject({ by: 0, type: 1, user_id: op.id });
    // A stranger who knows the number opens a ticket of their own.
    const stranger = await ingest(await rawMail({ from: newEmail('stranger'), to: mailbox.address, subject }));
    expect(stranger.decision).toBe('new_ticket');
    expect(stranger.ticketId).not.toBe(ticket.id);
  });

  it('finds its ticket by the sub-address it was sent to, and not by a forged one', async () => {
    const { ticket, from } = await opened();
    const tagged = replyAddress(mailbox.address, ticket);
    expect(tagged).toMatch(new RegExp(`^${mailbox.address.split('@')[0]}\\+t${ticket.id}-[0-9a-f]{10}@`));
    expect(await ingest(await rawMail({ from, to: tagged, subject: 'no number here' }))).toMatchObject({ decision: 'reply', ticketId: ticket.id });
    const forged = tagged.replace(/-[0-9a-f]{10}@/, '-0000000000@');
    const result = await ingest(await rawMail({ from, to: forged, subject: 'no number here' }));
    // The forged tag names no ticket, but its base address is the department's: a new ticket.
    expect(result.decision).toBe('new_ticket');
  });

  it('to a locked ticket is refused and the sender told; to a merged one it follows the merge; to a trashed one it opens a new ticket', async () => {
    const locked = await opened();
    await locked.ticket.update({ locked: 1 });
    const refused = await ingest(await rawMail({ from: locked.from, to: mailbox.address, subject: `Re: [#${locked.ticket.number}]` }));
    expect(refused).toMatchObject({ decision: 'rejected', ticketId: locked.ticket.id });
    expect(refused.reason).toMatch(/is locked/);
    expect(await messagesOf(locked.ticket.id)).toHaveLength(1);
    // A stranger answering by the thread's headers is refused too, and leaves no new user behind.
    const thread = `t${locked.ticket.id}.r${unique('l')}@support.test`;
    await MailMessageId.create({ message_id: thread, ticket_id: locked.ticket.id, direction: 'out', created_at: nowSec() });
    const stranger = newEmail('stranger');
    expect((await ingest(await rawMail({ from: stranger, to: mailbox.address, inReplyTo: `<${thread}>` }))).decision).toBe('rejected');
    expect(await User.count({ where: { email: stranger } })).toBe(0);
    expect(await ticketMailsOf(locked.ticket.id)).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'user_ticket_locked', address: locked.from })]));

    const from = newEmail('merge');
    const source = await opened(from);
    const target = await opened(from);
    expectSuccess(await api.post(`/api/ticket/ticket/${target.ticket.id}/merge`, { ids: [source.ticket.id] }), 'Successfully updated the ticket!');
    const followed = await ingest(await rawMail({ from, to: mailbox.address, subject: `Re: [#${source.ticket.number}]` }));
    expect(followed).toMatchObject({ decision: 'reply', ticketId: target.ticket.id });

    const trashed = await opened();
    const trash = await api.del(`/api/ticket/ticket/${trashed.ticket.id}`);
    expect([trash.status, trash.body.message]).toEqual([200, 'Successfully moved the ticket to trash!']);
    const fresh = await ingest(await rawMail({ from: trashed.from, to: mailbox.address, subject: `Re: [#${trashed.ticket.number}]` }));
    expect(fresh.decision).toBe('new_ticket');
    expect(fresh.ticketId).not.toBe(trashed.ticket.id);
  });

  it('to a department that takes no replies by mail is refused, with its notice', async () => {
    const department = await Department.findByPk(world.department.id);
    const { ticket, from } = await opened();
    await department!.update({ disable_user_email_replies: 1 });
    try {
      const result = await ingest(await rawMail({ from, to: mailbox.address, subject: `Re: [#${ticket.number}]` }));
      expect(result).toMatchObject({ decision: 'rejected', ticketId: ticket.id });
      expect((await ticketMailsOf(ticket.id)).map((p) => p.kind)).toContain('user_ticket_disablereplies');
    } finally {
      await department!.update({ disable_user_email_replies: 0 });
    }
  });
});

describe('a mail from an operator\'s address', () => {
  /** A customer's ticket, and the notification of it its operator was sent (as the mail job records it). */
  async function notified() {
    const { ticket, from } = await opened(newEmail('carol'));
    const op = await operator();
    const notification = `t${ticket.id}.r${unique('n')}@support.test`;
    await MailMessageId.create({ message_id: notification, ticket_id: ticket.id, direction: 'out', audience: `operator:${op.id}`, created_at: nowSec() });
    const acknowledgement = `t${ticket.id}.r${unique('a')}@support.test`;
    await MailMessageId.create({ message_id: acknowledgement, ticket_id: ticket.id, direction: 'out', audience: 'user', created_at: nowSec() });
    return { ticket, from, op, notification, acknowledgement };
  }
  /** What was queued about a message: nothing for the customer or a CC (user_*), and which operator mails. */
  const mailsAbout = async (ticketId: number, messageId: number | null) => (await ticketMailsOf(ticketId)).filter((p) => p.messageId === messageId).map((p) => p.kind as string);

  it('answering their notification is their public reply, which the customer gets', async () => {
    const { ticket, op, notification } = await notified();
    const result = await ingest(await rawMail({
      from: `Olivia Op <${op.email}>`, to: mailbox.address, subject: `Re: [#${ticket.number}]: New ticket`, inReplyTo: `<${notification}>`, text: 'We are on it.',
    }));
    expect(result).toMatchObject({ decision: 'reply', ticketId: ticket.id });
    expect(result.reason).not.toContain('note');
    expect((await messagesOf(ticket.id)).at(-1)!).toMatchObject({ id: result.messageId, type: 0, by: 0, user_id: op.id });
    expect(await mailsAbout(ticket.id, result.messageId)).toContain('user_ticket_reply');
  });

  it.each([
    ['Automatic reply: (Auto-Submitted)', 'Automatic reply', { 'Auto-Submitted': 'auto-replied' }, 'Auto-Submitted: auto-replied'],
    ['Out of Office: without any header', 'Out of Office', {}, 'an out-of-office subject (Out of Office:)'],
  ])('an out-of-office in answer to their notification, %s, is a note that notifies no one', async (_name, prefix, headers, why) => {
    const { ticket, op, notification } = await notified();
    const status = ticket.status_id;
    const result = await ingest(await rawMail({
      from: `Olivia Op <${op.email}>`, to: mailbox.address, subject: `${prefix}: [#${ticket.number}]: New reply from Carol Client`,
      inReplyTo: `<${notification}>`, references: [`<${notification}>`], headers, text: 'I am away until Monday. Urgent: call my mobile +44 7700 900123.',
    }));
    expect(result).toMatchObject({ decision: 'reply', ticketId: ticket.id });
    expect(result.reason).toContain(`automatic mail (${why}): nobody notified`);
    expect(result.reason).toContain('an operator\'s automatic mail: filed as a note');
    expect((await messagesOf(ticket.id)).at(-1)!).toMatchObject({ id: result.messageId, type: 1, by: 0, user_id: op.id });
    expect(await mailsAbout(ticket.id, result.messageId)).toEqual([]);
    await ticket.reload();
    expect([ticket.status_id, ticket.last_reply_by, ticket.first_reply_time]).toEqual([status, 1, null]);
  });

  it('found by the number in its subject or by the sub-address only is a note (anyone can write its From): the customer gets nothing', async () => {
    const { ticket, op, notification, acknowledgement } = await notified();
    const watcher = await operator();
    expectSuccess(await api.put(`/api/ticket/ticket/${ticket.id}`, { assignedto: [op.id, watcher.id] }), 'Successfully updated the ticket!');
    const forged = `<${unique('forged')}@agents.test>`;
    const bySubject = await ingest(await rawMail({
      from: `Olivia Op <${op.email}>`, to: mailbox.address, subject: `Re: [#${ticket.number}]: New reply from Carol Client`,
      text: 'Your account is locked: confirm your card at https://evil.test/', messageId: forged,
    }));
    const bySubaddress = await ingest(await rawMail({ from: op.email, to: replyAddress(mailbox.address, ticket), subject: 'no number', text: 'Pay here.' }));
    // Answering the customer's thread (which the customer and their CC hold), or that first mail, is no better.
    const byCustomerThread = await ingest(await rawMail({ from: op.email, to: mailbox.address, subject: 'Re: it', inReplyTo: `<${acknowledgement}>`, text: 'Or here.' }));
    // Nor is answering the mail forged first: its Message-ID was not kept as the operator's.
    const byForged = await ingest(await rawMail({ from: op.email, to: mailbox.address, subject: `Re: [#${ticket.number}]`, inReplyTo: forged, references: [forged], text: 'And here.' }));
    for (const result of [bySubject, bySubaddress, byCustomerThread, byForged]) {
      expect(result).toMatchObject({ decision: 'reply', ticketId: ticket.id });
      expect(result.reason).toContain('an operator\'s mail that answers none of the mails they were sent: filed as a note');
      expect((await messagesOf(ticket.id)).find((m) => m.id === result.messageId)).toMatchObject({ type: 1, by: 0, user_id: op.id });
      // The operators hear of it as of a note (the author excepted); no customer or CC does.
      expect(await mailsAbout(ticket.id, result.messageId)).toEqual(['operator_ticket_note']);
    }
    expect(await MailMessageId.count({ where: { message_id: forged.slice(1, -1) } })).toBe(0);
    // The operator's answer to their notification is still their reply.
    const real = await ingest(await rawMail({ from: op.email, to: mailbox.address, subject: 'Re: it', inReplyTo: `<${notification}>`, text: 'Done.' }));
    expect((await messagesOf(ticket.id)).find((m) => m.id === real.messageId)).toMatchObject({ type: 0, by: 0 });
  });
});

describe('mail that must never be answered', () => {
  it('an auto-reply is kept on its ticket but reopens nothing and notifies nobody', async () => {
    const { ticket, from } = await opened();
    await ticket.update({ status_id: world.resolvedStatus, resolved_time: nowSec() });
    const before = (await ticketMailsOf(ticket.id)).length;
    const result = await ingest(await rawMail({
      from, to: mailbox.address, subject: `Out of office: [#${ticket.number}]`, headers: { 'Auto-Submitted': 'auto-replied' }, text: 'I am away.',
    }));
    expect(result).toMatchObject({ decision: 'reply', ticketId: ticket.id });
    expect(result.reason).toContain('automatic mail (Auto-Submitted: auto-replied): nobody notified');
    await ticket.reload();
    expect(ticket.status_id).toBe(world.resolvedStatus);
    expect(await ticketMailsOf(ticket.id)).toHaveLength(before);
  });

  it.each([
    'Automatic reply:', 'Auto:', 'AUTO:', 'Out of Office:', 'Out of office:', 'Autoreply:', 'Abwesend:', 'Automatische Antwort:',
    'Réponse automatique :', 'Respuesta automática:', 'Risposta automatica:', 'Automatiskt svar:',
  ])('a reply whose subject starts "%s", with no automatic header, is an auto-reply: it reopens nothing and notifies nobody', async (prefix) => {
    const { ticket, from, sentId } = await ticketWithSentMail();
    await ticket.update({ status_id: world.resolvedStatus, resolved_time: nowSec() });
    const before = (await ticketMailsOf(ticket.id)).length;
    const result = await ingest(await rawMail({
      from, to: mailbox.address, subject: `${prefix} [#${ticket.number}] ${ticket.subject}`, inReplyTo: `<${sentId}>`, text: 'I am away until Monday.',
    }));
    expect(result).toMatchObject({ decision: 'reply', ticketId: ticket.id });
    expect(result.reason).toContain(`automatic mail (an out-of-office subject (${prefix})): nobody notified`);
    await ticket.reload();
    expect(ticket.status_id).toBe(world.resolvedStatus);
    expect(await ticketMailsOf(ticket.id)).toHaveLength(before);
  });

  it('a new mail with an out-of-office subject is not answered (an auto-responder answering ours would answer back); "Auto:" opening a conversation is a person\'s', async () => {
    const robot = await ingest(await rawMail({ from: newEmail('robot'), to: mailbox.address, subject: 'Out of Office: Your order 4711' }));
    expect(robot.reason).toContain('automatic mail (an out-of-office subject (Out of Office:)): the sender is not answered');
    expect((await ticketMailsOf(robot.ticketId!)).map((p) => p.kind)).not.toContain('user_ticket_opened');
    // German, Dutch, …: "Auto" is a car. Answering no mail, it is a person's question.
    const car = await ingest(await rawMail({ from: newEmail('driver'), to: mailbox.address, subject: 'Auto: Frage zur Inspektion' }));
    expect(car).toMatchObject({ decision: 'new_ticket' });
    expect(car.reason ?? '').not.toContain('automatic');
    expect((await ticketMailsOf(car.ticketId!)).map((p) => p.kind)).toContain('user_ticket_opened');
  });

  it('an out-of-office or list mail in a ticket\'s thread joins no one to its CC list and is not what the next reply answers', async () => {
    const { ticket, sentId, from } = await ticketWithSentMail();
    const copied = newEmail('copied');
    // From someone not on the ticket: not added (joining is for people), and no user is made for it.
    for (const [sender, headers] of [[newEmail('assistant'), { 'Auto-Submitted': 'auto-replied' }], [newEmail('list-bounces'), { Precedence: 'list', 'List-Id': '<printers.lists.test>' }]] as const) {
      const result = await ingest(await rawMail({ from: sender, to: mailbox.address, cc: [copied], inReplyTo: `<${sentId}>`, headers }));
      expect(result).toMatchObject({ decision: 'rejected', ticketId: ticket.id });
      expect(result.reason).toMatch(new RegExp(`^Not added to ticket #${ticket.number}: an automatic mail \\(.+\\) from ${sender}, who is not on the ticket`));
      expect(await User.count({ where: { email: sender } })).toBe(0);
    }
    // The customer's own out-of-office: kept, but those it copies do not join, and it anchors no thread.
    const messageId = `<${unique('ooo')}@cust.test>`;
    const own = await ingest(await rawMail({ from, to: mailbox.address, cc: [copied], inReplyTo: `<${sentId}>`, headers: { 'Auto-Submitted': 'auto-replied' }, messageId }));
    expect(own).toMatchObject({ decision: 'reply', ticketId: ticket.id });
    expect(await MailMessageId.count({ where: { message_id: messageId.slice(1, -1) } })).toBe(0);
    expect(await messagesOf(ticket.id)).toHaveLength(2);
    await ticket.reload();
    expect(JSON.parse(ticket.cc ?? '[]')).toEqual([]);
    // A person's answer by the same thread still joins.
    const person = newEmail('person');
    expect((await ingest(await rawMail({ from: person, to: mailbox.address, inReplyTo: `<${sentId}>` }))).reason).toContain(`${person} joined the ticket as a CC`);
  });

  it.each([
    ['Precedence: bulk', { Precedence: 'bulk' }],
    ['X-Autoreply', { 'X-Autoreply': 'yes' }],
    ['a mailing list', { 'List-Id': '<news.list.test>' }],
    ['another system\'s X-Loop', { 'X-Loop': 'tickets@other-helpdesk.test' }],
  ])('%s opens a ticket whose sender is not answered; the operators hear of it', async (_name, headers) => {
    const result = await ingest(await rawMail({ from: newEmail('bulk'), to: mailbox.address, headers }));
    expect(result.decision).toBe('new_ticket');
    expect(result.reason).toContain('the sender is not answered');
    const mails = await ticketMailsOf(result.ticketId!);
    expect(mails.map((p) => p.kind)).toEqual(mails.map(() => 'operator_ticket_opened'));
    // The department's operators, directly and through their group (the inactive one is not told).
    expect(mails.map((p) => p.recipientId).sort()).toEqual([world.direct.id, world.grouped.id].sort());
  });

  it('mail from a department address, with our X-Loop, or carrying a Message-ID we sent is a loop', async () => {
    expect(await ingest(await rawMail({ from: mailbox.address, to: mailbox.address }))).toMatchObject({ decision: 'loop', reason: 'Loop detected - email sent from a department address.' });
    expect((await ingest(await rawMail({ from: newEmail('l'), to: mailbox.address, headers: { 'X-Loop': mailbox.address } }))).decision).toBe('loop');
    const { ticket } = await opened();
    const ours = `t${ticket.id}.r${unique('y')}@support.test`;
    await MailMessageId.create({ message_id: ours, ticket_id: ticket.id, direction: 'out', created_at: nowSec() });
    expect((await ingest(await rawMail({ from: newEmail('fw'), to: mailbox.address, messageId: `<${ours}>` }))).decision).toBe('loop');
  });

  it('mail from a brand\'s default address is not taken for a loop by its From: a person may send from it (ours carry our X-Loop)', async () => {
    const result = await ingest(await rawMail({ from: world.brand.default_email!, to: mailbox.address }));
    expect(result.decision).toBe('new_ticket');
    expect((await ingest(await rawMail({ from: world.brand.default_email!, to: mailbox.address, headers: { 'X-Loop': world.brand.default_email! } }))).decision).toBe('loop');
  });

  it('our X-Loop with the core default_email (the From of a brand without an address of its own) is a loop', async () => {
    const core = (await Setting.findOne({ where: { scope: 'core', name: 'default_email' } }))!;
    const saved = core.value;
    const system = newEmail('system');
    try {
      await core.update({ value: system.toUpperCase() });
      const back = await ingest(await rawMail({ from: newEmail('alias'), to: mailbox.address, headers: { 'X-Loop': `Acme <${system}>` } }));
      expect(back).toMatchObject({ decision: 'loop', reason: `Loop detected - the mail carries our X-Loop: ${system}.` });
    } finally {
      await core.update({ value: saved });
    }
  });

  it('a bounce of a mail we sent marks its delivery bounced, with the remote server\'s words, and imports nothing', async () => {
    const { ticket, from, sentId, entry } = await ticketWithSentMail();
    const report = await rawMail({
      from: 'Mail Delivery System <MAILER-DAEMON@mx.example.net>', to: mailbox.address, subject: 'Undelivered Mail Returned to Sender',
      text: 'This is the mail system. Your message could not be delivered.',
      attachments: [
        { filename: 'status.txt', contentType: 'message/delivery-status', content: `Reporting-MTA: dns; mx.example.net\r\n\r\nFinal-Recipient: rfc822; ${from}\r\nAction: failed\r\nStatus: 5.1.1\r\nDiagnostic-Code: smtp; 550 5.1.1 <${from}>: Recipient address rejected: User unknown\r\n` },
        { filename: 'original.txt', contentType: 'text/rfc822-headers', content: `From: desk@x.test\r\nTo: ${from}\r\nMessage-ID: <${sentId}>\r\nSubject: [#${ticket.number}]\r\n` },
      ],
    });
    const result = await ingest(report);
    expect(result).toMatchObject({ decision: 'bounce', ticketId: ticket.id });
    expect(result.reason).toMatch(/1 delivery record\(s\) marked bounced: smtp; 550 5\.1\.1 .*User unknown/);
    expect(await MailDelivery.findOne({ where: { outbox_id: entry.id } })).toMatchObject({ status: 'bounced', error: expect.stringContaining('550 5.1.1') });
    expect(expectSuccess(await api.get(`/api/core/mail/${entry.id}`)).status).toBe('bounced');
    expect(await messagesOf(ticket.id)).toHaveLength(1);
  });

  it('a read receipt or a delay notice about a mail we sent is a report of no failure: nothing is marked bounced or imported', async () => {
    const { ticket, from, sentId, entry } = await ticketWithSentMail();
    const report = (reportType: string, partType: string, part: string, sender: string) => Buffer.from([
      `From: ${sender}`, `To: ${mailbox.address}`, `Subject: Read: [#${ticket.number}] ${ticket.subject}`, `Message-ID: <${unique('r')}@cust.test>`,
      `References: <${sentId}>`, 'MIME-Version: 1.0', `Content-Type: multipart/report; report-type=${reportType}; boundary="b1"`, '',
      '--b1', 'Content-Type: text/plain', '', 'About your message.', '',
      '--b1', `Content-Type: ${partType}`, '', part, '',
      '--b1', 'Content-Type: text/rfc822-headers', '', `Message-ID: <${sentId}>`, `To: ${from}`, '', '--b1--', '',
    ].join('\r\n'));
    const receipt = await ingest(report('disposition-notification', 'message/disposition-notification', `Final-Recipient: rfc822; ${from}\r\nDisposition: manual-action/MDN-sent-manually; displayed`, from));
    const delayed = await ingest(report('delivery-status', 'message/delivery-status', `Reporting-MTA: dns; mx.example.net\r\n\r\nFinal-Recipient: rfc822; ${from}\r\nAction: delayed\r\nStatus: 4.4.7`, 'MAILER-DAEMON@mx.example.net'));
    for (const result of [receipt, delayed]) {
      expect(result).toMatchObject({ decision: 'bounce', ticketId: ticket.id });
      expect(result.reason).toMatch(/not of a failure .*nothing marked bounced/);
    }
    expect(await MailDelivery.findOne({ where: { outbox_id: entry.id } })).toMatchObject({ status: 'sent', error: null });
    expect(await DomainEvent.count({ where: { name: 'mail.bounced', payload: { [Op.like]: `%"outboxId":${entry.id}%` } } })).toBe(0);
    expect(await messagesOf(ticket.id)).toHaveLength(1);
  });

  it('spam rules with event_message refuse by content or by sender, in linear time', async () => {
    const marker = unique('casino').toLowerCase();
    await SpamRule.create({ text: `cheap\\s+${marker}`, type: 0, event_message: 1, event_comment: 0 });
    const banned = newEmail('banned', 'spam.test');
    await SpamRule.create({ text: banned.replace(/[.]/g, '\\.'), type: 1, event_message: 1, event_comment: 0 });
    await SpamRule.create({ text: '(a+)+$', type: 0, event_message: 1, event_comment: 0 });
    expect((await ingest(await rawMail({ from: newEmail('s'), to: mailbox.address, text: `Buy CHEAP   ${marker} now` }))).decision).toBe('spam');
    expect((await ingest(await rawMail({ from: banned, to: mailbox.address }))).decision).toBe('spam');
    // A pattern that backtracks for ever in other engines answers at once (RE2); it does match this text.
    const started = Date.now();
    const evil = await ingest(await rawMail({ from: newEmail('s'), to: mailbox.address, text: `${'a'.repeat(5000)}!` }));
    expect(Date.now() - started).toBeLessThan(2000);
    expect(evil.decision).toBe('new_ticket');
    await SpamRule.destroy({ where: { text: '(a+)+$' } });
  });

  it('a spam rule\'s ^ and $ are the start and end of the subject, or of the text, as of a comment\'s text', async () => {
    const marker = unique('pills').toLowerCase();
    const rule = await SpamRule.create({ text: `^cheap.*${marker}$`, type: 0, event_message: 1, event_comment: 0 });
    try {
      expect((await ingest(await rawMail({ from: newEmail('s'), to: mailbox.address, subject: `cheap ${marker}`, text: 'Hello' }))).decision).toBe('spam');
      expect((await ingest(await rawMail({ from: newEmail('s'), to: mailbox.address, subject: 'Hello', text: `cheap xyz ${marker}` }))).decision).toBe('spam');
      expect((await ingest(await rawMail({ from: newEmail('s'), to: mailbox.address, subject: 'Hello', text: `Not cheap ${marker}` }))).decision).toBe('new_ticket');
    } finally {
      await rule.destroy();
    }
  });
});

describe('over the API', () => {
  it('the dry run answers the decision without importing or recording anything', async () => {
    const from = newEmail('dry');
    const raw = (await rawMail({ from, to: mailbox.address, subject: 'Dry run' })).toString('utf8');
    const [tickets, lines, lastEvent] = [await Ticket.count(), await IncomingMail.count(), (await DomainEvent.max('id') as number | null) ?? 0];
    const data = expectSuccess(await api.post('/api/ticket/incomingmail/dryrun', { raw }), 'The mail was not imported: this is the decision it would get.');
    // Its events were never written, so they left no gap in the feed's ids (a gap holds readers back).
    await transaction((t) => emit(t, 'organisation.updated', { organisationId: 1 }));
    expect(await DomainEvent.max('id')).toBe(lastEvent + 1);
    expect(data).toMatchObject({ id: null, decision: 'new_ticket', from_address: from, subject: 'Dry run', reason: expect.stringContaining(mailbox.address) });
    // The ticket and message it would create have no id (the rolled-back ones never existed).
    expect(data).toMatchObject({ ticket_id: null, ticket_message_id: null });
    expect([await Ticket.count(), await IncomingMail.count(), await User.count({ where: { email: from } })]).toEqual([tickets, lines, 0]);
    const loop = expectSuccess(await api.postJson('/api/ticket/incomingmail/dryrun', { raw_base64: Buffer.from(raw.replace(`From: ${from}`, `From: ${mailbox.address}`)).toString('base64') }), 'The mail was not imported: this is the decision it would get.');
    expect(loop.decision).toBe('loop');
    expectError(await api.post('/api/ticket/incomingmail/dryrun', {}), 422, 'The raw field is required.');
    expectError(await api.post('/api/ticket/incomingmail/dryrun', { raw, department_email_id: 4294967295 }), 422, 'The selected department email id is invalid.');
    // A reply names the ticket it would go to, not a message that never existed.
    const { ticket } = await opened();
    const reply = expectSuccess(await api.post('/api/ticket/incomingmail/dryrun', {
      raw: (await rawMail({ from: ticket.user_id ? (await User.findByPk(ticket.user_id))!.email : from, to: mailbox.address, subject: `Re: [#${ticket.number}] x` })).toString('utf8'),
    }), 'The mail was not imported: this is the decision it would get.');
    expect(reply).toMatchObject({ decision: 'reply', ticket_id: ticket.id, ticket_message_id: null });
  });

  it('the ledger lists every mail with its decision, filtered, and shows one', async () => {
    const { result, ticket } = await opened();
    const list = expectList(await api.get('/api/ticket/incomingmail', { ticket_id: ticket.id, decision: 'new_ticket' }));
    expect(list).toHaveLength(1);
    expect(list[0]).toEqual({
      id: result.ledgerId, department_email_id: mailbox.id, remote_uid: expect.any(String), message_id: result.mailMessageId,
      from_address: result.from, subject: result.subject, decision: 'new_ticket', reason: expect.any(String), ticket_id: ticket.id,
      ticket_message_id: result.messageId, size: expect.any(Number), created_at: expect.any(Number), updated_at: expect.any(Number),
    });
    expect(expectSuccess(await api.get(`/api/ticket/incomingmail/${result.ledgerId}`)).decision).toBe('new_ticket');
    expect(expectList(await api.get('/api/ticket/incomingmail', { message_id: `<${result.mailMessageId}>` })).map((l) => l.id)).toContain(result.ledgerId);
    expectError(await api.get('/api/ticket/incomingmail', { decision: 'lost' }), 422, 'The selected decision is invalid.');
    expectError(await api.get('/api/ticket/incomingmail/4294967295'), 404, 'The incoming mail with given ID was not found.');
  });
});
