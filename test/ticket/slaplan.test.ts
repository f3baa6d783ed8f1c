import { SlaPlan, SlaPlanSchedule, SlaPlanTarget, TicketPriority } from '../../src/db/models';
import { dueTime } from '../../src/ticket/sla';
import { loadSlaPlanRelations } from '../../src/ticket/slaplan';
import { slaClockOf } from '../../src/ticket/slaClock';
import { useApi, unique } from '../helpers/app';
import { ticketContext, ticketFactories } from './ticketSupport';
import { countWarm } from '../helpers/queries';
import { expectDeleted, expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';

const api = useApi();
const BASE = '/api/ticket/slaplan';
const PLAN_KEYS = [
  'id', 'name', 'description', 'enabled', 'business_hours', 'timezone', 'order', 'schedule', 'targets', 'created_at', 'updated_at', 'translations',
];
const OFFICE = { 1: { start: '09:00', end: '17:00' }, 2: { start: '09:00', end: '17:00' }, 3: { start: '09:00', end: '17:00' }, 4: { start: '09:00', end: '17:00' }, 5: { start: '09:00', end: '12:30' } };

const created = (res: any) => expectSuccess(res, 'Successfully created new SLA plan!');
const updated = (res: any) => expectSuccess(res, 'Successfully updated the SLA plan!');
const create = async (form: Record<string, unknown> = {}) => created(await api.post(BASE, { name: unique('Gold'), ...form }));

describe('POST /api/ticket/slaplan', () => {
  it('refuses targets of a priority that does not exist, and writes nothing', async () => {
    const name = unique('NoSuchPriority');
    expectError(await api.post(BASE, { name, targets: { 4294967: { first_reply: 60 } } }), 422, 'The selected targets.4294967 is invalid.');
    expect(await SlaPlan.count({ where: { name } })).toBe(0);
  });

  it('creates a 24/7 plan with the defaults (order: after the last plan)', async () => {
    const name = unique('Standard');
    const last = Number((await SlaPlan.max('order')) ?? 0);
    const data = created(await api.post(BASE, { name }));
    expect(Object.keys(data).sort()).toEqual([...PLAN_KEYS].sort());
    expect(data).toMatchObject({ name, description: null, enabled: 1, business_hours: 0, timezone: null, order: last + 1, schedule: [], targets: [], translations: [] });
    expect(expectSuccess(await api.get(`${BASE}/${data.id}`))).toEqual(data);
  });

  it('refuses business hours that would take more than ten years to meet a target, on create and update, and writes nothing', async () => {
    const plans = await SlaPlan.count();
    const halfHour = { 1: { start: '09:00', end: '09:30' } };
    expectError(await api.post(BASE, { name: unique('Slow'), business_hours: 1, schedule: halfHour, targets: { 1: { first_reply: 60, resolution: 525600 } } }), 422,
      'The targets.1.resolution must fall due within ten years of the plan\'s business hours (30 minutes a week).');
    expect(await SlaPlan.count()).toBe(plans);
    const plan = await create({ business_hours: 1, schedule: OFFICE, targets: { 1: { resolution: 525600 } } });
    // A schedule cut to half an hour a week, or business hours switched on with it, would leave the target out of reach.
    expectError(await api.put(`${BASE}/${plan.id}`, { schedule: halfHour }), 422, /targets\.1\.resolution must fall due within ten years/);
    const calendar = await create({ targets: { 1: { resolution: 525600 } } });
    expectError(await api.put(`${BASE}/${calendar.id}`, { business_hours: 1, schedule: halfHour }), 422, /targets\.1\.resolution/);
    expect(expectSuccess(await api.get(`${BASE}/${plan.id}`)).schedule).toHaveLength(5);
    expect(expectSuccess(await api.get(`${BASE}/${calendar.id}`))).toMatchObject({ business_hours: 0, schedule: [] });
  });

  it('stores a business-hours plan with its schedule, targets and translations', async () => {
    const data = await create({
      description: 'Office hours', business_hours: 1, timezone: 'Europe/Paris', order: 2, enabled: 0, schedule: OFFICE,
      targets: { 3: { first_reply: 60, resolution: '480' }, 1: { first_reply: 15 }, 7: { first_reply: '', resolution: '' } },
      'name:fr': 'Or',
    });
    expect(data).toMatchObject({
      description: 'Office hours', business_hours: 1, timezone: 'Europe/Paris', order: 2, enabled: 0,
      schedule: [
        { day: 1, start: '09:00', end: '17:00' }, { day: 2, start: '09:00', end: '17:00' }, { day: 3, start: '09:00', end: '17:00' },
        { day: 4, start: '09:00', end: '17:00' }, { day: 5, start: '09:00', end: '12:30' },
      ],
      targets: [{ priority_id: 1, first_reply: 15, resolution: null }, { priority_id: 3, first_reply: 60, resolution: 480 }],
      translations: [{ sla_plan_id: data.id, name: 'Or', description: null, locale: 'fr' }],
    });
    expect(await SlaPlanSchedule.count({ where: { plan_id: data.id } })).toBe(5);
    expect(await SlaPlanTarget.count({ where: { plan_id: data.id } })).toBe(2);
  });

  it('takes JSON, the schedule as an array indexed by weekday (null: closed)', async () => {
    const res = await api.postJson(BASE, {
      name: unique('Json'), business_hours: true, schedule: [null, { start: '08:00', end: '24:00' }, null, null, null, null, { start: '10:00', end: '14:00' }],
      targets: { 2: { resolution: 1440 } },
    });
    expect(created(res)).toMatchObject({
      business_hours: 1, schedule: [{ day: 1, start: '08:00', end: '24:00' }, { day: 6, start: '10:00', end: '14:00' }],
      targets: [{ priority_id: 2, first_reply: null, resolution: 1440 }],
    });
  });

  it.each([
    [{}, 'The name field is required.'],
    [{ name: 'x', business_hours: 1 }, 'The schedule field is required when business hours is 1.'],
    [{ name: 'x', business_hours: 'sometimes' }, 'The business hours field must be true or false.'],
    [{ name: 'x', order: -1 }, 'The order must be at least 0.'],
    [{ name: 'x', timezone: 'Mars/Olympus' }, 'The timezone must be a valid IANA time zone (e.g. Europe/London).'],
    [{ name: 'x', schedule: { 7: { start: '09:00', end: '17:00' } } }, 'The selected schedule.7 is invalid: weekdays are 0 (Sunday) to 6 (Saturday).'],
    [{ name: 'x', schedule: { 1: { start: '9am', end: '17:00' } } }, 'The schedule.1.start must be a time from 00:00 to 24:00 (HH:MM).'],
    [{ name: 'x', schedule: { 1: { start: '09:00' } } }, 'The schedule.1.end field is required.'],
    [{ name: 'x', schedule: { 1: { start: '17:00', end: '09:00' } } }, 'The schedule.1.end must be after the start.'],
    [{ name: 'x', schedule: { 1: '09:00' } }, 'The schedule.1 must have a start and an end (schedule[1][start]=09:00).'],
    [{ name: 'x', schedule: 'weekdays' }, 'The schedule must be an array keyed by weekday (schedule[1][start]=09:00).'],
    [{ name: 'x', targets: { 0: { first_reply: 5 } } }, 'The selected targets.0 is invalid.'],
    [{ name: 'x', targets: { abc: { first_reply: 5 } } }, 'The selected targets.abc is invalid.'],
    [{ name: 'x', targets: { 3: { first_reply: 0 } } }, 'The targets.3.first reply must be a number of minutes from 1 to 525600.'],
    [{ name: 'x', targets: { 3: { resolution: '1.5' } } }, 'The targets.3.resolution must be a number of minutes from 1 to 525600.'],
    [{ name: 'x', targets: { 3: 60 } }, 'The targets.3 must have a first_reply or a resolution (targets[3][first_reply]=60).'],
  ] as Array<[Record<string, unknown>, string]>)('422 %j → %s', async (form, message) => {
    const before = await SlaPlan.count();
    expectError(await api.post(BASE, form), 422, message);
    expect(await SlaPlan.count()).toBe(before);
  });
});

describe('GET /api/ticket/slaplan', () => {
  it('lists with count, the enabled filter and sorting', async () => {
    const on = await create({ order: 9, business_hours: 1, schedule: OFFICE, targets: { 1: { first_reply: 5 } } });
    const off = await create({ enabled: 0, order: 0 });
    const all = expectList(await api.get(BASE, { limit: 1000 }));
    expect(all.map((p) => p.id)).toEqual(expect.arrayContaining([on.id, off.id]));
    expect(all.find((p) => p.id === on.id)).toEqual(on);
    const enabled = expectList(await api.get(BASE, { enabled: 1, limit: 1000 }));
    expect(enabled.every((p) => p.enabled === 1)).toBe(true);
    expect(enabled.map((p) => p.id)).not.toContain(off.id);
    const byOrder = expectList(await api.get(BASE, { order_column: 'order', order_direction: 'desc', limit: 1000 })).map((p) => p.order);
    expect(byOrder).toEqual([...byOrder].sort((a, b) => b - a));
  });

  it('runs the same number of queries for limit=1 and limit=50', async () => {
    for (let i = 0; i < 5; i++) await create({ business_hours: 1, schedule: OFFICE, targets: { 1: { first_reply: 5 }, 2: { resolution: 9 } } });
    const measure = async (limit: number) => {
      const { result, queries } = await countWarm(async () => api.get(BASE, { limit }));
      expect(expectList(result).length).toBe(Math.min(limit, result.body.count));
      return queries.filter((q) => !/api_tokens|ip_bans/.test(q)).length;
    };
    await measure(1);
    const one = await measure(1);
    expect(await measure(50)).toBe(one);
    expect(one).toBeLessThanOrEqual(5); // count, page, schedules, targets, translations
  });
});

describe('PUT /api/ticket/slaplan/{id}', () => {
  it('updates what is sent; schedule and targets are replaced when sent, cleared when empty', async () => {
    const plan = await create({ business_hours: 1, schedule: OFFICE, targets: { 1: { first_reply: 30 }, 2: { first_reply: 60 } } });
    const renamed = updated(await api.put(`${BASE}/${plan.id}`, { name: 'Platinum', targets: { 2: { first_reply: 10, resolution: 100 } } }));
    expect(renamed).toMatchObject({ name: 'Platinum', business_hours: 1, schedule: plan.schedule, targets: [{ priority_id: 2, first_reply: 10, resolution: 100 }] });
    const replaced = updated(await api.put(`${BASE}/${plan.id}`, { schedule: { 0: { start: '00:00', end: '24:00' } } }));
    expect(replaced.schedule).toEqual([{ day: 0, start: '00:00', end: '24:00' }]);
    // Business hours need a schedule: clearing it while they count is refused, and allowed on a 24/7 plan.
    expectError(await api.put(`${BASE}/${plan.id}`, { schedule: '' }), 422, 'The schedule field is required when business hours is 1.');
    const plain = updated(await api.put(`${BASE}/${plan.id}`, { schedule: '', business_hours: 0, targets: '', timezone: 'UTC' }));
    expect(plain).toMatchObject({ business_hours: 0, schedule: [], targets: [], timezone: 'UTC' });
    expectError(await api.put(`${BASE}/${plan.id}`, { business_hours: 1 }), 422, 'The schedule field is required when business hours is 1.');
  });

  it('404 for an unknown plan', async () => {
    expectNotFound(await api.put(`${BASE}/999999`, { name: 'x' }), 'SLA plan');
    expectNotFound(await api.get(`${BASE}/999999`), 'SLA plan');
  });
});

describe('DELETE /api/ticket/slaplan/{id}', () => {
  it('deletes a plan with its schedule and targets', async () => {
    const plan = await create({ business_hours: 1, schedule: OFFICE, targets: { 1: { first_reply: 5 } } });
    expectDeleted(await api.del(`${BASE}/${plan.id}`), 'SLA plan');
    expect(await SlaPlanSchedule.count({ where: { plan_id: plan.id } })).toBe(0);
    expect(await SlaPlanTarget.count({ where: { plan_id: plan.id } })).toBe(0);
    expectNotFound(await api.get(`${BASE}/${plan.id}`), 'SLA plan');
    expectNotFound(await api.del(`${BASE}/${plan.id}`), 'SLA plan');
  });

  it('a deleted plan takes its due times off its tickets, as sla_plan=0 does; a filter naming it keeps it', async () => {
    const ctx = await ticketContext();
    const f = ticketFactories(api, () => ctx);
    const plan = await create({ targets: { [ctx.priorityId]: { first_reply: 60, resolution: 480 } } });
    const ticket = await f.ticket({ sla_plan: plan.id });
    expect(ticket).toMatchObject({ sla_plan_id: plan.id, reply_due_time: expect.any(Number), due_time: expect.any(Number) });
    const other = await f.ticket();
    expectSuccess(await api.put(`/api/ticket/ticket/${other.id}`, { reply_due_time: 2000000000 }), 'Successfully updated the ticket!');
    const filter = expectSuccess(await api.post('/api/ticket/filter', {
      name: unique('By plan'), conditions: [{ rules: [{ item: 'sla_plan', operator: 'equals', value: plan.id }] }],
    }), 'Successfully created new filter!');
    expectError(await api.del(`${BASE}/${plan.id}`), 422, 'The SLA plan cannot be deleted because ticket filters use it: change their conditions first.');
    expectDeleted(await api.del(`/api/ticket/filter/${filter.id}`), 'filter');
    expectDeleted(await api.del(`${BASE}/${plan.id}`), 'SLA plan');
    const after = expectSuccess(await api.get(`/api/ticket/ticket/${ticket.id}`));
    expect(after).toMatchObject({ sla_plan_id: null, reply_due_time: null, resolve_due_time: null, due_time: null });
    expect(after.updated_at).toBeGreaterThanOrEqual(ticket.updated_at);
    // A ticket of no plan keeps the times it was given.
    expect(expectSuccess(await api.get(`/api/ticket/ticket/${other.id}`))).toMatchObject({ reply_due_time: 2000000000 });
  });
});

describe('plans and tickets', () => {
  it('due times a request sets on one ticket stay on it: another ticket with no plan, or of a priority its plan sets no target for, has none', async () => {
    const ctx = await ticketContext();
    const f = ticketFactories(api, () => ctx);
    const high = (await TicketPriority.findOne({ where: { name: 'High' } }))!.id;
    const plan = await create({ targets: { [high]: { first_reply: 60 } } });
    const [a, b, c] = [await f.ticket({ sla_plan: plan.id }), await f.ticket({ sla_plan: plan.id, priority: high }), await f.ticket({ sla_plan: plan.id })];
    expect(b.reply_due_time).toEqual(expect.any(Number));
    // `sla_plan=0` with an explicit time: the time is this ticket's alone.
    expectSuccess(await api.put(`/api/ticket/ticket/${a.id}`, { sla_plan: 0, reply_due_time: 1822222222 }), 'Successfully updated the ticket!');
    expect(expectSuccess(await api.get(`/api/ticket/ticket/${a.id}`))).toMatchObject({ sla_plan_id: null, reply_due_time: 1822222222 });
    // Moved to a priority without a target: no due time (it got the other ticket's 1822222222).
    expect(expectSuccess(await api.put(`/api/ticket/ticket/${b.id}`, { priority: ctx.priorityId }), 'Successfully updated the ticket!'))
      .toMatchObject({ reply_due_time: null, resolve_due_time: null, due_time: null });
    expect(expectSuccess(await api.put(`/api/ticket/ticket/${c.id}`, { sla_plan: 0 }), 'Successfully updated the ticket!'))
      .toMatchObject({ sla_plan_id: null, reply_due_time: null, due_time: null });
  });


  it('a disabled plan is given to no new ticket; the tickets that have it keep it', async () => {
    const ctx = await ticketContext();
    const f = ticketFactories(api, () => ctx);
    const plan = await create({ targets: { [ctx.priorityId]: { first_reply: 60, resolution: 480 } } });
    const kept = await f.ticket({ sla_plan: plan.id });
    updated(await api.put(`${BASE}/${plan.id}`, { enabled: 0 }));
    const subject = unique('On a disabled plan');
    expectError(await api.post('/api/ticket/ticket', {
      department: ctx.departmentId, status: ctx.openStatus, priority: ctx.priorityId, subject, text: 'x', user_email: `${unique('u')}@example.com`, sla_plan: plan.id,
    }), 422, 'The selected sla plan is invalid.');
    const other = await f.ticket();
    expectError(await api.put(`/api/ticket/ticket/${other.id}`, { sla_plan: plan.id }), 422, 'The selected sla plan is invalid.');
    // Sent again as it is, the plan a ticket has is no change.
    expectSuccess(await api.put(`/api/ticket/ticket/${kept.id}`, { sla_plan: plan.id, subject: 'Still on it' }), 'Successfully updated the ticket!');
    expect(expectSuccess(await api.get(`/api/ticket/ticket/${kept.id}`))).toMatchObject({ sla_plan_id: plan.id, subject: 'Still on it' });
  });

  it('a merge gives the target its sources\' first operator reply: the resolution deadline applies then', async () => {
    const ctx = await ticketContext();
    const f = ticketFactories(api, () => ctx);
    const plan = await create({ targets: { [ctx.priorityId]: { first_reply: 60, resolution: 480 } } });
    const target = await f.ticket({ sla_plan: plan.id });
    const source = await f.ticket({ sla_plan: plan.id, user: target.user_id });
    expect(target.due_time).toBe(target.reply_due_time);
    const op = await f.operator();
    expectSuccess(await api.post('/api/ticket/message', { ticket_id: source.id, user_id: op.id, text: 'On it.' }), 'Successfully created new message!');
    expectSuccess(await api.post(`/api/ticket/ticket/${target.id}/merge`, { ids: [source.id] }), 'Successfully updated the ticket!');
    const merged = expectSuccess(await api.get(`/api/ticket/ticket/${target.id}`));
    expect(merged.due_time).toBe(target.resolve_due_time);
  });
});

describe('a stored plan drives the due time', () => {
  it('computes Friday afternoon + 2 hours as Monday morning in the plan zone', async () => {
    const data = await create({ business_hours: 1, timezone: 'America/New_York', schedule: OFFICE, targets: { 1: { first_reply: 120 } } });
    const plan = (await SlaPlan.findByPk(data.id))!;
    const rel = await loadSlaPlanRelations([plan]);
    const clock = slaClockOf(plan, rel.schedules.get(plan.id)!, 'Europe/London');
    expect(clock.timezone).toBe('America/New_York');
    // Friday 8 March 2024, 11:30 in New York (16:30 UTC). Friday closes at 12:30: one hour there,
    // one hour on Monday from 09:00, so 10:00 EDT (DST began on Sunday 10 March) = 14:00 UTC.
    const due = dueTime(Date.UTC(2024, 2, 8, 16, 30) / 1000, rel.targets.get(plan.id)![0].first_reply!, clock);
    expect(new Date(due! * 1000).toISOString()).toBe('2024-03-11T14:00:00.000Z');
    // Without a zone of its own, a plan uses the default time zone.
    await plan.update({ timezone: null });
    expect(slaClockOf(plan, [], 'Europe/London').timezone).toBe('Europe/London');
  });
});
