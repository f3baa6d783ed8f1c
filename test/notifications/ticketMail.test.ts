import { EmailTemplate, MailMessageId, Setting, TicketMessage, Translation } from '../../src/db/models';
import { now } from '../../src/db/entity';
import { MESSAGE_TYPE } from '../../src/db/models/TicketMessage';
import { transaction } from '../../src/db/transaction';
import { emit } from '../../src/events';
import { ticketMail, type TicketMailPayload } from '../../src/ticket/mail/job';
import { REPLY_ABOVE_MARKER } from '../../src/mail/compose';
import { stripQuoted } from '../../src/mailbox/quote';
import { useApi, newEmail } from '../helpers/app';
import type { ReceivedMail } from '../helpers/smtp';
import {
  addMessage, customer, mailAbout, mailEntries, mailTo, mailWorld, mailsOf, openTicket, operator, settled, useMailWorld, type MailWorld,
} from './support';

useApi();
const m = useMailWorld();

const header = (mail: ReceivedMail, name: string) => mail.parsed.headers.get(name) as string | undefined;
const storedIds = async (ticketId: number) => (await MailMessageId.findAll({ where: { ticket_id: ticketId }, order: [['id', 'ASC']] })).map((r) => r.message_id);
const bare = (id: string | undefined) => (id ?? '').replace(/^<|>$/g, '');
const domainOf = (w: MailWorld) => new URL(w.brand.system_url!).hostname;

describe('a new ticket', () => {
  it('mails the user and the CC addresses, and the department operators except its author and inactive ones', async () => {
    const cc = newEmail('cc');
    const assignedOutsider = m.world.outsider;
    // Opened by an operator of the department on behalf of the user.
    const { ticket, message, user } = await openTicket(m.world, { cc: [cc], author: m.world.direct, assigned: [assignedOutsider.id] });

    const userMail = await mailTo(m.smtp, ticket, user.email, 'the user_ticket_opened mail');
    expect(userMail.envelopeTo.sort()).toEqual([user.email, cc].sort());
    expect(userMail.parsed.to && 'value' in userMail.parsed.to ? userMail.parsed.to.value.map((a) => a.address) : []).toEqual([user.email]);
    expect(userMail.parsed.cc && 'value' in userMail.parsed.cc ? userMail.parsed.cc.value.map((a) => a.address) : []).toEqual([cc]);
    // From the department's address, under the brand's name.
    expect(userMail.envelopeFrom).toBe(m.world.address.address);
    expect(userMail.parsed.from?.value[0]).toMatchObject({ address: m.world.address.address, name: m.world.brand.name });
    expect(userMail.parsed.subject).toBe(`[#${ticket.number}]: ${ticket.subject}`);
    expect(header(userMail, 'x-helpdesk-ticket')).toBe(ticket.number);
    expect(header(userMail, 'auto-submitted')).toBe('auto-generated');
    // The template's merge fields, escaped in HTML, as written in text, inside the brand's frame.
    const html = userMail.parsed.html as string;
    expect(html).toContain('Dear Uma User,');
    expect(html).toContain('&lt;on fire&gt; &amp; smoking');
    expect(html).toContain('It smells of &quot;smoke&quot; &lt; 2 m away.<br>\nPlease help &amp; hurry.');
    expect(html).toContain(`href="https://${domainOf(m.world)}/tickets/view/${ticket.number}?token=${ticket.token}"`);
    expect(html.indexOf('ACME-HEADER')).toBeLessThan(html.indexOf('Dear Uma User'));
    expect(html).toContain('ACME-FOOTER');
    expect(html).not.toContain('/admin/ticket/view');
    const text = userMail.parsed.text ?? '';
    expect(text).toContain(`${ticket.subject}`);
    expect(text).toContain('It smells of "smoke" < 2 m away.\nPlease help & hurry.');
    expect(text).toContain(`Kind regards,\n${m.world.brand.name}`);

    // The grouped operator and the assigned one; not the author, not the inactive one.
    const grouped = await mailTo(m.smtp, ticket, m.world.grouped.email, 'the grouped operator\'s mail');
    await mailTo(m.smtp, ticket, assignedOutsider.email, 'the assigned operator\'s mail');
    await settled(ticket.id);
    const all = mailsOf(m.smtp, ticket);
    expect(all.flatMap((m) => m.envelopeTo)).not.toContain(m.world.direct.email);
    expect(all.flatMap((m) => m.envelopeTo)).not.toContain(m.world.inactive.email);
    expect(all).toHaveLength(3);
    expect(grouped.parsed.subject).toBe(`[#${ticket.number}]: New ticket: ${ticket.subject}`);
    expect(grouped.parsed.text).toContain(`Hi ${m.world.grouped.firstname} ${m.world.grouped.lastname},`);
    expect(grouped.parsed.text).toContain(`https://${domainOf(m.world)}/admin/ticket/view/${ticket.id}`);
    expect(header(grouped, 'auto-submitted')).toBe('auto-generated');

    // Message-IDs on the brand's domain naming ticket and message, each stored.
    const pattern = new RegExp(`^<t${ticket.id}\\.m${message.id}\\.r[0-9a-f]{16}@${domainOf(m.world).replace(/\./g, '\\.')}>$`);
    for (const mail of all) expect(mail.parsed.messageId).toMatch(pattern);
    const stored = await MailMessageId.findAll({ where: { ticket_id: ticket.id } });
    expect(stored.map((s) => `<${s.message_id}>`).sort()).toEqual(all.map((m) => m.parsed.messageId).sort());
    expect(stored.every((s) => s.direction === 'out' && s.ticket_message_id === message.id)).toBe(true);
  });

  it('honours send_user_email 0 (operators are still told) and send_operators_email 0', async () => {
    const quiet = await openTicket(m.world, { sendUserEmail: false });
    await mailTo(m.smtp, quiet.ticket, m.world.direct.email);
    await settled(quiet.ticket.id);
    expect(mailsOf(m.smtp, quiet.ticket).flatMap((m) => m.envelopeTo)).not.toContain(quiet.user.email);
    expect((await mailEntries(quiet.ticket.id)).map((e) => e.payload.kind)).not.toContain('user_ticket_opened');

    const noOperators = await openTicket(m.world, { sendOperatorsEmail: false });
    await mailTo(m.smtp, noOperators.ticket, noOperators.user.email);
    await settled(noOperators.ticket.id);
    expect(mailsOf(m.smtp, noOperators.ticket)).toHaveLength(1);
  });

  it('tells the user of a ticket opened by mail or on the web only when the department says so', async () => {
    const quietWorld = { ...m.world, department: await m.world.department.update({ notify_email_ticket: 0 }) };
    try {
      const byMail = await openTicket(quietWorld, { channel: 'email' });
      const onWeb = await openTicket(quietWorld, { channel: 'web' });
      await mailTo(m.smtp, onWeb.ticket, onWeb.user.email);
      expect((await mailEntries(byMail.ticket.id)).map((e) => e.payload.kind)).not.toContain('user_ticket_opened');
      // The acknowledgement of a ticket opened by mail is an automatic reply (RFC 3834).
      await m.world.department.update({ notify_email_ticket: 1 });
      const again = await openTicket(m.world, { channel: 'email' });
      expect(header(await mailTo(m.smtp, again.ticket, again.user.email), 'auto-submitted')).toBe('auto-replied');
    } finally {
      await m.world.department.update({ notify_email_ticket: 1 });
    }
  });

  it('sends nothing for a template mapped to -1', async () => {
    const disabled = await mailWorld(m.smtp.port, { user_ticket_opened: -1 });
    const { ticket, user } = await openTicket(disabled);
    await mailTo(m.smtp, ticket, disabled.direct.email);
    await settled(ticket.id);
    expect(mailsOf(m.smtp, ticket).flatMap((m) => m.envelopeTo)).not.toContain(user.email);
    expect((await mailEntries(ticket.id)).map((e) => e.payload.kind)).not.toContain('user_ticket_opened');
  });

  it('without a department address of its brand goes out from the brand\'s default_email, else the core default_email, else no-reply@localhost', async () => {
    const world = await mailWorld(m.smtp.port);
    const core = (await Setting.findOne({ where: { scope: 'core', name: 'default_email' } }))!;
    const saved = core.value;
    const system = newEmail('system');
    const noAddress = { sendOperatorsEmail: false, values: { department_email_id: null } };
    try {
      await core.update({ value: system });
      // The brand's own address first.
      const branded = await openTicket(world, noAddress);
      const fromBrand = await mailTo(m.smtp, branded.ticket, branded.user.email);
      expect(fromBrand.parsed.from?.value[0]).toMatchObject({ address: world.brand.default_email, name: world.brand.name });

      // A brand without one: the core setting's, marked with it; and it is one of our own addresses, copied no mail.
      await world.brand.update({ default_email: null });
      const copied = newEmail('cc');
      const { ticket, user } = await openTicket(world, { ...noAddress, cc: [system, copied] });
      const mail = await mailTo(m.smtp, ticket, user.email);
      expect(mail.envelopeFrom).toBe(system);
      expect(mail.parsed.from?.value[0]).toMatchObject({ address: system, name: world.brand.name });
      expect(header(mail, 'x-loop')).toBe(system);
      expect(mail.envelopeTo.sort()).toEqual([user.email, copied].sort());

      // Nothing configured at all (or not an address): the made-up address, as documented.
      await core.update({ value: 'not an address' });
      const unset = await openTicket(world, noAddress);
      const fallback = await mailTo(m.smtp, unset.ticket, unset.user.email);
      expect(fallback.parsed.from?.value[0]).toMatchObject({ address: 'no-reply@localhost', name: world.brand.name });
      expect(header(fallback, 'x-loop')).toBe('no-reply@localhost');
    } finally {
      await core.update({ value: saved });
    }
  });

  it('of an internal ticket: operator_internal_opened to the department, no user mail', async () => {
    const { ticket } = await openTicket(m.world, { internal: true, author: m.world.grouped });
    const mail = await mailTo(m.smtp, ticket, m.world.direct.email);
    expect(mail.parsed.subject).toBe(`[#${ticket.number}]: New internal ticket: ${ticket.subject}`);
    expect(mail.parsed.text).toContain(`${m.world.grouped.firstname} ${m.world.grouped.lastname} opened internal ticket #${ticket.number}`);
    await settled(ticket.id);
    expect(mailsOf(m.smtp, ticket).map((m) => m.envelopeTo)).toEqual([[m.world.direct.email]]);
  });
});

describe('replies', () => {
  it('an operator reply reaches the user and CC as a human mail threaded on the earlier ones, with its attachments', async () => {
    const cc = newEmail('cc');
    const { ticket, user } = await openTicket(m.world, { cc: [cc], sendOperatorsEmail: false });
    const first = await mailTo(m.smtp, ticket, user.email);
    await settled(ticket.id);
    const pdf = Buffer.from([0x25, 0x50, 0x44, 0x46, 0x00, 0xff, 0x10, 0x80]);
    const reply = await addMessage(ticket, m.world.direct, {
      text: 'We replaced the toner & drum (< 5 pages left).', attachments: [{ name: 'report.pdf', contents: pdf }],
    });

    const mail = await mailAbout(m.smtp, ticket, reply.id, 'the reply mail');
    expect(mail.envelopeTo.sort()).toEqual([user.email, cc].sort());
    expect(mail.parsed.subject).toBe(`Re: [#${ticket.number}]: ${ticket.subject}`);
    expect(header(mail, 'auto-submitted')).toBeUndefined();
    expect(mail.parsed.html).toContain('We replaced the toner &amp; drum (&lt; 5 pages left).');
    expect(mail.parsed.messageId).toMatch(new RegExp(`^<t${ticket.id}\\.m${reply.id}\\.r[0-9a-f]{16}@`));
    // In-Reply-To the latest earlier mail, References the first (here the same one).
    expect(bare(mail.parsed.inReplyTo)).toBe(bare(first.parsed.messageId));
    expect([mail.parsed.references].flat().map(bare)).toEqual([bare(first.parsed.messageId)]);
    expect(mail.parsed.attachments).toHaveLength(1);
    expect(mail.parsed.attachments[0].filename).toBe('report.pdf');
    expect(mail.parsed.attachments[0].contentType).toBe('application/pdf');
    expect(Buffer.compare(mail.parsed.attachments[0].content, pdf)).toBe(0);

    // A third mail names the first in References and the second in In-Reply-To.
    await settled(ticket.id);
    const second = await addMessage(ticket, m.world.grouped, { text: 'Anything else?' });
    const third = await mailAbout(m.smtp, ticket, second.id, 'the third mail');
    expect(bare(third.parsed.inReplyTo)).toBe(bare(mail.parsed.messageId));
    expect([third.parsed.references].flat().map(bare)).toEqual([bare(first.parsed.messageId), bare(mail.parsed.messageId)]);
    // The worker records a Message-ID once its server took the mail: after the mail arrived here.
    await settled(ticket.id);
    expect(await storedIds(ticket.id)).toEqual([first, mail, third].map((m) => bare(m.parsed.messageId)));
  });

  it('each recipient\'s mail names only mails they had: the user\'s thread skips the operators\' notifications, and an operator\'s the user\'s mails', async () => {
    const { ticket, user } = await openTicket(m.world, { author: m.world.direct, assigned: [m.world.grouped.id] });
    const opened = await mailTo(m.smtp, ticket, user.email, 'the user_ticket_opened mail');
    const told = await mailTo(m.smtp, ticket, m.world.grouped.email, 'the operator_ticket_opened mail');
    await settled(ticket.id);
    // The user's reply: the assigned operator hears of it, threaded on their own mail.
    const asked = await addMessage(ticket, user, { text: 'Still broken.', sendUserEmail: false });
    const toldAgain = await mailAbout(m.smtp, ticket, asked.id, 'the operator_user_ticket_reply mail');
    expect(toldAgain.envelopeTo).toEqual([m.world.grouped.email]);
    expect(bare(toldAgain.parsed.inReplyTo)).toBe(bare(told.parsed.messageId));
    expect([toldAgain.parsed.references].flat().map(bare)).toEqual([bare(told.parsed.messageId)]);
    await settled(ticket.id);
    // The operator's answer: the user's mail names the user's own, not the operator's notifications.
    const answer = await addMessage(ticket, m.world.direct, { text: 'Fixed.' });
    const answered = await mailAbout(m.smtp, ticket, answer.id, 'the user_ticket_reply mail');
    expect(answered.envelopeTo).toEqual([user.email]);
    expect(bare(answered.parsed.inReplyTo)).toBe(bare(opened.parsed.messageId));
    expect([answered.parsed.references].flat().map(bare)).toEqual([bare(opened.parsed.messageId)]);
    await settled(ticket.id);
    const stored = await MailMessageId.findAll({ where: { ticket_id: ticket.id } });
    const operator = `operator:${m.world.grouped.id}`;
    expect(Object.fromEntries(stored.map((r) => [r.message_id, r.audience]))).toEqual({
      [bare(opened.parsed.messageId)]: 'user', [bare(answered.parsed.messageId)]: 'user',
      [bare(told.parsed.messageId)]: operator, [bare(toldAgain.parsed.messageId)]: operator,
    });
  });

  it('an operator reply with send_user_email 0 mails nobody; with send_operators_email it tells the other operators', async () => {
    const { ticket, user } = await openTicket(m.world, { sendUserEmail: false, sendOperatorsEmail: false, assigned: [m.world.grouped.id, m.world.direct.id] });
    const reply = await addMessage(ticket, m.world.direct, { sendUserEmail: false, sendOperatorsEmail: true });
    const mail = await mailTo(m.smtp, ticket, m.world.grouped.email);
    expect(mail.parsed.subject).toBe(`[#${ticket.number}]: ${m.world.direct.firstname} ${m.world.direct.lastname} replied`);
    expect(header(mail, 'auto-submitted')).toBe('auto-generated');
    await settled(ticket.id);
    expect(mailsOf(m.smtp, ticket).map((m) => m.envelopeTo)).toEqual([[m.world.grouped.email]]);
    expect((await mailEntries(ticket.id)).map((e) => e.payload)).toEqual([
      { kind: 'operator_operator_ticket_reply', ticketId: ticket.id, messageId: reply.id, recipientId: m.world.grouped.id },
    ]);
    expect(user).toBeDefined();
  });

  it('a user reply goes to the assigned and watching operators, not the whole department', async () => {
    const watcher = await operator();
    const { ticket, user } = await openTicket(m.world, { sendUserEmail: false, sendOperatorsEmail: false, assigned: [m.world.outsider.id], watching: [watcher.id] });
    await addMessage(ticket, user, { text: 'Still broken.' });
    const mail = await mailTo(m.smtp, ticket, m.world.outsider.email);
    expect(mail.parsed.subject).toBe(`[#${ticket.number}]: New reply from Uma User`);
    expect(mail.parsed.text).toContain('Still broken.');
    await mailTo(m.smtp, ticket, watcher.email);
    await settled(ticket.id);
    expect(mailsOf(m.smtp, ticket).flatMap((m) => m.envelopeTo).sort()).toEqual([m.world.outsider.email, watcher.email].sort());

    // Nobody assigned: the department's operators.
    const unassigned = await openTicket(m.world, { sendUserEmail: false, sendOperatorsEmail: false });
    await addMessage(unassigned.ticket, unassigned.user);
    await mailTo(m.smtp, unassigned.ticket, m.world.direct.email);
    await mailTo(m.smtp, unassigned.ticket, m.world.grouped.email);

    // Only an inactive operator assigned is nobody assigned: the department's active operators hear of it.
    const dormant = await openTicket(m.world, { sendUserEmail: false, sendOperatorsEmail: false, assigned: [m.world.inactive.id] });
    await addMessage(dormant.ticket, dormant.user);
    await mailTo(m.smtp, dormant.ticket, m.world.direct.email);
    await mailTo(m.smtp, dormant.ticket, m.world.grouped.email);
    await settled(dormant.ticket.id);
    expect(mailsOf(m.smtp, dormant.ticket).flatMap((x) => x.envelopeTo).sort()).toEqual([m.world.direct.email, m.world.grouped.email].sort());
  });

  it('an operator reply tells the department when those assigned and watching are all inactive', async () => {
    const { ticket } = await openTicket(m.world, { sendUserEmail: false, sendOperatorsEmail: false, assigned: [m.world.inactive.id] });
    await addMessage(ticket, m.world.outsider, { sendUserEmail: false, sendOperatorsEmail: true });
    await mailTo(m.smtp, ticket, m.world.direct.email);
    await mailTo(m.smtp, ticket, m.world.grouped.email);
    await settled(ticket.id);
    expect(mailsOf(m.smtp, ticket).flatMap((x) => x.envelopeTo).sort()).toEqual([m.world.direct.email, m.world.grouped.email].sort());
  });

  it('a note goes to the assigned and watching operators except its author, only with send_operators_email', async () => {
    const watcher = await operator();
    const { ticket } = await openTicket(m.world, { sendUserEmail: false, sendOperatorsEmail: false, assigned: [m.world.direct.id], watching: [watcher.id] });
    await addMessage(ticket, m.world.direct, { type: MESSAGE_TYPE.NOTE, text: 'Internal: <b>check</b> toner', sendOperatorsEmail: true });
    const mail = await mailTo(m.smtp, ticket, watcher.email);
    expect(mail.parsed.subject).toBe(`[#${ticket.number}]: New note by ${m.world.direct.firstname} ${m.world.direct.lastname}`);
    // The note's text is rich text: its markup goes out as markup (test/notifications/richTextMail.test.ts).
    expect(mail.parsed.html).toContain('Internal: <b>check</b> toner');
    expect(mail.parsed.text).toContain('Internal: check toner');
    await settled(ticket.id);
    expect(mailsOf(m.smtp, ticket).map((m) => m.envelopeTo)).toEqual([[watcher.email]]);

    // Without the flag (the API's default for an operator's message), and never to the user.
    await addMessage(ticket, m.world.direct, { type: MESSAGE_TYPE.NOTE, sendOperatorsEmail: false, sendUserEmail: true });
    await settled(ticket.id);
    expect(mailsOf(m.smtp, ticket)).toHaveLength(1);
  });

  it('drafts send nothing', async () => {
    const { ticket } = await openTicket(m.world, { sendUserEmail: false, sendOperatorsEmail: false, assigned: [m.world.direct.id] });
    await addMessage(ticket, m.world.grouped, { isDraft: true });
    await addMessage(ticket, m.world.grouped, { type: MESSAGE_TYPE.NOTE, isDraft: true });
    await addMessage(ticket, m.world.grouped, {
      type: MESSAGE_TYPE.FORWARD, isDraft: true,
      extra: { to_address: [newEmail('fw')], cc_address: null, bcc_address: null, subject: 'Fwd', from_address: null },
    });
    expect(await mailEntries(ticket.id)).toEqual([]);
  });

  it('a disabled template, an inactive recipient, a deleted message or a trashed ticket stop a mail already queued', async () => {
    const { ticket, user } = await openTicket(m.world, { sendUserEmail: false, sendOperatorsEmail: false });
    const reply = await addMessage(ticket, m.world.direct, { sendUserEmail: false });
    const handle = (p: TicketMailPayload) => ticketMail.handle(p, undefined as never);
    const send = () => handle({ kind: 'user_ticket_reply', ticketId: ticket.id, messageId: reply.id });

    const templates = m.world.department.email_templates!;
    await m.world.department.update({ email_templates: JSON.stringify({ ...JSON.parse(templates), user_ticket_reply: -1 }) });
    try {
      expect(await send()).toEqual({ skipped: 'the email template is disabled' });
    } finally {
      await m.world.department.update({ email_templates: templates });
    }
    await user.update({ active: 0 });
    expect(await send()).toEqual({ skipped: 'no recipient: the user is inactive and nobody is copied' });
    await user.update({ active: 1 });
    expect(await handle({ kind: 'operator_assigned', ticketId: ticket.id, recipientId: m.world.inactive.id })).toEqual({ skipped: 'the operator is inactive' });
    await ticket.update({ deleted_at: 1 });
    expect(await send()).toEqual({ skipped: 'the ticket is in the trash' });
    await ticket.update({ deleted_at: null });
    await reply.destroy();
    expect(await send()).toEqual({ skipped: 'the message no longer exists' });
    expect(mailsOf(m.smtp, ticket)).toEqual([]);
  });
});

describe('forwards', () => {
  it('go to their to, cc and bcc recipients from their from_address, with the attachments byte for byte', async () => {
    const { ticket } = await openTicket(m.world, { sendUserEmail: false, sendOperatorsEmail: false });
    const [to, cc, bcc] = [newEmail('to'), newEmail('cc'), newEmail('bcc')];
    const png = Buffer.alloc(70_000);
    for (let i = 0; i < png.length; i++) png[i] = (i * 7919) % 256;
    const csv = Buffer.from('a,b\r\n1,2\r\n');
    const message = await addMessage(ticket, m.world.grouped, {
      type: MESSAGE_TYPE.FORWARD, text: 'Please look at this: a < b & c.',
      attachments: [{ name: 'screen.png', contents: png }, { name: 'data.csv', contents: csv }],
      // A department address among the recipients is dropped: it would come back in as a message.
      extra: { to_address: [to, m.world.address.address], cc_address: [cc], bcc_address: [bcc], subject: 'Have a look', from_address: m.world.grouped.email },
    });
    const mail = await mailTo(m.smtp, ticket, bcc, 'the forward');
    expect(mail.envelopeTo.sort()).toEqual([to, cc, bcc].sort());
    expect(mail.envelopeFrom).toBe(m.world.grouped.email);
    expect(mail.parsed.from?.value[0]).toMatchObject({ address: m.world.grouped.email, name: `${m.world.grouped.firstname} ${m.world.grouped.lastname}` });
    expect(header(mail, 'bcc')).toBeUndefined();
    expect(mail.parsed.subject).toBe(`[#${ticket.number}] Have a look`);
    expect(header(mail, 'auto-submitted')).toBeUndefined();
    expect(mail.parsed.text).toContain('Please look at this: a < b & c.');
    expect(mail.parsed.html).toContain('Please look at this: a &lt; b &amp; c.');
    expect(mail.parsed.messageId).toMatch(new RegExp(`^<t${ticket.id}\\.m${message.id}\\.r`));
    const files = Object.fromEntries(mail.parsed.attachments.map((a) => [a.filename, a.content]));
    expect(Object.keys(files).sort()).toEqual(['data.csv', 'screen.png']);
    expect(Buffer.compare(files['screen.png'], png)).toBe(0);
    expect(Buffer.compare(files['data.csv'], csv)).toBe(0);
    await settled(ticket.id);
    expect(mailsOf(m.smtp, ticket)).toHaveLength(1);
  });

  it('without a from_address go out from the ticket\'s department address', async () => {
    const { ticket } = await openTicket(m.world, { sendUserEmail: false, sendOperatorsEmail: false });
    const to = newEmail('to');
    await addMessage(ticket, m.world.grouped, {
      type: MESSAGE_TYPE.FORWARD, extra: { to_address: [to], cc_address: null, bcc_address: null, subject: `[#${ticket.number}] FYI`, from_address: null },
    });
    const mail = await mailTo(m.smtp, ticket, to);
    expect(mail.parsed.from?.value[0]).toMatchObject({ address: m.world.address.address, name: m.world.brand.name });
    expect(mail.parsed.subject).toBe(`[#${ticket.number}] FYI`);
  });

  it('go out when the ticket is trashed after the forward was accepted (the notifications of a trashed ticket do not)', async () => {
    const { ticket } = await openTicket(m.world, { sendUserEmail: false, sendOperatorsEmail: false, assigned: [m.world.outsider.id] });
    const to = newEmail('to');
    // Accepted, then trashed before the mail worker gets to it: one transaction makes sure of the order.
    await transaction(async (t) => {
      const forward = await TicketMessage.create({
        ticket_id: ticket.id, channel_id: ticket.channel_id, user_id: m.world.grouped.id, by: 0, type: MESSAGE_TYPE.FORWARD, text: 'FYI',
        extra: JSON.stringify({ to_address: [to], cc_address: null, bcc_address: null, subject: 'Trashed after', from_address: null }),
      }, { transaction: t });
      await emit(t, 'message.forwarded', { ticketId: ticket.id, messageId: forward.id });
      const note = await TicketMessage.create({
        ticket_id: ticket.id, channel_id: ticket.channel_id, user_id: m.world.grouped.id, by: 0, type: MESSAGE_TYPE.NOTE, text: 'Noted',
      }, { transaction: t });
      await emit(t, 'message.created', { ticketId: ticket.id, messageId: note.id, sendUserEmail: false, sendOperatorsEmail: true });
      await ticket.update({ deleted_at: now() }, { transaction: t });
    });
    await settled(ticket.id);
    expect((await mailEntries(ticket.id)).map((e) => e.payload.kind).sort()).toEqual(['forward', 'operator_ticket_note']);
    // The forward went out; the note's notification to the assigned operator was skipped.
    expect(mailsOf(m.smtp, ticket).map((sent) => sent.envelopeTo)).toEqual([[to]]);
  });
});

describe('assignment', () => {
  it('tells each newly assigned active operator', async () => {
    const { ticket } = await openTicket(m.world, { sendUserEmail: false, sendOperatorsEmail: false });
    await transaction((t) => emit(t, 'ticket.updated', { ticketId: ticket.id, changes: ['assignedto'], newlyAssigned: [m.world.outsider.id, m.world.inactive.id] }));
    const mail = await mailTo(m.smtp, ticket, m.world.outsider.email);
    expect(mail.parsed.subject).toBe(`[#${ticket.number}]: Ticket assigned to you: ${ticket.subject}`);
    expect(mail.parsed.messageId).toMatch(new RegExp(`^<t${ticket.id}\\.r[0-9a-f]{16}@`));
    await settled(ticket.id);
    expect(mailsOf(m.smtp, ticket)).toHaveLength(1);
    // Other changes mail nobody.
    await transaction((t) => emit(t, 'ticket.updated', { ticketId: ticket.id, changes: ['priority'], newlyAssigned: [] }));
    expect(await mailEntries(ticket.id)).toHaveLength(1);
  });
});

describe('the brand\'s header and footer', () => {
  it('are read as text as the template is: their links keep their address in the text part', async () => {
    const world = await mailWorld(m.smtp.port);
    await world.brand.update({
      global_email_header: '<p>Read <a href="https://beta.example.net/help">our help</a> &amp; <a href="https://beta.example.net/">https://beta.example.net/</a></p>',
      global_email_footer: '<p><a href="https://beta.example.net/unsub">Unsubscribe</a><br>Acme &quot;Beta&quot;</p>',
    });
    const { ticket, user } = await openTicket(world, { sendOperatorsEmail: false });
    const mail = await mailTo(m.smtp, ticket, user.email);
    const text = mail.parsed.text ?? '';
    // Below the reply marker, which tops every ticket mail.
    expect(text.startsWith(`${REPLY_ABOVE_MARKER}\n\nRead our help (https://beta.example.net/help) & https://beta.example.net/\n\n`)).toBe(true);
    expect(text.endsWith('\n\nUnsubscribe (https://beta.example.net/unsub)\nAcme "Beta"')).toBe(true);
    expect(mail.parsed.html).toContain('<a href="https://beta.example.net/unsub">Unsubscribe</a>');
  });
});

describe('the reply marker', () => {
  it('tops every ticket mail, in its text and its HTML, and a reply by mail that quotes the mail without > is cut there', async () => {
    const world = await mailWorld(m.smtp.port);
    const { ticket, user } = await openTicket(world);
    const mails = [await mailTo(m.smtp, ticket, user.email), await mailTo(m.smtp, ticket, world.direct.email)];
    for (const mail of mails) {
      expect((mail.parsed.text ?? '').startsWith(`${REPLY_ABOVE_MARKER}\n\n`)).toBe(true);
      expect(mail.parsed.html).toMatch(new RegExp(`^<div style="[^"]*">${REPLY_ABOVE_MARKER}</div>\n`));
    }
    // A client that quotes the whole mail as plain lines (no >, no attribution) under the reply.
    expect(stripQuoted(`Thanks, that fixed it.\n\n${mails[0].parsed.text}`)).toBe('Thanks, that fixed it.');
  });
});

describe('templates', () => {
  it('are read in the recipient\'s language and in the brand\'s own version when there is one', async () => {
    const shipped = (await EmailTemplate.findOne({ where: { name: 'user_ticket_opened', brand_id: null } }))!;
    await Translation.bulkCreate([
      { record_type: 'email_template', record_id: shipped.id, locale: 'fr', field: 'subject', value: '[#{{ ticket.number }}] Billet ouvert : {{ ticket.subject }}' },
      { record_type: 'email_template', record_id: shipped.id, locale: 'fr', field: 'contents', value: '<p>Bonjour {{ user.firstname }} &amp; bienvenue</p>' },
    ], { ignoreDuplicates: true });
    try {
      const french = await customer(m.world.brand.id, { language_code: 'fr', firstname: 'Zoé' });
      const fr = await openTicket(m.world, { user: french, sendOperatorsEmail: false });
      const mail = await mailTo(m.smtp, fr.ticket, french.email);
      expect(mail.parsed.subject).toBe(`[#${fr.ticket.number}] Billet ouvert : ${fr.ticket.subject}`);
      expect(mail.parsed.html).toContain('<p>Bonjour Zoé &amp; bienvenue</p>');
      expect(mail.parsed.text).toContain('Bonjour Zoé & bienvenue');

      // The brand's own version of the template replaces the shipped one (no translation: as stored).
      const own = await EmailTemplate.create({
        brand_id: m.world.brand.id, name: 'user_ticket_opened', subject: 'We got it: {{ ticket.subject }}', contents: '<p>Own {{ brand.name }}</p>',
      });
      try {
        const other = await openTicket(m.world, { sendOperatorsEmail: false });
        const ownMail = await mailTo(m.smtp, other.ticket, other.user.email);
        // The template's subject lacks the number: it is put in front.
        expect(ownMail.parsed.subject).toBe(`[#${other.ticket.number}] We got it: ${other.ticket.subject}`);
        expect(ownMail.parsed.html).toContain(`<p>Own ${m.world.brand.name}</p>`);
      } finally {
        await own.destroy();
      }
    } finally {
      await Translation.destroy({ where: { record_type: 'email_template', record_id: shipped.id, locale: 'fr' } });
    }
  });

  it('reach a recipient who reads the language of the stored text as stored, not in the brand\'s default language', async () => {
    const world = await mailWorld(m.smtp.port);
    await world.brand.update({ default_language: 'fr' });
    const shipped = await Promise.all(['user_ticket_opened', 'operator_ticket_opened'].map(async (name) => (await EmailTemplate.findOne({ where: { name, brand_id: null } }))!));
    await Translation.bulkCreate(shipped.flatMap((t) => [
      { record_type: 'email_template', record_id: t.id, locale: 'fr', field: 'subject', value: `FR ${t.name} {{ ticket.subject }}` },
      { record_type: 'email_template', record_id: t.id, locale: 'fr', field: 'contents', value: `<p>Bonjour (${t.name})</p>` },
    ]), { ignoreDuplicates: true });
    try {
      // The stored text is in the system's default language (core default_frontend_language and default_operator_language: en).
      await world.direct.update({ language_code: 'en' });
      const english = await customer(world.brand.id, { language_code: 'en' });
      const unset = await customer(world.brand.id);
      const a = await openTicket(world, { user: english });
      const b = await openTicket(world, { user: unset, sendOperatorsEmail: false });
      const [toEnglish, toUnset, toEnglishOperator, toUnsetOperator] = await Promise.all([
        mailTo(m.smtp, a.ticket, english.email), mailTo(m.smtp, b.ticket, unset.email),
        mailTo(m.smtp, a.ticket, world.direct.email), mailTo(m.smtp, a.ticket, world.grouped.email),
      ]);
      expect(toEnglish.parsed.subject).toBe(`[#${a.ticket.number}]: ${a.ticket.subject}`);
      expect(toEnglish.parsed.text).toContain('Dear Uma User,');
      expect(toEnglishOperator.parsed.subject).toBe(`[#${a.ticket.number}]: New ticket: ${a.ticket.subject}`);
      // Without a language of their own: the brand's default.
      expect(toUnset.parsed.subject).toBe(`[#${b.ticket.number}] FR user_ticket_opened ${b.ticket.subject}`);
      expect(toUnset.parsed.html).toContain('<p>Bonjour (user_ticket_opened)</p>');
      expect(toUnsetOperator.parsed.subject).toBe(`[#${a.ticket.number}] FR operator_ticket_opened ${a.ticket.subject}`);
    } finally {
      await Translation.destroy({ where: { record_type: 'email_template', record_id: shipped.map((t) => t.id), locale: 'fr' } });
    }
  });
});
