import './fastTicketSweepEnv';
import { Op, QueryTypes } from 'sequelize';
import { capture } from '../../bench/capture';
import { sequelize } from '../../src/db/sequelize';
import { DomainEvent, Ticket } from '../../src/db/models';
import { now } from '../../src/db/entity';
import { createWorker } from '../../src/queue/runWorker';
import { schedulerSpec } from '../../src/wiring';
import { schedulerIdOf } from '../../src/queue/jobs';
import { WAITING_LOOKBACK_SECONDS, remindWaitingUsers } from '../../src/ticket/waitingReminders';
import { newEmail, useApi } from '../helpers/app';
import { waitFor } from '../helpers/smtp';
import { mailEntries, mailTo, mailsOf, openTicket, setTicketSetting, settled, ticketSetting, useMailWorld } from '../notifications/support';

useApi();
const m = useMailWorld();
let waitAfter: number;
let closeAfter: number;

beforeAll(async () => {
  waitAfter = Number(await ticketSetting('waiting_response_time'));
  closeAfter = Number(await ticketSetting('inactive_close_time'));
});

/** A ticket whose last reply was `ago` seconds ago, in `status` (the auto-close status by default). */
async function waitingTicket(ago: number, values: Partial<Ticket> = {}, cc: string[] = []) {
  const at = now() - ago;
  return openTicket(m.world, {
    emitEvent: false, cc, values: { status_id: m.world.autoCloseStatus, last_reply_time: at, created_at: at, ...values },
  });
}

const remindedKinds = async (ticket: Ticket) => (await mailEntries(ticket.id)).map((e) => e.payload.kind);

describe('reminding users of tickets that wait for them', () => {
  it('ships SupportPal\'s 4 days, below the 7 days of auto-close', () => {
    expect([waitAfter, closeAfter]).toEqual([345600, 604800]);
  });

  it('reminds the user and CC addresses once per last reply (user_ticket_waitingresponse), and only tickets that wait', async () => {
    const cc = newEmail('cc');
    const waiting = await waitingTicket(waitAfter + 60, {}, [cc]);
    const recent = await waitingTicket(waitAfter - 60);
    const internal = await waitingTicket(waitAfter + 60, { internal: 1 });
    const locked = await waitingTicket(waitAfter + 60, { locked: 1 });
    const trashed = await waitingTicket(waitAfter + 60, { deleted_at: now() });
    const open = await waitingTicket(waitAfter + 60, { status_id: m.world.openStatus });
    const merged = await waitingTicket(waitAfter + 60, { merged_into_id: recent.ticket.id, merged: 1 });
    // Due to be closed: auto-close takes it, no reminder first.
    const closing = await waitingTicket(closeAfter + 60);

    const before = Number((await DomainEvent.max('id')) ?? 0);
    const at = now();
    expect(await remindWaitingUsers({ at })).toBeGreaterThanOrEqual(1);
    const mail = await mailTo(m.smtp, waiting.ticket, waiting.user.email, 'the user_ticket_waitingresponse mail');
    expect(mail.envelopeTo.sort()).toEqual([waiting.user.email, cc].sort());
    expect(mail.parsed.subject).toBe(`[#${waiting.ticket.number}]: We are waiting for your response`);
    expect(mail.parsed.headers.get('auto-submitted')).toBe('auto-generated');
    // The event feed has it (webhooks deliver what the feed has).
    const events = await DomainEvent.findAll({ where: { id: { [Op.gt]: before }, name: 'ticket.waiting_response' } });
    expect(events.map((e) => JSON.parse(e.payload)).filter((p) => p.ticketId === waiting.ticket.id)).toEqual([{ ticketId: waiting.ticket.id }]);

    // Once: a second sweep finds nothing more for it.
    await remindWaitingUsers({ at: at + 1 });
    await settled(waiting.ticket.id);
    expect(mailsOf(m.smtp, waiting.ticket)).toHaveLength(1);
    for (const left of [recent, internal, locked, trashed, open, merged, closing]) expect(await remindedKinds(left.ticket)).toEqual([]);
    // The ticket itself is not changed by a reminder.
    expect((await waiting.ticket.reload()).status_id).toBe(m.world.autoCloseStatus);

    // A reply (an operator's, say) starts a new wait: after it, the user is reminded again.
    await waiting.ticket.update({ last_reply_time: now() - waitAfter - 30 });
    expect(await remindWaitingUsers()).toBeGreaterThanOrEqual(1);
    await waitFor(() => mailsOf(m.smtp, waiting.ticket).length === 2, 60000, 'the second reminder');
    await settled(waiting.ticket.id);
    expect(await remindedKinds(waiting.ticket)).toEqual(['user_ticket_waitingresponse', 'user_ticket_waitingresponse']);
  });

  it('reminds nobody when waiting_response_time is 0, about waits past the look-back, or by mail when the template is -1', async () => {
    const waiting = await waitingTicket(waitAfter + 60);
    await setTicketSetting('waiting_response_time', '0');
    try {
      expect(await remindWaitingUsers()).toBe(0);
    } finally {
      await setTicketSetting('waiting_response_time', String(waitAfter));
    }
    const templates = m.world.department.email_templates!;
    await m.world.department.update({ email_templates: JSON.stringify({ ...JSON.parse(templates), user_ticket_waitingresponse: -1 }) });
    try {
      expect(await remindWaitingUsers()).toBeGreaterThanOrEqual(1);
    } finally {
      await m.world.department.update({ email_templates: templates });
    }
    expect(await remindedKinds(waiting.ticket)).toEqual([]);
    // Reminded all the same (the event is in the feed): mapping the template later sends nothing late.
    expect(await DomainEvent.count({ where: { name: 'ticket.waiting_response', payload: JSON.stringify({ ticketId: waiting.ticket.id }) } })).toBe(1);
    // With auto-close off, an old wait is not reminded days late (an upgrade, a scheduler down for long).
    // A wait past inactive_close_time is reminded then (nothing will close it), within the look-back.
    const old = await waitingTicket(waitAfter + WAITING_LOOKBACK_SECONDS + 60);
    const neverClosed = await waitingTicket(closeAfter + 60);
    await setTicketSetting('inactive_close_time', '0');
    try {
      expect(await remindWaitingUsers()).toBeGreaterThanOrEqual(1);
    } finally {
      await setTicketSetting('inactive_close_time', String(closeAfter));
    }
    expect(await remindedKinds(neverClosed.ticket)).toEqual(['user_ticket_waitingresponse']);
    expect(await remindedKinds(old.ticket)).toEqual([]);
  });

  it('reads an index range of tickets, each candidate\'s reminder by its primary key (never the whole reminders table)', async () => {
    await waitingTicket(waitAfter + 60);
    const { statements } = await capture(() => remindWaitingUsers({ maxBatches: 1 }));
    const sweep = statements.find((s) => /FROM `tickets` AS `Ticket`/.test(s.sql) && /ticket_waiting_reminders/.test(s.sql))!;
    const plan = await sequelize().query<{ table: string; type: string; key: string | null }>(`EXPLAIN ${sweep.sql}`, {
      replacements: sweep.params as Record<string, unknown>, type: QueryTypes.SELECT,
    });
    // tickets_autoclose at 10,000 tickets (the benchmark's data); a small table may take another index, never a scan.
    expect(plan.find((p) => p.table === 'Ticket')).toMatchObject({ type: expect.not.stringMatching(/^(ALL|index)$/), key: expect.any(String) });
    expect(plan.find((p) => p.table === 'r')).toMatchObject({ type: 'eq_ref', key: 'PRIMARY' });
  });

  it('runs on the scheduler worker\'s schedule', async () => {
    const spec = schedulerSpec();
    expect(spec.jobs.filter((j) => j.schedule).map(schedulerIdOf)).toEqual(expect.arrayContaining(['tickets-waiting']));
    const waiting = await waitingTicket(waitAfter + 60);
    const scheduler = await createWorker(spec);
    try {
      await mailTo(m.smtp, waiting.ticket, waiting.user.email, 'the scheduled reminder');
    } finally {
      await scheduler.close();
    }
  });
});
