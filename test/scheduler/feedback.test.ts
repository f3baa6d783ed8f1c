import { FeedbackForm, Ticket, TicketFeedback } from '../../src/db/models';
import { now } from '../../src/db/entity';
import { mailSpec } from '../../src/wiring';
import { closeTransports } from '../../src/mail/transports';
import { createWorker } from '../../src/queue/runWorker';
import { FEEDBACK_LOOKBACK_SECONDS, sendFeedbackRequests } from '../../src/ticket/feedbackRequests';
import { useApi } from '../helpers/app';
import { startSmtp, type TestSmtp } from '../helpers/smtp';
import { mailEntries, mailTo, mailWorld, mailsOf, openTicket, settled, type MailWorld } from '../notifications/support';

useApi();
let smtp: TestSmtp;
let world: MailWorld;
let form: FeedbackForm;
let mail: Awaited<ReturnType<typeof createWorker>> | undefined;

const startMail = async () => {
  mail ??= await createWorker(mailSpec());
};

beforeAll(async () => {
  smtp = await startSmtp();
  world = await mailWorld(smtp.port);
  form = (await FeedbackForm.findOne({ order: [['order', 'ASC'], ['id', 'ASC']] }))!;
});

afterAll(async () => {
  await mail?.close();
  closeTransports();
  await smtp.close();
});

/** A ticket resolved `ago` seconds ago. */
async function resolvedTicket(ago: number, values: Partial<Ticket> = {}) {
  const resolvedAt = now() - ago;
  return openTicket(world, {
    emitEvent: false,
    values: { status_id: world.resolvedStatus, resolved_time: resolvedAt, created_at: resolvedAt - 60, last_reply_time: resolvedAt - 60, ...values },
  });
}

const requestsOf = (ticketId: number) => TicketFeedback.findAll({ where: { ticket_id: ticketId }, order: [['id', 'ASC']] });

describe('feedback requests', () => {
  // First, without a mail worker: the request's mail waits in the queue while the ticket reopens.
  it('are cancelled when the ticket reopens before the request went out', async () => {
    const { ticket, user } = await resolvedTicket(form.time_after_resolved + 30);
    await sendFeedbackRequests();
    expect(await requestsOf(ticket.id)).toHaveLength(1);
    // A user reply reopens it (what addMessage does) before the mail worker got to the request.
    await ticket.update({ status_id: world.openStatus, resolved_time: null, reopened_time: now() });
    await startMail();
    await settled(ticket.id);
    expect(await requestsOf(ticket.id)).toEqual([]);
    expect(mailsOf(smtp, ticket)).toEqual([]);
    expect(user).toBeDefined();
  });

  it('are made time_after_resolved after the resolution, mailed with the form\'s template, once per resolution', async () => {
    await startMail();
    const due = await resolvedTicket(form.time_after_resolved + 30);
    const early = await resolvedTicket(form.time_after_resolved - 600);
    const internal = await resolvedTicket(form.time_after_resolved + 30, { internal: 1 });
    const trashed = await resolvedTicket(form.time_after_resolved + 30, { deleted_at: now() });
    const tooOld = await resolvedTicket(form.time_after_resolved + FEEDBACK_LOOKBACK_SECONDS + 60);
    const notResolved = await resolvedTicket(form.time_after_resolved + 30, { status_id: world.openStatus });

    expect(await sendFeedbackRequests()).toBeGreaterThanOrEqual(1);
    const [request] = await requestsOf(due.ticket.id);
    expect(request).toMatchObject({ form_id: form.id, user_id: due.user.id, rating: null, resolved_time: due.ticket.resolved_time });
    expect(request.token).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(request.expiry_time).toBeGreaterThan(now());
    for (const other of [early, internal, trashed, tooOld, notResolved]) expect(await requestsOf(other.ticket.id)).toEqual([]);

    const message = await mailTo(smtp, due.ticket, due.user.email, 'the feedback request');
    expect(message.parsed.subject).toBe(`[#${due.ticket.number}]: How did we do?`);
    expect(message.parsed.html).toContain(`href="https://${new URL(world.brand.system_url!).hostname}/tickets/feedback/${request.token}"`);
    expect(message.parsed.text).toContain(`Rate our support (https://${new URL(world.brand.system_url!).hostname}/tickets/feedback/${request.token})`);
    expect(message.parsed.headers.get('auto-submitted')).toBe('auto-generated');

    // Once per resolution: another sweep makes nothing more.
    await sendFeedbackRequests();
    expect(await requestsOf(due.ticket.id)).toHaveLength(1);
    await settled(due.ticket.id);
    expect(mailsOf(smtp, due.ticket)).toHaveLength(1);

    // Reopened and resolved again: a new resolution, a new request.
    const again = now() - form.time_after_resolved - 5;
    await due.ticket.update({ resolved_time: again });
    await sendFeedbackRequests();
    const requests = await requestsOf(due.ticket.id);
    expect(requests.map((r) => r.resolved_time)).toEqual([request.resolved_time, again]);
    await settled(due.ticket.id);
    expect(mailsOf(smtp, due.ticket)).toHaveLength(2);
  });

  it('are not made while the form has no email template', async () => {
    const templateId = form.email_template_id;
    const { ticket } = await resolvedTicket(form.time_after_resolved + 30);
    await form.update({ email_template_id: null });
    try {
      expect(await sendFeedbackRequests()).toBe(0);
      expect(await requestsOf(ticket.id)).toEqual([]);
    } finally {
      await form.update({ email_template_id: templateId });
    }
    await sendFeedbackRequests();
    expect(await requestsOf(ticket.id)).toHaveLength(1);
    expect((await mailEntries(ticket.id)).map((e) => e.payload.kind)).toEqual(['user_feedback_request']);
  });
});
