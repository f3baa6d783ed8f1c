/**
 * An SLA plan's targets or clock edited through the API: every ticket on the plan gets its due
 * times again, in the background (the scheduler worker), a batch at a time.
 */
import { Op } from 'sequelize';
import { ApiToken, DomainEvent, OutboxEntry, Ticket } from '../../src/db/models';
import { hashToken } from '../../src/auth/tokens';
import { createWorker } from '../../src/queue/runWorker';
import { schedulerSpec } from '../../src/wiring';
import { useApi, unique } from '../helpers/app';
import { expectList, expectSuccess } from '../helpers/envelope';
import { waitForProgress } from '../helpers/smtp';
import { mailWorld, openTicket, type MailWorld } from '../notifications/support';

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
