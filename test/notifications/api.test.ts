/**
 * The notifications driven through the API and the ticket services (createTicket, addMessage,
 * forwardTicket, updateTicket), as integrators and the mailbox worker cause them.
 */
import { MailMessageId, Ticket, TicketFeedback } from '../../src/db/models';
import { now } from '../../src/db/entity';
import { sendFeedbackRequests } from '../../src/ticket/feedbackRequests';
import { newEmail, useApi } from '../helpers/app';
import { mailAbout, mailEntries, mailTo, mailsOf, settled, useMailWorld } from './support';

const api = useApi();
const m = useMailWorld();

const b64 = (b: Buffer) => b.toString('base64');
const ok = (res: { status: number; body: any }) => {
  expect([res.status, res.body.status]).toEqual([200, 'success']);
  return res.body.data;
};
const bare = (id: string | undefined) => (id ?? '').replace(/^<|>$/g, '');

describe('through the API', () => {
  it('a ticket\'s life mails the right people, threaded, with its attachments', async () => {
    const email = newEmail('api');
    const cc = newEmail('cc');
    const created = ok(await api.post('/api/ticket/ticket', {
      brand: m.world.brand.id, department: m.world.department.id, status: m.world.openStatus, priority: m.world.priorityId,
      subject: 'Laptop <won\'t> boot', text: 'It beeps & stops.', user_email: email, user_firstname: 'Ada', cc: [cc],
    }));
    const ticket = (await Ticket.findByPk(created.id))!;

    // Opened: the user and CC, the department's operators.
    const opened = await mailTo(m.smtp, ticket, email, 'user_ticket_opened');
    expect(opened.envelopeTo.sort()).toEqual([email, cc].sort());
    expect(opened.parsed.subject).toBe(`[#${ticket.number}]: Laptop <won't> boot`);
    expect(opened.parsed.html).toContain('Laptop &lt;won&#39;t&gt; boot');
    expect(opened.parsed.from?.value[0].address).toBe(m.world.address.address);
    await mailTo(m.smtp, ticket, m.world.direct.email);
    await mailTo(m.smtp, ticket, m.world.grouped.email);
    await settled(ticket.id);
    expect(mailsOf(m.smtp, ticket)).toHaveLength(3);

    // An operator's reply with a file: to the user and CC, threaded on the ticket's mails.
    const file = Buffer.from([0, 1, 2, 250, 251, 252, 10, 13]);
    const reply = ok(await api.post('/api/ticket/message', {
      ticket_id: ticket.id, user_id: m.world.direct.id, text: 'Hold the power button.', attachment: [{ filename: 'steps.txt', contents: b64(file) }],
    }));
    const replyMail = await mailAbout(m.smtp, ticket, reply.id);
    expect(replyMail.envelopeTo.sort()).toEqual([email, cc].sort());
    expect(replyMail.parsed.headers.get('auto-submitted')).toBeUndefined();
    const stored = (await MailMessageId.findAll({ where: { ticket_id: ticket.id }, order: [['id', 'ASC']] })).map((r) => r.message_id);
    expect(bare(replyMail.parsed.inReplyTo)).toBe(stored[2]);
    expect([replyMail.parsed.references].flat().map(bare)).toEqual([stored[0], stored[2]]);
    expect(Buffer.compare(replyMail.parsed.attachments[0].content, file)).toBe(0);

    // A draft, and a reply without send_user_email: nothing.
    ok(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: m.world.direct.id, text: 'Draft', is_draft: 1 }));
    ok(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: m.world.direct.id, text: 'Quiet', send_user_email: 0 }));
    await settled(ticket.id);
    expect(mailsOf(m.smtp, ticket)).toHaveLength(4);

    // The user's reply: the department's operators (nobody is assigned).
    const userReply = ok(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: ticket.user_id, text: 'Still beeping.' }));
    const toOperator = await mailAbout(m.smtp, ticket, userReply.id);
    expect(toOperator.parsed.subject).toBe(`[#${ticket.number}]: New reply from Ada`);
    await settled(ticket.id);
    expect(mailsOf(m.smtp, ticket)).toHaveLength(6);

    // Assignment: the new assignee.
    ok(await api.put(`/api/ticket/ticket/${ticket.id}`, { assignedto: [m.world.outsider.id] }));
    const assigned = await mailTo(m.smtp, ticket, m.world.outsider.email);
    expect(assigned.parsed.subject).toBe(`[#${ticket.number}]: Ticket assigned to you: Laptop <won't> boot`);

    // A forward from the operator's own address, with its attachment.
    const vendor = newEmail('vendor');
    const pdf = Buffer.from('%PDF-1.4\n\u00ff\u0000binary');
    const forward = ok(await api.post('/api/ticket/forward', {
      ticket_id: ticket.id, user_id: m.world.grouped.id, text: 'See below.', subject: 'Broken laptop', from_address: 'me',
      bcc_address: [vendor], attachment: [{ filename: 'invoice.pdf', contents: b64(pdf) }],
    }));
    const fwd = await mailAbout(m.smtp, ticket, forward.id);
    expect(fwd.envelopeTo).toEqual([vendor]);
    expect(fwd.envelopeFrom).toBe(m.world.grouped.email);
    expect(fwd.parsed.subject).toBe(`[#${ticket.number}] Broken laptop`);
    expect(Buffer.compare(fwd.parsed.attachments[0].content, pdf)).toBe(0);
    await settled(ticket.id);
  });

  it('a resolved ticket asks for feedback once, and not after a reopening reply', async () => {
    const email = newEmail('fb');
    const created = ok(await api.post('/api/ticket/ticket', {
      brand: m.world.brand.id, department: m.world.department.id, status: m.world.openStatus, priority: m.world.priorityId,
      subject: 'Feedback please', text: 'Hi', user_email: email, send_user_email: 0, send_operators_email: 0,
    }));
    ok(await api.put(`/api/ticket/ticket/${created.id}`, { status: m.world.resolvedStatus }));
    const ticket = (await Ticket.findByPk(created.id))!;
    expect(ticket.resolved_time).not.toBeNull();
    // Resolved a day and a bit ago.
    await ticket.update({ resolved_time: now() - 86400 - 30 });
    await sendFeedbackRequests();
    const [request] = await TicketFeedback.findAll({ where: { ticket_id: ticket.id } });
    const mail = await mailTo(m.smtp, ticket, email);
    expect(mail.parsed.text).toContain(request.token);
    await sendFeedbackRequests();
    expect(await TicketFeedback.count({ where: { ticket_id: ticket.id } })).toBe(1);

    // The user replies: reopened (resolved_time cleared), nothing more is asked.
    ok(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: ticket.user_id, text: 'Actually, one more thing.', send_operators_email: 0 }));
    expect((await ticket.reload()).resolved_time).toBeNull();
    await sendFeedbackRequests();
    expect(await TicketFeedback.count({ where: { ticket_id: ticket.id } })).toBe(1);
    await settled(ticket.id);
    expect((await mailEntries(ticket.id)).map((e) => e.payload.kind)).toEqual(['user_feedback_request']);
  });
});
