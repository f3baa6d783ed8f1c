import { SlaPlan, SlaPlanSchedule, SlaPlanTarget, Ticket, TicketPriority } from '../../src/db/models';
import { transaction } from '../../src/db/transaction';
import { recomputeDueTimes } from '../../src/ticket/dueTimes';
import { useApi, unique } from '../helpers/app';
import { mailWorld, openTicket, type MailWorld } from '../notifications/support';

useApi();
let world: MailWorld;
let other: TicketPriority;

beforeAll(async () => {
  world = await mailWorld(2525);
  other = (await TicketPriority.findOne({ order: [['order', 'DESC']] }))!;
});

const recompute = (ticket: Ticket) => transaction((t) => recomputeDueTimes(ticket.id, t));

/** Monday 2024-01-08 16:00 UTC. */
const MONDAY_4PM = Date.UTC(2024, 0, 8, 16, 0) / 1000;

async function ticketOn(planId: number | null, values: Partial<Ticket> = {}) {
  const { ticket } = await openTicket(world, { emitEvent: false, values: { sla_plan_id: planId, created_at: MONDAY_4PM, ...values } });
  return ticket;
}

describe('recomputeDueTimes', () => {
  it('sets the first reply and resolution due times from the plan\'s targets for the priority, on the calendar clock', async () => {
    const plan = await SlaPlan.create({ name: unique('Plan '), enabled: 1, business_hours: 0, timezone: 'UTC' });
    await SlaPlanTarget.bulkCreate([
      { plan_id: plan.id, priority_id: world.priorityId, first_reply: 60, resolution: 480 },
      { plan_id: plan.id, priority_id: other.id, first_reply: null, resolution: 30 },
    ]);
    const ticket = await ticketOn(plan.id);
    expect(await recompute(ticket)).toEqual({ reply_due_time: MONDAY_4PM + 3600, resolve_due_time: MONDAY_4PM + 480 * 60, due_time: MONDAY_4PM + 3600 });
    expect(await ticket.reload()).toMatchObject({ reply_due_time: MONDAY_4PM + 3600, resolve_due_time: MONDAY_4PM + 480 * 60, due_time: MONDAY_4PM + 3600 });

    // After the first operator reply the resolution's due time applies; a resolved ticket has none.
    await ticket.update({ first_reply_time: MONDAY_4PM + 600 });
    expect((await recompute(ticket))!.due_time).toBe(MONDAY_4PM + 480 * 60);
    await ticket.update({ resolved_time: MONDAY_4PM + 900 });
    expect((await recompute(ticket))!.due_time).toBeNull();
    await ticket.update({ resolved_time: null, first_reply_time: null });

    // Another priority: its own targets (no first reply target: the resolution's applies).
    await ticket.update({ priority_id: other.id });
    expect(await recompute(ticket)).toEqual({ reply_due_time: null, resolve_due_time: MONDAY_4PM + 1800, due_time: MONDAY_4PM + 1800 });

    // No plan: no due times.
    await ticket.update({ sla_plan_id: null });
    expect(await recompute(ticket)).toEqual({ reply_due_time: null, resolve_due_time: null, due_time: null });
    expect(await ticket.reload()).toMatchObject({ reply_due_time: null, resolve_due_time: null, due_time: null });
  });

  it('counts business hours in the plan\'s zone, and gives nothing for a priority without targets', async () => {
    const plan = await SlaPlan.create({ name: unique('Plan '), enabled: 1, business_hours: 1, timezone: 'Europe/London' });
    // Weekdays 09:00-17:00.
    await SlaPlanSchedule.bulkCreate([1, 2, 3, 4, 5].map((day) => ({ plan_id: plan.id, day, start_minute: 540, end_minute: 1020 })));
    await SlaPlanTarget.create({ plan_id: plan.id, priority_id: world.priorityId, first_reply: 120, resolution: 600 });
    const ticket = await ticketOn(plan.id);
    // Monday 16:00 + 2 h of 09:00-17:00: Tuesday 10:00; + 10 h: Tuesday 17:00 (1 h Monday, 8 h Tuesday) + 1 h = Wednesday 10:00.
    expect(await recompute(ticket)).toEqual({
      reply_due_time: Date.UTC(2024, 0, 9, 10, 0) / 1000, resolve_due_time: Date.UTC(2024, 0, 10, 10, 0) / 1000, due_time: Date.UTC(2024, 0, 9, 10, 0) / 1000,
    });
    await ticket.update({ priority_id: other.id });
    expect(await recompute(ticket)).toEqual({ reply_due_time: null, resolve_due_time: null, due_time: null });
  });

  it('answers null for a ticket that does not exist', async () => {
    expect(await transaction((t) => recomputeDueTimes(2_000_000_000, t))).toBeNull();
  });
});
