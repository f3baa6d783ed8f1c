/**
 * An SLA plan's targets or clock edited through the API: every ticket on the plan gets its due
 * times again, in the background (the scheduler worker), a batch at a time.
 */
import { Op } from 'sequelize';
import { ApiToken, Article, DepartmentEmail, DomainEvent, Organisation, OutboxEntry, Ticket, TicketTagLink } from '../../src/db/models';
import { hashToken } from '../../src/auth/tokens';
import { createWorker } from '../../src/queue/runWorker';
import { cascadeEventsJob } from '../../src/ticket/cascadeAudit';
import { schedulerSpec } from '../../src/wiring';
import { useApi, unique } from '../helpers/app';
import { expectList, expectSuccess } from '../helpers/envelope';
import { waitForProgress } from '../helpers/smtp';
import { customer, mailWorld, mailEntries, openTicket, operator, type MailWorld } from '../notifications/support';

const api = useApi();
let world: MailWorld;
beforeAll(async () => { world = await mailWorld(2525); });

/** Monday 2024-01-08 16:00 UTC. */
const MONDAY_4PM = Date.UTC(2024, 0, 8, 16, 0) / 1000;

it('recomputes the due times of every ticket on an edited plan, past one batch, and only when its clock or targets changed', async () => {
  const plan = expectSuccess(await api.post('/api/ticket/slaplan', {
    name: unique('Edited plan'), targets: { [world.priorityId]: { first_reply: 60, resolution: 600 } },
  }), 'Successfully created new SLA plan!');
  // More tickets than one batch (200), created with the plan's first targets.
  const tickets: Ticket[] = [];
  for (let i = 0; i < 205; i++) {
    tickets.push((await openTicket(world, { emitEvent: false, values: { sla_plan_id: plan.id, created_at: MONDAY_4PM, reply_due_time: MONDAY_4PM + 3600, resolve_due_time: MONDAY_4PM + 36000, due_time: MONDAY_4PM + 3600 } })).ticket);
  }
  const ids = tickets.map((t) => t.id);
  const recomputes = () => OutboxEntry.count({ where: { name: 'sla.recompute', payload: { [Op.like]: `{"planId":${plan.id},%` } } });

  // A change of its name only: nothing to recompute.
  expectSuccess(await api.put(`/api/ticket/slaplan/${plan.id}`, { name: unique('Renamed') }), 'Successfully updated the SLA plan!');
  expect(await recomputes()).toBe(0);

  expectSuccess(await api.put(`/api/ticket/slaplan/${plan.id}`, { targets: { [world.priorityId]: { first_reply: 240, resolution: 2400 } } }), 'Successfully updated the SLA plan!');
  expect(await recomputes()).toBe(1);
  const scheduler = await createWorker(schedulerSpec());
  try {
    const updated = () => Ticket.count({ where: { id: { [Op.in]: ids }, reply_due_time: MONDAY_4PM + 240 * 60 } });
    await waitForProgress(updated, (n) => n === ids.length, 'every ticket of the plan to get its new due times');
  } finally {
    await scheduler.close();
  }
  const sample = (await Ticket.findByPk(ids[ids.length - 1]))!;
  expect(sample).toMatchObject({ reply_due_time: MONDAY_4PM + 240 * 60, resolve_due_time: MONDAY_4PM + 2400 * 60, due_time: MONDAY_4PM + 240 * 60 });
  // Two batches: the first queued the second.
  expect(await recomputes()).toBe(2);

  // Each ticket's change is the plan editor's (the token), in its audit and as a ticket.updated event carrying it.
  const tokenId = (await ApiToken.findOne({ where: { token_hash: hashToken(api.token) } }))!.id;
  const changes = {
    reply_due_time: { before: MONDAY_4PM + 3600, after: MONDAY_4PM + 240 * 60 }, resolve_due_time: { before: MONDAY_4PM + 36000, after: MONDAY_4PM + 2400 * 60 },
    due_time: { before: MONDAY_4PM + 3600, after: MONDAY_4PM + 240 * 60 },
  };
  const entries = expectList(await api.get(`/api/ticket/ticket/${sample.id}/audit`, { limit: 100 })) as any[];
  expect(entries.at(-1)).toMatchObject({ action: 'updated', actor: { type: 'token', id: tokenId }, channel: 'api', changes });
  const events = await DomainEvent.findAll({ where: { name: 'ticket.updated', payload: { [Op.like]: '%"changes":["due_time"]%' } }, order: [['id', 'ASC']] });
  const ofPlan = events.map((e) => JSON.parse(e.payload)).filter((p) => ids.includes(p.ticketId));
  expect(ofPlan.map((p) => p.ticketId).sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
  expect(ofPlan.find((p) => p.ticketId === sample.id)).toEqual({
    ticketId: sample.id, changes: ['due_time'], newlyAssigned: [], audit: { action: 'updated', actor: { type: 'token', id: tokenId }, channel: 'api', changes },
  });
});

describe('tickets changed by deleting their SLA plan, department email, tag, or a person assigned to or watching them', () => {
  const tokenId = async () => (await ApiToken.findOne({ where: { token_hash: hashToken(api.token) } }))!.id;
  const lastAudit = async (ticketId: number) => (expectList(await api.get(`/api/ticket/ticket/${ticketId}/audit`, { limit: 100 })) as any[]).at(-1);
  /** The ticket.updated events of these tickets emitted after event `after`, by ticket id. */
  const updates = async (after: number, ids: number[]) => new Map((await DomainEvent.findAll({ where: { id: { [Op.gt]: after }, name: 'ticket.updated' }, order: [['id', 'ASC']] }))
    .map((e) => JSON.parse(e.payload)).filter((p) => ids.includes(p.ticketId)).map((p) => [p.ticketId, p]));
  const withWorker = async (count: () => Promise<number>, expected: number, what: string) => {
    const scheduler = await createWorker(schedulerSpec());
    try {
      await waitForProgress(count, (n) => n === expected, what);
    } finally {
      await scheduler.close();
    }
  };

  it('deleting a plan: each ticket has the audit entry of sla_plan=0 in the delete\'s transaction, as the token, and a ticket.updated [sla_plan, due_time] with it, past one batch', async () => {
    const plan = expectSuccess(await api.post('/api/ticket/slaplan', {
      name: unique('Deleted plan'), targets: { [world.priorityId]: { first_reply: 60, resolution: 600 } },
    }), 'Successfully created new SLA plan!');
    const due = { sla_plan_id: plan.id, created_at: MONDAY_4PM, reply_due_time: MONDAY_4PM + 3600, resolve_due_time: MONDAY_4PM + 36000, due_time: MONDAY_4PM + 3600 };
    const ids: number[] = [];
    for (let i = 0; i < 201; i++) ids.push((await openTicket(world, { emitEvent: false, values: due })).ticket.id);
    // One without due times: only its plan changes.
    const bare = (await openTicket(world, { emitEvent: false, values: { sla_plan_id: plan.id } })).ticket.id;
    const mark = Number((await DomainEvent.max('id')) ?? 0);
    await api.del(`/api/ticket/slaplan/${plan.id}`).expect(200);
    const actor = { type: 'token', id: await tokenId() };
    const changes = {
      sla_plan_id: { before: plan.id, after: null }, reply_due_time: { before: MONDAY_4PM + 3600, after: null },
      resolve_due_time: { before: MONDAY_4PM + 36000, after: null }, due_time: { before: MONDAY_4PM + 3600, after: null },
    };
    expect(await lastAudit(ids[0])).toMatchObject({ action: 'updated', actor, channel: 'api', changes });
    expect((await lastAudit(bare)).changes).toEqual({ sla_plan_id: { before: plan.id, after: null } });
    const all = [...ids, bare];
    await withWorker(async () => (await updates(mark, all)).size, all.length, 'a ticket.updated for every ticket of the deleted plan');
    const events = await updates(mark, all);
    expect(events.get(ids[200])).toEqual({ ticketId: ids[200], changes: ['sla_plan', 'due_time'], newlyAssigned: [], audit: { action: 'updated', actor, channel: 'api', changes } });
    expect(events.get(bare)).toMatchObject({ changes: ['sla_plan'], audit: { changes: { sla_plan_id: { before: plan.id, after: null } } } });
  });

  it('deleting a department email: each ticket moved to the other address has its audit entry and a ticket.updated [department_email]', async () => {
    const other = await DepartmentEmail.create({ department_id: world.department.id, brand_id: world.brand.id, address: `other-${unique('a')}@x.test` });
    const gone = await DepartmentEmail.create({ department_id: world.department.id, brand_id: world.brand.id, address: `gone-${unique('a')}@x.test` });
    const ticket = (await openTicket(world, { emitEvent: false, values: { department_email_id: gone.id } })).ticket.id;
    const mark = Number((await DomainEvent.max('id')) ?? 0);
    await api.del(`/api/ticket/department/${world.department.id}/email/${gone.id}`).expect(200);
    const moved = Math.min(world.address.id, other.id);
    const changes = { department_email_id: { before: gone.id, after: moved } };
    const actor = { type: 'token', id: await tokenId() };
    expect(await lastAudit(ticket)).toMatchObject({ action: 'updated', actor, channel: 'api', changes });
    await withWorker(async () => (await updates(mark, [ticket])).size, 1, 'the moved ticket\'s ticket.updated');
    expect((await updates(mark, [ticket])).get(ticket)).toEqual({ ticketId: ticket, changes: ['department_email'], newlyAssigned: [], audit: { action: 'updated', actor, channel: 'api', changes } });

    // BullMQ runs a job again when its worker stopped after the commit: the batch is claimed, so its events are not emitted twice.
    const job = (await OutboxEntry.findOne({ where: { name: 'ticket.cascade_events', payload: { [Op.like]: `{"column":"department_email_id","id":${gone.id},%` } } }))!;
    const emitted = () => DomainEvent.count({ where: { id: { [Op.gt]: mark }, name: 'ticket.updated', payload: { [Op.like]: `{"ticketId":${ticket},%` } } });
    expect(await emitted()).toBe(1);
    expect(await cascadeEventsJob.handle(JSON.parse(job.payload), undefined as never)).toEqual({ emitted: 0, again: true });
    expect(await emitted()).toBe(1);
  });

  it('deleting an operator: each ticket they were assigned to or watched has its audit entry and a ticket.updated [assignedto, watching], mailing no one; their articles an article.updated', async () => {
    const [gone, stays] = [await operator(), await operator()];
    const both = (await openTicket(world, { emitEvent: false, assigned: [stays.id, gone.id], watching: [gone.id] })).ticket.id;
    const assigned = (await openTicket(world, { emitEvent: false, assigned: [gone.id] })).ticket.id;
    const watched = (await openTicket(world, { emitEvent: false, watching: [gone.id, stays.id] })).ticket.id;
    const untouched = (await openTicket(world, { emitEvent: false, assigned: [stays.id], watching: [stays.id] })).ticket.id;
    const article = await Article.create({ author_id: gone.id, title: unique('By the operator'), slug: unique('by-the-operator'), text: '<p>How to</p>', published: 1, created_at: 1, updated_at: 1 });
    const untouchedAudits = (expectList(await api.get(`/api/ticket/ticket/${untouched}/audit`, { limit: 100 })) as any[]).length;
    const mark = Number((await DomainEvent.max('id')) ?? 0);
    await api.del(`/api/user/operator/${gone.id}`).expect(200);

    const actor = { type: 'token', id: await tokenId() };
    // Id lists in ascending order, as the audit writes them (gone was created first).
    const changes = {
      [both]: { assigned: { before: [gone.id, stays.id], after: [stays.id] }, watching: { before: [gone.id], after: [] } },
      [assigned]: { assigned: { before: [gone.id], after: [] } },
      [watched]: { watching: { before: [gone.id, stays.id], after: [stays.id] } },
    };
    for (const id of [both, assigned, watched]) expect(await lastAudit(id)).toMatchObject({ action: 'updated', actor, channel: 'api', changes: changes[id] });
    expect((expectList(await api.get(`/api/ticket/ticket/${untouched}/audit`, { limit: 100 })) as any[]).length).toBe(untouchedAudits);
    expect(expectSuccess(await api.get(`/api/ticket/ticket/${assigned}`))).toMatchObject({ assigned: [], watching: [] });

    const ids = [both, assigned, watched, untouched];
    await withWorker(async () => (await updates(mark, ids)).size, 3, 'a ticket.updated for each ticket the operator left');
    const events = await updates(mark, ids);
    expect(events.get(both)).toEqual({ ticketId: both, changes: ['assignedto', 'watching'], newlyAssigned: [], audit: { action: 'updated', actor, channel: 'api', changes: changes[both] } });
    expect(events.get(assigned)).toMatchObject({ changes: ['assignedto'], newlyAssigned: [] });
    expect(events.get(watched)).toMatchObject({ changes: ['watching'], newlyAssigned: [] });
    expect(events.has(untouched)).toBe(false);
    // An unassignment is no news to anyone: no mail queued for these tickets.
    for (const id of ids) expect(await mailEntries(id)).toEqual([]);
    const articleEvents = await DomainEvent.findAll({ where: { id: { [Op.gt]: mark }, name: 'article.updated' } });
    expect(articleEvents.map((e) => JSON.parse(e.payload))).toEqual([{ articleId: article.id }]);
  });

  it('deleting a ticket tag: each ticket that had it has its audit entry, a new updated_at and a ticket.updated [tag]', async () => {
    const [gone, stays] = [
      expectSuccess(await api.post('/api/ticket/tag', { name: unique('Gone tag') }), 'Successfully created new tag!'),
      expectSuccess(await api.post('/api/ticket/tag', { name: unique('Kept tag') }), 'Successfully created new tag!'),
    ];
    const opened = async (tags: number[]) => {
      const { ticket } = await openTicket(world, { emitEvent: false, values: { created_at: 1000, updated_at: 1000 } });
      await TicketTagLink.bulkCreate(tags.map((tag_id) => ({ ticket_id: ticket.id, tag_id })));
      return ticket.id;
    };
    const [both, only, other] = [await opened([gone.id, stays.id]), await opened([gone.id]), await opened([stays.id])];
    const mark = Number((await DomainEvent.max('id')) ?? 0);
    await api.del(`/api/ticket/tag/${gone.id}`).expect(200);

    const actor = { type: 'token', id: await tokenId() };
    const changes = { [both]: { tags: { before: [gone.id, stays.id], after: [stays.id] } }, [only]: { tags: { before: [gone.id], after: [] } } };
    for (const id of [both, only]) expect(await lastAudit(id)).toMatchObject({ action: 'updated', actor, channel: 'api', changes: changes[id] });
    const updatedAt = async (id: number) => (await Ticket.findByPk(id))!.updated_at;
    expect(await updatedAt(both)).toBeGreaterThan(1000);
    expect(await updatedAt(only)).toBeGreaterThan(1000);
    expect(await updatedAt(other)).toBe(1000);
    expect(expectSuccess(await api.get(`/api/ticket/ticket/${both}`)).tags.map((t: { id: number }) => t.id)).toEqual([stays.id]);

    const ids = [both, only, other];
    await withWorker(async () => (await updates(mark, ids)).size, 2, 'a ticket.updated for each ticket that had the tag');
    const events = await updates(mark, ids);
    expect(events.get(both)).toEqual({ ticketId: both, changes: ['tag'], newlyAssigned: [], audit: { action: 'updated', actor, channel: 'api', changes: changes[both] } });
    expect(events.get(only)).toMatchObject({ changes: ['tag'] });
    expect(events.has(other)).toBe(false);
  });

  it('deleting a user: the organisation they were in, and one they owned, get an organisation.updated in the delete\'s transaction', async () => {
    const [theirs, owned] = [
      await Organisation.create({ name: unique('Member of'), brand_id: world.brand.id, created_at: 1, updated_at: 1 }),
      await Organisation.create({ name: unique('Owned'), brand_id: world.brand.id, created_at: 1, updated_at: 1 }),
    ];
    const user = await customer(world.brand.id, { organisation_id: theirs.id });
    await owned.update({ owner_id: user.id });
    const mark = Number((await DomainEvent.max('id')) ?? 0);
    await api.del(`/api/user/user/${user.id}`).expect(200);
    const emitted = (await DomainEvent.findAll({ where: { id: { [Op.gt]: mark } }, order: [['id', 'ASC']] })).map((e) => ({ name: e.name, payload: JSON.parse(e.payload) }));
    expect(emitted.filter((e) => e.name !== 'ticket.updated')).toEqual([
      { name: 'organisation.updated', payload: { organisationId: Math.min(theirs.id, owned.id) } },
      { name: 'organisation.updated', payload: { organisationId: Math.max(theirs.id, owned.id) } },
      { name: 'user.deleted', payload: { userId: user.id } },
    ]);
  });
});
