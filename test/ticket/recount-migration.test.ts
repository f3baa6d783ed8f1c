/**
 * Migration 049 rebuilds the ticket list's counters, the `assigned` flags and the operators' list
 * copies from the tickets: counts an earlier release left wrong (a deleted customer's merged
 * ticket given back by the foreign key, uncounted; assignee rows taken by a cascade) are exact
 * again after the upgrade, and exact ones stay as they were. Found by a black-box audit of an
 * upgrade: the list answered a count one short and its last page never showed one ticket.
 */
import { now } from '../../src/db/entity';
import { sequelize } from '../../src/db/sequelize';
import { foldDayCounters } from '../../src/ticket/tickets/dayCounterFold';
import { useApi } from '../helpers/app';
import { counterState, recount } from './counterState';
import { ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
let ctx: TicketContext;
beforeAll(async () => { ctx = await ticketContext(); });
const f = ticketFactories(api, () => ctx);

const q = (sql: string) => sequelize().query(sql);

it('makes counts an earlier release left wrong exact again, and leaves exact ones as they are', async () => {
  const op = await f.operator();
  const assigned = await f.ticket({ assignedto: [op.id] });
  const plain = await f.ticket();
  await f.ticket({ status: ctx.resolvedStatus });
  expect((await api.del(`/api/ticket/ticket/${plain.id}`)).body.message).toBe('Successfully moved the ticket to trash!');
  // The day counters folded (today's too): the recount gives the same counts from unfolded rows.
  await foldDayCounters(now() + 2 * 86400);
  const exact = await counterState();

  // What a run of the earlier release left: the ticket listed but counted nowhere, its operator's
  // count and list copy gone, and a flag that says assigned with no assignee row (statements
  // that run no trigger, as the foreign keys' cascades did).
  await q('UPDATE ticket_list_counts SET n = n - 1 WHERE n > 0 AND state = 0 LIMIT 1');
  await q('UPDATE ticket_day_counts SET n = n + 2 WHERE n > 0 LIMIT 1');
  await q('UPDATE ticket_day_filter_counts SET n = n - 1 WHERE n > 0 LIMIT 1');
  await q(`DELETE FROM ticket_assignee_counts WHERE user_id = ${op.id}`);
  await q('DELETE FROM ticket_user_counts WHERE n > 0 LIMIT 1');
  await q(`DELETE FROM ticket_assignee_list WHERE user_id = ${op.id}`);
  expect(await counterState()).not.toEqual(exact);

  await recount(sequelize().getQueryInterface());
  expect(await counterState()).toEqual(exact);
  // And the list counts the ticket again.
  const listed = await api.get('/api/ticket/ticket', { assigned: op.id });
  expect(listed.body.count).toBe(1);
  expect(listed.body.data.map((t: { id: number }) => t.id)).toEqual([assigned.id]);
});

it('sets the assigned flag from the assignee rows and counts the ticket where the flag puts it', async () => {
  const unassigned = await f.ticket();
  const exact = await counterState();
  // A flag left at 1 when the cascade took its last assignee row (the triggers move its counters with it).
  await q(`UPDATE tickets SET assigned = 1 WHERE id = ${unassigned.id}`);
  expect(await counterState()).not.toEqual(exact);
  await recount(sequelize().getQueryInterface());
  expect(await counterState()).toEqual(exact);
});
