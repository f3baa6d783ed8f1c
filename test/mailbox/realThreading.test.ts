/**
 * Threading that other help desks get wrong, end to end: mails appended to a real dovecot, polled
 * by the mailbox worker, acknowledgements sent through a real SMTP server and answered from there.
 * A CC who answers the original mail joins its ticket; References-only replies join; forwards of
 * ticket mail (`Fwd:`/`WG:`/`TR:`/`Fw:`, inline or as an attachment) are recognised; the same mail
 * in two department mailboxes is one ticket; a stranger's ticket number never joins.
 */
import './mailboxEnv';
import MailComposer from 'nodemailer/lib/mail-composer';
import { Department, DepartmentBrand, DepartmentEmail, IncomingMail, MailMessageId, Ticket, User } from '../../src/db/models';
import { pollMailbox } from '../../src/mailbox/poll';
import { stripSubjectPrefixes, ticketNumberInSubject } from '../../src/mailbox/subject';
import type { Dovecot } from '../helpers/dovecot';
import { newEmail, unique, useApi } from '../helpers/app';
import { expectSuccess } from '../helpers/envelope';
import { waitFor, type TestSmtp } from '../helpers/smtp';
import { settled, type MailWorld } from '../notifications/support';
import { messagesOf, rawMail, ticketMailsOf, useDeskMailbox } from './support';
import { dropQueuedMail } from '../helpers/jobs';

afterAll(() => dropQueuedMail());
const api = useApi();
const box = useDeskMailbox(api, 'th', ['sales']);
const user = box.address;

let dovecot: Dovecot;
let smtp: TestSmtp;
let world: MailWorld;
let desk: DepartmentEmail;
beforeAll(() => ({ dovecot, smtp, world, mailbox: desk } = box));
const remoteMailbox = (name: string, departmentId: number) => box.connect(name, departmentId);

/** Appends the mail to the desk's mailbox and polls it: the ledger line of that mail. */
async function deliver(raw: Buffer, mailbox = desk, name = 'desk'): Promise<IncomingMail> {
  const { uid, uidValidity } = await dovecot.append(user(name), raw);
  await pollMailbox(mailbox.id);
  return (await IncomingMail.findOne({ where: { department_email_id: mailbox.id, remote_uid: `${uidValidity}:${uid}` } }))!;
}

/** A customer's mail that opens a ticket, with the acknowledgement the customer received for it. */
async function opened(o: { cc?: string[]; subject?: string } = {}) {
  const from = newEmail('cust');
  const original = await rawMail({ from: `Ada Lovelace <${from}>`, to: user('desk'), cc: o.cc, subject: o.subject ?? `Printer ${unique('p')}` });
  const line = await deliver(original);
  expect(line.decision).toBe('new_ticket');
  const ticket = (await Ticket.findByPk(line.ticket_id!))!;
  const ack = await waitFor(() => smtp.mailsTo(from).find((m) => m.parsed.subject?.includes(`[#${ticket.number}]`)), 60000, 'the acknowledgement');
  return { from, ticket, originalId: `<${line.message_id}>`, ack };
}

describe('subject prefixes', () => {
  it('are stripped in every language and stacking, and a forward is told from a reply', () => {
    expect(stripSubjectPrefixes('WG: AW: RE: Re[2]: TR: Fw: FWD: SV: Antw: RV: 回复: [#123] Printer')).toEqual({ subject: '[#123] Printer', forwarded: true, replied: true });
    expect(stripSubjectPrefixes('Re: Re: the fwd: button')).toEqual({ subject: 'the fwd: button', forwarded: false, replied: true });
    expect(stripSubjectPrefixes('Fwd : hello')).toEqual({ subject: 'hello', forwarded: true, replied: false });
    expect(stripSubjectPrefixes('Rechnung: März')).toEqual({ subject: 'Rechnung: März', forwarded: false, replied: false });
    expect(ticketNumberInSubject('TR: RE: [#4711] x')).toBe('4711');
    expect(ticketNumberInSubject('no number #12')).toBeNull();
  });
});

describe('replies found by their headers', () => {
  it('a person copied on the original mail who answers it joins its ticket, the owner is not copied on their own ticket', async () => {
    const colleague = newEmail('colleague');
    const { ticket, from, originalId } = await opened({ cc: [colleague] });
    expect(JSON.parse(ticket.cc!)).toEqual([colleague]);
    // "Reply all" to the original mail: to the desk and the customer, threaded on the original only.
    const line = await deliver(await rawMail({ from: colleague, to: [user('desk'), from], subject: `Re: ${ticket.subject}`, inReplyTo: originalId, references: [originalId], text: 'Same here.' }));
    expect(line).toMatchObject({ decision: 'reply', ticket_id: ticket.id });
    const last = (await messagesOf(ticket.id)).at(-1)!;
    expect([last.text, (await User.findByPk(last.user_id!))!.email]).toEqual(['Same here.', colleague]);
    expect(JSON.parse((await ticket.reload()).cc!)).toEqual([colleague]);
  });

  it('a person copied on the ticket who answers the desk alone is copied to the ticket\'s user; answered to all (the user on it), not again', async () => {
    const colleague = newEmail('colleague');
    const { ticket, from, originalId } = await opened({ cc: [colleague] });
    const about = (words: string) => smtp.mailsTo(from).filter((m) => `${m.parsed.text ?? ''} ${m.parsed.html || ''}`.includes(words));
    const answer = (to: string[], text: string) => rawMail({ from: colleague, to, subject: `Re: ${ticket.subject}`, inReplyTo: originalId, references: [originalId], text });
    // To the desk alone: the ticket's user never had it, so the help desk's copy goes to them (To), not back to its author.
    expect(await deliver(await answer([user('desk')], 'Only to the desk.'))).toMatchObject({ decision: 'reply', ticket_id: ticket.id });
    const copy = await waitFor(() => about('Only to the desk.')[0], 60000, 'the copy to the ticket\'s user');
    expect(copy.envelopeTo).toEqual([from]);
    expect(copy.parsed.subject).toContain(`[#${ticket.number}]`);
    // Reply All, the ticket's user in Cc: they have it already; nobody else is on the ticket, so no copy at all.
    const all = await deliver(await rawMail({ from: colleague, to: [user('desk')], cc: [from.toUpperCase()], subject: `Re: ${ticket.subject}`, inReplyTo: originalId, references: [originalId], text: 'To everyone.' }));
    expect(all).toMatchObject({ decision: 'reply', ticket_id: ticket.id });
    await settled(ticket.id);
    expect(about('To everyone.')).toEqual([]);
    expect(about('Only to the desk.')).toHaveLength(1);
  });

  it('someone not on the ticket who answers the thread (References only) joins it as a CC and then gets its mail', async () => {
    const { ticket, ack, from } = await opened();
    const stranger = newEmail('boss');
    // References only, no In-Reply-To (as some clients and list software write it).
    const raw = await rawMail({ from: stranger, to: [user('desk')], cc: [from], subject: 'my view', references: [ack.parsed.messageId!], text: 'Please hurry.' });
    expect(raw.toString()).not.toMatch(/^In-Reply-To:/im);
    const line = await deliver(raw);
    expect(line).toMatchObject({ decision: 'reply', ticket_id: ticket.id });
    expect(line.reason).toContain(`${stranger} joined the ticket as a CC`);
    await ticket.reload();
    expect(JSON.parse(ticket.cc!)).toEqual([stranger]);
    expect((await messagesOf(ticket.id)).map((m) => m.text)).toEqual(['Hello, my printer is broken.', 'Please hurry.']);
    // The operator's answer now reaches them too.
    expectSuccess(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: world.direct.id, text: 'On its way.' }), 'Successfully created new message!');
    const answer = await waitFor(() => smtp.mailsTo(stranger)[0], 60000, 'the answer to the new CC');
    expect(answer.parsed.text).toContain('On its way.');
  });

  it('the ticket\'s user answering with References only joins', async () => {
    const { ticket, ack, from } = await opened();
    const line = await deliver(await rawMail({ from, to: user('desk'), subject: 'no number', references: ['<unknown@elsewhere.test>', ack.parsed.messageId!] }));
    expect(line).toMatchObject({ decision: 'reply', ticket_id: ticket.id });
  });
});

describe('forwards of ticket mail', () => {
  it.each(['FWD:', 'WG:', 'TR:', 'Fw:', 'WG: AW:'])('by the ticket\'s user as "%s [#n]" join the ticket', async (prefix) => {
    const { ticket, from } = await opened();
    const line = await deliver(await rawMail({ from, to: user('desk'), subject: `${prefix} [#${ticket.number}] ${ticket.subject}`, text: 'See below.' }));
    expect(line).toMatchObject({ decision: 'reply', ticket_id: ticket.id });
  });

  it('as an attachment (message/rfc822), with a new subject, joins the ticket of the mail inside', async () => {
    const { ticket, from, ack } = await opened();
    const inner = await new MailComposer({
      from: ack.parsed.from!.text, to: from, subject: ack.parsed.subject, messageId: ack.parsed.messageId, text: ack.parsed.text,
    }).compile().build();
    const line = await deliver(await rawMail({
      from, to: user('desk'), subject: 'Fwd: see attached', text: 'Forwarding it back.',
      attachments: [{ filename: 'forwarded.eml', content: inner, contentType: 'message/rfc822' }],
    }));
    expect(line).toMatchObject({ decision: 'reply', ticket_id: ticket.id });
    expect(line.reason).toContain('forwarded as an attachment');
  });

  it('by someone not on the ticket, even with its headers (Gmail keeps them), opens a new ticket', async () => {
    const { ticket, ack } = await opened();
    const third = newEmail('third');
    const line = await deliver(await rawMail({ from: third, to: user('desk'), subject: `Fwd: ${ack.parsed.subject}`, inReplyTo: ack.parsed.messageId!, references: [ack.parsed.messageId!] }));
    expect(line.decision).toBe('new_ticket');
    expect(line.ticket_id).not.toBe(ticket.id);
    expect(JSON.parse((await ticket.reload()).cc ?? '[]')).toEqual([]);
  });
});

describe('the answer to one of our forwards', () => {
  it('as a mail client writes it (References: the forward\'s own and its id) is a note: the vendor joins nothing, no customer hears of it', async () => {
    const colleague = newEmail('colleague');
    const { ticket, from } = await opened({ cc: [colleague] });
    const vendor = newEmail('vendor');
    const sent = expectSuccess(await api.post('/api/ticket/forward', {
      ticket_id: ticket.id, user_id: world.direct.id, text: 'What would this cost?', subject: 'A customer\'s printer', to_address: [vendor],
    }), 'Successfully created new message!');
    const forward = await waitFor(() => smtp.mailsTo(vendor)[0], 60000, 'the forward');
    // A conversation of its own: it names none of the customer's mails.
    expect([forward.parsed.inReplyTo, forward.parsed.references]).toEqual([undefined, undefined]);
    // The vendor's "Reply": In-Reply-To the forward, References the forward's References and its id (RFC 5322, 3.6.4).
    const line = await deliver(await rawMail({
      from: vendor, to: user('desk'), subject: `Re: ${forward.parsed.subject}`, inReplyTo: forward.parsed.messageId!,
      references: [...[forward.parsed.references ?? []].flat(), forward.parsed.messageId!], text: 'Our cost is 40 EUR.',
    }));
    expect(line).toMatchObject({ decision: 'reply', ticket_id: ticket.id });
    expect(line.reason).toContain('the answer to a forward: filed as a note');
    const note = (await messagesOf(ticket.id)).find((m) => m.id === line.ticket_message_id)!;
    expect([note.text, note.type, note.id > sent.id]).toEqual(['Our cost is 40 EUR.', 1, true]);
    expect(JSON.parse((await ticket.reload()).cc!)).toEqual([colleague]);
    // Nothing about it goes to the customer or their colleague (a user's reply would be copied to the CC addresses).
    const about = (await ticketMailsOf(ticket.id)).filter((p) => p.messageId === note.id).map((p) => p.kind);
    expect(about.filter((k) => !k.startsWith('operator_'))).toEqual([]);
    // The customer answering the forward's thread (they hold its id only if someone passed it on) is still the customer.
    const own = await deliver(await rawMail({ from, to: user('desk'), subject: 'Re: it', inReplyTo: forward.parsed.messageId!, text: 'Me again.' }));
    expect(own).toMatchObject({ decision: 'reply', ticket_id: ticket.id });
    expect((await messagesOf(ticket.id)).find((m) => m.id === own.ticket_message_id)).toMatchObject({ type: 0, by: 1 });
  });
});

describe('the notice of a refused file', () => {
  it('to a forward\'s recipient names none of the customer\'s mails, and their answer to it is still a forward\'s answer', async () => {
    const { ticket, from } = await opened();
    const vendor = newEmail('vendor');
    expectSuccess(await api.post('/api/ticket/forward', {
      ticket_id: ticket.id, user_id: world.direct.id, text: 'Can you fix it?', subject: 'A printer', to_address: [vendor],
    }), 'Successfully created new message!');
    const forward = await waitFor(() => smtp.mailsTo(vendor)[0], 60000, 'the forward');
    await waitFor(() => MailMessageId.findOne({ where: { message_id: forward.parsed.messageId!.replace(/^<|>$/g, '') } }), 60000, 'the stored Message-ID');
    const first = await deliver(await rawMail({
      from: vendor, to: user('desk'), subject: `Re: ${forward.parsed.subject}`, inReplyTo: forward.parsed.messageId!, references: [forward.parsed.messageId!],
      text: 'The tool is attached.', attachments: [{ filename: 'tool.exe', content: 'MZ' }],
    }));
    expect(first.reason).toContain('the answer to a forward: filed as a note');
    expect(first.reason).toContain('files refused: tool.exe');
    const notice = await waitFor(() => smtp.mailsTo(vendor).find((m) => m !== forward), 60000, 'the notice of the refused file');
    expect([notice.parsed.inReplyTo, notice.parsed.references]).toEqual([undefined, undefined]);
    await waitFor(() => MailMessageId.findOne({ where: { message_id: notice.parsed.messageId!.replace(/^<|>$/g, '') } }), 60000, 'the stored Message-ID');
    // The vendor answers the notice: a note again, and they join nothing.
    const second = await deliver(await rawMail({
      from: vendor, to: user('desk'), subject: `Re: ${notice.parsed.subject}`, inReplyTo: notice.parsed.messageId!,
      references: [forward.parsed.messageId!, notice.parsed.messageId!], text: 'Zipped: see the link.',
    }));
    expect(second).toMatchObject({ decision: 'reply', ticket_id: ticket.id });
    expect(second.reason).toContain('the answer to a forward: filed as a note');
    expect(JSON.parse((await ticket.reload()).cc ?? '[]')).toEqual([]);
    expect(smtp.mailsTo(from).some((m) => m.parsed.text?.includes('Zipped'))).toBe(false);
  });
});

describe('an operator answering a notification by mail', () => {
  it('about a note writes a note (nothing reaches the customer); about the customer\'s message, a reply the customer gets', async () => {
    const { ticket, from } = await opened();
    const [agent, colleague] = [world.direct, world.grouped];
    const ticketOpened = await waitFor(() => smtp.mailsTo(agent.email).find((m) => m.parsed.subject?.includes(`[#${ticket.number}]`)), 60000, 'the operator_ticket_opened mail');
    expectSuccess(await api.put(`/api/ticket/ticket/${ticket.id}`, { assignedto: [agent.id, colleague.id] }), 'Successfully updated the ticket!');
    const note = expectSuccess(await api.post('/api/ticket/message', {
      ticket_id: ticket.id, user_id: colleague.id, message_type: 1, text: 'Refund abuse, I think.', send_operators_email: 1,
    }), 'Successfully created new message!');
    const told = await waitFor(() => smtp.mailsTo(agent.email).find((m) => m.parsed.messageId?.startsWith(`<t${ticket.id}.m${note.id}.`)), 60000, 'the operator_ticket_note mail');
    // The worker stores a Message-ID once the server took the mail (an operator answers later than a test does).
    await waitFor(() => MailMessageId.findOne({ where: { message_id: told.parsed.messageId!.replace(/^<|>$/g, '') } }), 60000, 'the stored Message-ID');
    // The agent's "Reply" to the note's notification: to the department address alone.
    const reply = (to: typeof told, text: string) => rawMail({
      from: agent.email, to: user('desk'), subject: `Re: ${to.parsed.subject}`, inReplyTo: to.parsed.messageId!,
      references: [...[to.parsed.references ?? []].flat(), to.parsed.messageId!], text,
    });
    const line = await deliver(await reply(told, 'Agreed: no refund.'));
    expect(line).toMatchObject({ decision: 'reply', ticket_id: ticket.id });
    expect(line.reason).toContain('an operator\'s answer to a note: filed as a note');
    expect((await messagesOf(ticket.id)).find((m) => m.id === line.ticket_message_id)).toMatchObject({ type: 1, by: 0, user_id: agent.id, text: 'Agreed: no refund.' });
    // The colleague hears of it as of a note; no user mail is queued for it.
    const about = (await ticketMailsOf(ticket.id)).filter((p) => p.messageId === line.ticket_message_id);
    expect(about.map((p) => [p.kind, p.recipientId])).toEqual([['operator_ticket_note', colleague.id]]);
    // Answering the notification of the customer's own message is a reply to the customer.
    const answer = await deliver(await reply(ticketOpened, 'We will look at it today.'));
    expect(answer.reason).not.toContain('filed as a note');
    expect((await messagesOf(ticket.id)).find((m) => m.id === answer.ticket_message_id)).toMatchObject({ type: 0, by: 0, user_id: agent.id });
    const mailed = await waitFor(() => smtp.mailsTo(from).find((m) => m.parsed.text?.includes('We will look at it today.')), 60000, 'the reply to the customer');
    expect(mailed.parsed.text).not.toContain('no refund');
    expect(smtp.mailsTo(from).some((m) => m.parsed.text?.includes('no refund'))).toBe(false);
  });

  it('their out-of-office answering it (with Auto-Submitted, or told by its subject only) is a note no one hears of: the customer gets nothing', async () => {
    const { ticket, from } = await opened();
    const agent = world.direct;
    const told = await waitFor(() => smtp.mailsTo(agent.email).find((m) => m.parsed.subject?.includes(`[#${ticket.number}]`)), 60000, 'the operator_ticket_opened mail');
    await waitFor(() => MailMessageId.findOne({ where: { message_id: told.parsed.messageId!.replace(/^<|>$/g, '') } }), 60000, 'the stored Message-ID');
    const outOfOffice: Array<[string, Record<string, string>]> = [['Automatic reply', { 'Auto-Submitted': 'auto-replied' }], ['Out of Office', {}]];
    for (const [prefix, headers] of outOfOffice) {
      const line = await deliver(await rawMail({
        from: `Olivia Op <${agent.email}>`, to: user('desk'), subject: `${prefix}: ${told.parsed.subject}`, inReplyTo: told.parsed.messageId!,
        references: [told.parsed.messageId!], headers, text: 'I am out until Monday. Urgent: my mobile is +44 7700 900123.',
      }));
      expect(line).toMatchObject({ decision: 'reply', ticket_id: ticket.id });
      expect(line.reason).toContain('an operator\'s automatic mail: filed as a note');
      expect((await messagesOf(ticket.id)).find((m) => m.id === line.ticket_message_id)).toMatchObject({ type: 1, by: 0, user_id: agent.id });
      expect((await ticketMailsOf(ticket.id)).filter((p) => p.messageId === line.ticket_message_id)).toEqual([]);
    }
    await settled(ticket.id);
    expect(smtp.mailsTo(from).some((m) => m.parsed.text?.includes('900123'))).toBe(false);
  });

  it('passed on to someone without an account (a team address), is answered in a note: they join nothing, no customer hears of it', async () => {
    const { ticket } = await opened();
    const told = await waitFor(() => smtp.mailsTo(world.direct.email).find((m) => m.parsed.subject?.includes(`[#${ticket.number}]`)), 60000, 'the operator_ticket_opened mail');
    await waitFor(() => MailMessageId.findOne({ where: { message_id: told.parsed.messageId!.replace(/^<|>$/g, '') } }), 60000, 'the stored Message-ID');
    const teammate = newEmail('team');
    const line = await deliver(await rawMail({
      from: teammate, to: user('desk'), subject: `Re: ${told.parsed.subject}`, inReplyTo: told.parsed.messageId!,
      references: [told.parsed.messageId!], text: 'I know this customer: call them.',
    }));
    expect(line).toMatchObject({ decision: 'reply', ticket_id: ticket.id });
    expect(line.reason).toContain('the answer to an operator\'s mail: filed as a note');
    expect((await messagesOf(ticket.id)).find((m) => m.id === line.ticket_message_id)).toMatchObject({ type: 1, by: 1 });
    expect(JSON.parse((await ticket.reload()).cc ?? '[]')).toEqual([]);
    const kinds = (await ticketMailsOf(ticket.id)).filter((p) => p.messageId === line.ticket_message_id).map((p) => p.kind);
    expect(kinds.filter((k) => !k.startsWith('operator_'))).toEqual([]);
    expect(await MailMessageId.findOne({ where: { ticket_message_id: line.ticket_message_id, direction: 'in' } })).toMatchObject({ audience: `operator:${world.direct.id}` });
  });
});

describe('one mail, two department mailboxes', () => {
  it('sent to both is one ticket, polled one after the other or at the same time', async () => {
    const other = await Department.create({ name: `Sales ${unique('s')}` });
    await DepartmentBrand.create({ department_id: other.id, brand_id: world.brand.id });
    const sales = await remoteMailbox('sales', other.id);
    for (const together of [false, true]) {
      const raw = await rawMail({ from: newEmail('both'), to: [user('desk'), user('sales')] });
      await dovecot.append(user('desk'), raw);
      await dovecot.append(user('sales'), raw);
      if (together) await Promise.all([pollMailbox(desk.id), pollMailbox(sales.id)]);
      else { await pollMailbox(desk.id); await pollMailbox(sales.id); }
      const id = /^Message-ID: <(.*)>/im.exec(raw.toString())![1];
      const lines = await IncomingMail.findAll({ where: { message_id: id } });
      expect(lines.map((l) => l.decision).sort()).toEqual(['duplicate', 'new_ticket']);
      expect(new Set(lines.map((l) => l.ticket_id)).size).toBe(1);
      // Both mailboxes moved past it and flagged it.
      expect((await dovecot.messages(user('sales'))).at(-1)!.flags).toContain('\\Seen');
      expect((await dovecot.messages(user('desk'))).at(-1)!.flags).toContain('\\Seen');
    }
  });
});

describe('a ticket number in the subject', () => {
  it('from a sender not on the ticket never joins it', async () => {
    const { ticket } = await opened();
    const line = await deliver(await rawMail({ from: newEmail('guess'), to: user('desk'), subject: `Re: [#${ticket.number}] hello` }));
    expect(line.decision).toBe('new_ticket');
    expect(line.ticket_id).not.toBe(ticket.id);
    expect(await messagesOf(ticket.id)).toHaveLength(1);
  });
});
