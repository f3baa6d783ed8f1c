/**
 * The notifications driven through the API and the ticket services (createTicket, addMessage,
 * forwardTicket, updateTicket), as integrators and the mailbox worker cause them.
 */
import { MailMessageId, Ticket, TicketFeedback } from '../../src/db/models';
import { now } from '../../src/db/entity';
import { sendFeedbackRequests } from '../../src/ticket/feedbackRequests';
import { newEmail, useApi } from '../helpers/app';
import { waitFor } from '../helpers/smtp';
import { transaction } from '../../src/db/transaction';
import { addMessage } from '../../src/ticket/messages/service';
import { customer, mailAbout, mailEntries, mailTo, mailsOf, settled, useMailWorld } from './support';

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

    // An operator's reply with a file: to the user and CC, threaded on the mails they had (not the operators').
    const file = Buffer.from([0, 1, 2, 250, 251, 252, 10, 13]);
    const reply = ok(await api.post('/api/ticket/message', {
      ticket_id: ticket.id, user_id: m.world.direct.id, text: 'Hold the power button.', attachment: [{ filename: 'steps.txt', contents: b64(file) }],
    }));
    const replyMail = await mailAbout(m.smtp, ticket, reply.id);
    expect(replyMail.envelopeTo.sort()).toEqual([email, cc].sort());
    expect(replyMail.parsed.headers.get('auto-submitted')).toBeUndefined();
    // The worker stores a Message-ID once the SMTP server took the mail: wait for it to finish the job.
    await settled(ticket.id);
    expect(await MailMessageId.count({ where: { ticket_id: ticket.id } })).toBe(4);
    expect(bare(replyMail.parsed.inReplyTo)).toBe(bare(opened.parsed.messageId));
    expect([replyMail.parsed.references].flat().map(bare)).toEqual([bare(opened.parsed.messageId)]);
    expect(Buffer.compare(replyMail.parsed.attachments[0].content, file)).toBe(0);

    // A draft, and a reply without send_user_email: nothing.
    ok(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: m.world.direct.id, text: 'Draft', is_draft: 1 }));
    ok(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: m.world.direct.id, text: 'Quiet', send_user_email: 0 }));
    await settled(ticket.id);
    expect(mailsOf(m.smtp, ticket)).toHaveLength(4);

    // The user's reply: the department's operators (nobody is assigned), and its copy to the CC address.
    const userReply = ok(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: ticket.user_id, text: 'Still beeping.' }));
    const toOperator = await waitFor(() => mailsOf(m.smtp, ticket).find((mail) => mail.parsed.messageId?.startsWith(`<t${ticket.id}.m${userReply.id}.`)
      && mail.envelopeTo.includes(m.world.direct.email)), 60000, 'the operator\'s mail about the user\'s reply');
    expect(toOperator.parsed.subject).toBe(`[#${ticket.number}]: New reply from Ada`);
    await settled(ticket.id);
    const aboutReply = mailsOf(m.smtp, ticket).filter((mail) => mail.parsed.messageId?.startsWith(`<t${ticket.id}.m${userReply.id}.`));
    expect(aboutReply.map((mail) => mail.envelopeTo).sort()).toEqual([[cc], [m.world.direct.email], [m.world.grouped.email]].sort());
    expect(mailsOf(m.smtp, ticket)).toHaveLength(7);

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

  it('a user\'s reply reaches the ticket\'s CC addresses and, written by someone else, its user (never its author), threaded, with its files; send_user_email=0 none', async () => {
    const email = newEmail('owner');
    const [cc1, cc2] = [newEmail('cc1'), newEmail('cc2')];
    const created = ok(await api.post('/api/ticket/ticket', {
      brand: m.world.brand.id, department: m.world.department.id, status: m.world.openStatus, priority: m.world.priorityId,
      subject: 'Copier jam', text: 'Jammed.', user_email: email, cc: [cc1, cc2], send_operators_email: 0,
    }));
    const ticket = (await Ticket.findByPk(created.id))!;
    const opened = await mailTo(m.smtp, ticket, email, 'user_ticket_opened');
    await settled(ticket.id);

    // The ticket's user replies (send_user_email defaults to 1): one mail to the CC addresses, not to the user.
    const file = Buffer.from([1, 2, 3, 254, 255]);
    const reply = ok(await api.post('/api/ticket/message', {
      ticket_id: ticket.id, user_id: ticket.user_id, text: 'Now it squeaks too.', send_operators_email: 0,
      attachment: [{ filename: 'noise.log', contents: b64(file) }],
    }));
    const copy = await mailAbout(m.smtp, ticket, reply.id, 'the copy of the user\'s reply');
    expect(copy.envelopeTo.sort()).toEqual([cc1, cc2].sort());
    expect(copy.envelopeFrom).toBe(m.world.address.address);
    expect(copy.parsed.subject).toBe(`Re: [#${ticket.number}]: Copier jam`);
    expect(copy.parsed.html).toContain('Now it squeaks too.');
    // Written by a person: no Auto-Submitted; threaded on the ticket's mail, with the message's file.
    expect(copy.parsed.headers.get('auto-submitted')).toBeUndefined();
    expect(bare(copy.parsed.inReplyTo)).toBe(bare(opened.parsed.messageId));
    expect([copy.parsed.references].flat().map(bare)).toEqual([bare(opened.parsed.messageId)]);
    expect(copy.parsed.headers.get('thread-topic')).toBe('Copier jam');
    expect(copy.parsed.attachments.map((a) => [a.filename, Buffer.compare(a.content, file)])).toEqual([['noise.log', 0]]);
    await settled(ticket.id);
    expect(await MailMessageId.count({ where: { ticket_id: ticket.id, ticket_message_id: reply.id, direction: 'out' } })).toBe(1);

    // A person on the CC list replies: the ticket's user (To) and the other CC address get it, not
    // the author; threaded on the acknowledgement, the latest mail all of them had (the user never
    // had the CC addresses' copy before).
    const copied = await customer(m.world.brand.id, { email: cc1 });
    const theirs = ok(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: copied.id, text: 'Same here.', send_operators_email: 0 }));
    const second = await mailAbout(m.smtp, ticket, theirs.id);
    expect(second.envelopeTo.sort()).toEqual([cc2, email].sort());
    expect(second.parsed.to && 'value' in second.parsed.to ? second.parsed.to.value.map((a) => a.address) : []).toEqual([email]);
    expect(bare(second.parsed.inReplyTo)).toBe(bare(opened.parsed.messageId));
    await settled(ticket.id);

    // send_user_email=0: nobody.
    const quiet = ok(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: ticket.user_id, text: 'Quiet.', send_user_email: 0, send_operators_email: 0 }));
    await settled(ticket.id);
    expect((await mailEntries(ticket.id)).filter((e) => e.payload.messageId === quiet.id)).toEqual([]);
    expect(mailsOf(m.smtp, ticket).map((mail) => mail.envelopeTo.sort())).toEqual([[cc1, cc2, email].sort(), [cc1, cc2].sort(), [cc2, email].sort()]);
    expect(mailsOf(m.smtp, ticket).flatMap((mail) => mail.envelopeTo).filter((a) => a === email)).toHaveLength(2);

    // A reply by mail (as the mailbox worker files it) copied to cc2 reached cc2 itself: only cc1 gets the copy,
    // threaded on the CC addresses' own copy before (not on the copy of cc1's reply, which cc1 never had).
    const byMail = await transaction((t) => addMessage({ ticketId: ticket.id, userId: ticket.user_id, text: 'By mail.', channel: 'email', cc: [cc2], sendOperatorsEmail: false }, t));
    const byMailCopy = await mailAbout(m.smtp, ticket, byMail.message.id);
    expect(byMailCopy.envelopeTo).toEqual([cc1]);
    expect(bare(byMailCopy.parsed.inReplyTo)).toBe(bare(copy.parsed.messageId));
    await settled(ticket.id);
    expect(mailsOf(m.smtp, ticket)).toHaveLength(4);

    // A person on the CC list replies by mail (copying the ticket's user, whose address the message's
    // `cc` does not keep) without the mailbox worker's word on it (userOnMail): the ticket's user gets
    // no copy (they may have it already); cc2 gets the copy. The worker's cases: mailbox/realThreading.test.ts.
    const ccByMail = await transaction((t) => addMessage({ ticketId: ticket.id, userId: copied.id, text: 'Me too, by mail.', channel: 'email', cc: [email], sendOperatorsEmail: false }, t));
    expect((await mailAbout(m.smtp, ticket, ccByMail.message.id)).envelopeTo).toEqual([cc2]);
    await settled(ticket.id);
    expect(mailsOf(m.smtp, ticket)).toHaveLength(5);

    // An operator's reply to the user and CC names none of the copies, which not all of them had: In-Reply-To the
    // acknowledgement, the latest mail they all had.
    const answer = ok(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: m.world.direct.id, text: 'A new roller is on its way.', send_operators_email: 0 }));
    const answerMail = await mailAbout(m.smtp, ticket, answer.id);
    expect(answerMail.envelopeTo.sort()).toEqual([email, cc1, cc2].sort());
    expect(bare(answerMail.parsed.inReplyTo)).toBe(bare(opened.parsed.messageId));
    expect([answerMail.parsed.references].flat().map(bare)).toEqual([bare(opened.parsed.messageId)]);
  });

  it('nobody gets a copy of their own message, an operator told of one gets no customer copy too, and our own addresses none', async () => {
    const email = newEmail('own');
    const cc1 = newEmail('cc1');
    const { direct, grouped, outsider } = m.world;
    const brandAddress = m.world.brand.default_email!;
    // On the CC list: a customer, two operators (grouped is of the department, outsider is assigned) and the brand's own address.
    const created = ok(await api.post('/api/ticket/ticket', {
      brand: m.world.brand.id, department: m.world.department.id, status: m.world.openStatus, priority: m.world.priorityId,
      subject: 'Copies', text: 'Who gets what?', user_email: email, cc: [cc1, grouped.email, outsider.email, brandAddress], assignedto: [outsider.id],
    }));
    const ticket = (await Ticket.findByPk(created.id))!;
    /** Who received each mail about the message, one sorted list per mail, in a sorted list. */
    const recipientsOf = async (messageId: number) => {
      await settled(ticket.id);
      return mailsOf(m.smtp, ticket).filter((mail) => mail.parsed.messageId?.startsWith(`<t${ticket.id}.m${messageId}.`))
        .map((mail) => [...mail.envelopeTo].sort()).sort();
    };
    const first = ok(await api.get(`/api/ticket/message?ticket_id=${ticket.id}`))[0].id as number;
    // Opened: the operators told of it by their notification are not copied on the user's acknowledgement.
    expect(await recipientsOf(first)).toEqual([[cc1, email].sort(), [direct.email], [grouped.email], [outsider.email]].sort());

    // An operator's reply copying its author: not back to the author (send_operators_email 0: the operators on the list get the copy).
    const own = ok(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: direct.id, text: 'Copying myself.', cc: [direct.email] }));
    expect(await recipientsOf(own.id)).toEqual([[cc1, email, grouped.email, outsider.email].sort()]);

    // An operator on the CC list replies, telling the operators: not to its author; outsider has the operator mail only.
    const listed = ok(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: grouped.id, text: 'From the list.', send_operators_email: 1 }));
    expect(await recipientsOf(listed.id)).toEqual([[cc1, direct.email, email].sort(), [outsider.email]].sort());

    // The user's reply: the assigned operator's notification, and the copy to the CC list without them.
    const users = ok(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: ticket.user_id, text: 'Thanks.' }));
    expect(await recipientsOf(users.id)).toEqual([[cc1, direct.email, grouped.email].sort(), [outsider.email]].sort());
    // The brand's own address never got a copy.
    expect(mailsOf(m.smtp, ticket).flatMap((mail) => mail.envelopeTo)).not.toContain(brandAddress);
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
    const mail = await waitFor(() => mailsOf(m.smtp, ticket).find((sent) => sent.parsed.text?.includes(request.token)), 60000, 'the feedback request');
    expect(mail.envelopeTo).toEqual([email]);
    await sendFeedbackRequests();
    expect(await TicketFeedback.count({ where: { ticket_id: ticket.id } })).toBe(1);

    // The user replies: reopened (resolved_time cleared), nothing more is asked.
    ok(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: ticket.user_id, text: 'Actually, one more thing.', send_operators_email: 0 }));
    expect((await ticket.reload()).resolved_time).toBeNull();
    await sendFeedbackRequests();
    expect(await TicketFeedback.count({ where: { ticket_id: ticket.id } })).toBe(1);
    await settled(ticket.id);
    // Resolving it by the API told the user (user_ticket_operatorclose), then the request went out once.
    expect((await mailEntries(ticket.id)).map((e) => e.payload.kind)).toEqual(['user_ticket_operatorclose', 'user_feedback_request']);
  });

  it('the feedback request, which only the user had, is named by no mail the CC addresses get: their copy of a reply, a reply to all', async () => {
    const [email, cc1, cc2] = [newEmail('fb'), newEmail('cc'), newEmail('cc')];
    const created = ok(await api.post('/api/ticket/ticket', {
      brand: m.world.brand.id, department: m.world.department.id, status: m.world.openStatus, priority: m.world.priorityId,
      subject: 'Feedback and copies', text: 'Hi', user_email: email, cc: [cc1, cc2], send_user_email: 0, send_operators_email: 0,
    }));
    ok(await api.put(`/api/ticket/ticket/${created.id}`, { status: m.world.resolvedStatus }));
    const ticket = (await Ticket.findByPk(created.id))!;
    // The closing mail went to the user and both CC addresses.
    const closing = await mailTo(m.smtp, ticket, email, 'user_ticket_operatorclose');
    expect(closing.envelopeTo.sort()).toEqual([email, cc1, cc2].sort());
    await ticket.update({ resolved_time: now() - 86400 - 30 });
    await sendFeedbackRequests();
    const [request] = await TicketFeedback.findAll({ where: { ticket_id: ticket.id } });
    const feedback = await waitFor(() => mailsOf(m.smtp, ticket).find((sent) => sent.parsed.text?.includes(request.token)), 60000, 'the feedback request');
    expect(feedback.envelopeTo).toEqual([email]);
    expect(bare(feedback.parsed.inReplyTo)).toBe(bare(closing.parsed.messageId));
    await settled(ticket.id);

    // A person on the CC list replies: the copy to the user and the other one names the closing mail, which they had, not the
    // feedback request, which the other one never had.
    const copied = await customer(m.world.brand.id, { email: cc1 });
    const theirs = ok(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: copied.id, text: 'One more thing.', send_operators_email: 0 }));
    const copy = await mailAbout(m.smtp, ticket, theirs.id);
    expect(copy.envelopeTo.sort()).toEqual([cc2, email].sort());
    expect(bare(copy.parsed.inReplyTo)).toBe(bare(closing.parsed.messageId));
    expect([copy.parsed.references].flat().map(bare)).not.toContain(bare(feedback.parsed.messageId));
    await settled(ticket.id);

    // An operator's reply to the user and the CC addresses names neither: the closing mail, the latest they all had.
    const answer = ok(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: m.world.direct.id, text: 'Tell us.', send_operators_email: 0 }));
    const answerMail = await mailAbout(m.smtp, ticket, answer.id);
    expect(answerMail.envelopeTo.sort()).toEqual([email, cc1, cc2].sort());
    expect(bare(answerMail.parsed.inReplyTo)).toBe(bare(closing.parsed.messageId));
    const named = [answerMail.parsed.references].flat().map(bare);
    expect(named).not.toContain(bare(feedback.parsed.messageId));
    expect(named).not.toContain(bare(copy.parsed.messageId));
  });
});
