import './fastTicketSweepEnv';
import { Op } from 'sequelize';
import { runAs } from '../../src/audit/actor';
import { DomainEvent, Ticket, Webhook } from '../../src/db/models';
import { now } from '../../src/db/entity';
import { createWorker } from '../../src/queue/runWorker';
import { schedulerSpec, webhooksSpec } from '../../src/wiring';
import { schedulerIdOf } from '../../src/queue/jobs';
import { closeInactiveTickets } from '../../src/ticket/autoClose';
import { unique, useApi } from '../helpers/app';
import { expectSuccess } from '../helpers/envelope';
import { startReceiver } from '../helpers/receiver';
import { waitFor } from '../helpers/smtp';
import { mailEntries, mailTo, mailsOf, openTicket, setTicketSetting, settled, ticketSetting, useMailWorld } from '../notifications/support';

const api = useApi();
const m = useMailWorld();
let closeAfter: number;

beforeAll(async () => {
  closeAfter = Number(await ticketSetting('inactive_close_time'));
});

/** A ticket whose last reply was `ago` seconds ago, in `status` (the auto-close status by default). */
async function waitingTicket(ago: number, values: Partial<Ticket> = {}) {
  const at = now() - ago;
  const { ticket, user } = await openTicket(m.world, {
    emitEvent: false,
    values: { status_id: m.world.autoCloseStatus, last_reply_time: at, created_at: at, due_time: now() + 3600, ...values },
  });
  return { ticket, user };
}

describe('closing inactive tickets', () => {
  it('closes tickets of an auto-close status without a reply for inactive_close_time, once, and tells their users', async () => {
    const stale = await waitingTicket(closeAfter + 60);
    const staleNoMail = await waitingTicket(closeAfter + 60, { internal: 1 });
    const recent = await waitingTicket(closeAfter - 60);
    const locked = await waitingTicket(closeAfter + 60, { locked: 1 });
    const trashed = await waitingTicket(closeAfter + 60, { deleted_at: now() });
    const open = await waitingTicket(closeAfter + 60, { status_id: m.world.openStatus });
    const merged = await waitingTicket(closeAfter + 60, { merged_into_id: recent.ticket.id, merged: 1 });

    const at = now();
    expect(await closeInactiveTickets({ at })).toBeGreaterThanOrEqual(2);
    const closed = (await stale.ticket.reload());
    expect(closed.status_id).toBe(m.world.resolvedStatus);
    expect(closed.resolved_time).toBe(at);
    expect(closed.due_time).toBeNull();
    expect((await staleNoMail.ticket.reload()).status_id).toBe(m.world.resolvedStatus);
    for (const left of [recent, locked, trashed, open, merged]) {
      const before = left.ticket.status_id;
      expect((await left.ticket.reload()).status_id).toBe(before);
      expect(left.ticket.resolved_time).toBeNull();
    }

    const notice = await mailTo(m.smtp, stale.ticket, stale.user.email, 'the user_ticket_autoclose mail');
    expect(notice.parsed.subject).toBe(`[#${stale.ticket.number}]: Your ticket has been closed`);
    expect(notice.parsed.headers.get('auto-submitted')).toBe('auto-generated');
    expect(notice.parsed.messageId).toMatch(new RegExp(`^<t${stale.ticket.id}\\.r[0-9a-f]{16}@`));
    // An internal ticket is closed without a mail.
    expect(await mailEntries(staleNoMail.ticket.id)).toEqual([]);

    // Idempotent: a second sweep finds nothing.
    expect(await closeInactiveTickets({ at: at + 1 })).toBe(0);
    await settled(stale.ticket.id);
    expect(mailsOf(m.smtp, stale.ticket)).toHaveLength(1);
  });

  it('walks the candidates in batches', async () => {
    const stale = await Promise.all([1, 2, 3, 4, 5].map((n) => waitingTicket(closeAfter + 600 + n)));
    expect(await closeInactiveTickets({ batch: 2, maxBatches: 10 })).toBeGreaterThanOrEqual(5);
    for (const { ticket } of stale) expect((await ticket.reload()).status_id).toBe(m.world.resolvedStatus);
  });

  it('closes nothing when inactive_close_time is 0, and sends no mail when the template is -1', async () => {
    const stale = await waitingTicket(closeAfter + 60);
    await setTicketSetting('inactive_close_time', '0');
    try {
      expect(await closeInactiveTickets()).toBe(0);
      expect((await stale.ticket.reload()).status_id).toBe(m.world.autoCloseStatus);
    } finally {
      await setTicketSetting('inactive_close_time', String(closeAfter));
    }
    const templates = m.world.department.email_templates!;
    await m.world.department.update({ email_templates: JSON.stringify({ ...JSON.parse(templates), user_ticket_autoclose: -1 }) });
    try {
      await closeInactiveTickets();
      expect((await stale.ticket.reload()).status_id).toBe(m.world.resolvedStatus);
      expect(await mailEntries(stale.ticket.id)).toEqual([]);
    } finally {
      await m.world.department.update({ email_templates: templates });
    }
  });

  it('runs on the scheduler worker\'s schedule', async () => {
    const spec = schedulerSpec();
    expect(spec.jobs.filter((j) => j.schedule).map(schedulerIdOf)).toEqual(expect.arrayContaining(['tickets-autoclose', 'tickets-feedback']));
    const stale = await waitingTicket(closeAfter + 60);
    const scheduler = await createWorker(spec);
    try {
      await waitFor(async () => (await stale.ticket.reload()).status_id === m.world.resolvedStatus, 10000, 'the scheduled auto-close');
      await mailTo(m.smtp, stale.ticket, stale.user.email);
    } finally {
      await scheduler.close();
    }
  });
});

describe('an auto-closed ticket is a ticket change like any other', () => {
  it('reaches the event feed and a subscribed webhook as ticket.updated with the cause autoclose', async () => {
    const receiver = await startReceiver();
    const webhooks = await createWorker(webhooksSpec());
    let hookId = 0;
    try {
      const hook = expectSuccess(await api.post('/api/core/webhook', { url: `${receiver.url}?${unique('ac')}`, events: ['ticket.updated'] }), 'Successfully created new webhook!');
      hookId = hook.id;
      const stale = await waitingTicket(closeAfter + 60);
      const before = Number((await DomainEvent.max('id')) ?? 0);
      // As the scheduler's job runs it (src/scheduler/task.ts).
      expect(await runAs({ type: 'scheduler', id: null, channel: 'scheduler' }, () => closeInactiveTickets())).toBeGreaterThanOrEqual(1);

      // The event feed (read from the database the API serves it from: the feed holds the newest events back).
      const events = await DomainEvent.findAll({ where: { id: { [Op.gt]: before }, name: 'ticket.updated' } });
      const closed = events.map((e) => JSON.parse(e.payload)).find((p) => p.ticketId === stale.ticket.id);
      expect(closed).toEqual({
        ticketId: stale.ticket.id, changes: expect.arrayContaining(['status']), newlyAssigned: [], cause: 'autoclose',
        // The change set, as the audit has it: by the scheduler.
        audit: {
          action: 'updated', actor: { type: 'scheduler', id: null }, channel: 'scheduler',
          changes: expect.objectContaining({ status_id: { before: m.world.autoCloseStatus, after: m.world.resolvedStatus } }),
        },
      });

      // The webhook receiver gets the same event, signed, as for a change made through the API.
      const delivered = await waitFor(() => receiver.at(hook.url).map((r) => JSON.parse(r.body)).find((b) => b.data.ticketId === stale.ticket.id), 15000, 'the webhook delivery');
      expect(delivered).toMatchObject({ type: 'ticket.updated', data: { ticketId: stale.ticket.id, cause: 'autoclose' } });
      expect(delivered.data.audit).toEqual(closed.audit);
      // And the user is told, by the notifications of that event.
      await mailTo(m.smtp, stale.ticket, stale.user.email, 'the user_ticket_autoclose mail');
    } finally {
      await Webhook.destroy({ where: { id: hookId } });
      await webhooks.close();
      await receiver.close();
    }
  });
});
