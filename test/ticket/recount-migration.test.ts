/**
 * Migration 049 rebuilds the ticket list's counters, the `assigned` flags and the operators' list
 * copies from the tickets: counts an earlier release left wrong (a deleted customer's merged
 * ticket given back by the foreign key, uncounted; assignee rows taken by a cascade) are exact
 * again after the upgrade, and exact ones stay as they were. Found by a black-box audit of an
 * upgrade: the list answered a count one short and its last page never showed one ticket.
 */
import { QueryTypes } from 'sequelize';
import { up as recount } from '../../migrations/049_recount_ticket_lists';
import { now } from '../../src/db/entity';
import { sequelize } from '../../src/db/sequelize';
import { foldDayCounters } from '../../src/ticket/tickets/dayCounterFold';
import { useApi } from '../helpers/app';
import { ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
let ctx: TicketContext;
beforeAll(async () => { ctx = await ticketContext(); });
const f = ticketFactories(api, () => ctx);

const rows = (sql: string) => sequelize().query<Record<string, unknown>>(sql, { type: QueryTypes.SELECT });
const q = (sql: string) => sequelize().query(sql);

/** Every counter row that counts something, and the copies and flags, as the tables hold them. */
const state = async () => ({
  list: await rows('SELECT * FROM ticket_list_counts WHERE n <> 0 ORDER BY state, status_id, priority_id, department_id, brand_id, channel_id, internal, locked, assigned, slot'),
  // The day counters per day and status (or value): a past day's rows may be folded into one
  // (migration 051), which a recount spreads over the slots again. (lo_id and hi_id are bounds
  // the triggers widen and never narrow: not compared.)
  days: await rows('SELECT col, state, day, status_id, SUM(n) AS n FROM ticket_day_counts GROUP BY col, state, day, status_id HAVING n <> 0 ORDER BY col, state, day, status_id'),
  dayFilters: await rows('SELECT col, state, dim, val, day, status_id, SUM(n) AS n FROM ticket_day_filter_counts GROUP BY col, state, dim, val, day, status_id HAVING n <> 0 ORDER BY col, state, dim, val, day, status_id'),
  assignees: await rows('SELECT * FROM ticket_assignee_counts WHERE n <> 0 ORDER BY user_id, state, status_id, slot'),
  users: await rows('SELECT * FROM ticket_user_counts WHERE n <> 0 ORDER BY user_id, state, status_id, slot'),
  assigneeList: await rows('SELECT * FROM ticket_assignee_list ORDER BY user_id, ticket_id'),
  assigned: await rows('SELECT id, assigned FROM tickets ORDER BY id'),
});

it('makes counts an earlier release left wrong exact again, and leaves exact ones as they are', async () => {
  const op = await f.operator();
  const assigned = await f.ticket({ assignedto: [op.id] });
  const plain = await f.ticket();
  await f.ticket({ status: ctx.resolvedStatus });
  expect((await api.del(`/api/ticket/ticket/${plain.id}`)).body.message).toBe('Successfully moved the ticket to trash!');
  // The day counters folded (today's too): the recount gives the same counts from unfolded rows.
  await foldDayCounters(now() + 2 * 86400);
  const exact = await state();

  // What a run of the earlier release left: the ticket listed but counted nowhere, its operator's
  // count and list copy gone, and a flag that says assigned with no assignee row (statements
  // that run no trigger, as the foreign keys' cascades did).
  await q('UPDATE ticket_list_counts SET n = n - 1 WHERE n > 0 AND state = 0 LIMIT 1');
  await q('UPDATE ticket_day_counts SET n = n + 2 WHERE n > 0 LIMIT 1');
  await q('UPDATE ticket_day_filter_counts SET n = n - 1 WHERE n > 0 LIMIT 1');
  await q(`DELETE FROM ticket_assignee_counts WHERE user_id = ${op.id}`);
  await q('DELETE FROM ticket_user_counts WHERE n > 0 LIMIT 1');
  await q(`DELETE FROM ticket_assignee_list WHERE user_id = ${op.id}`);
  expect(await state()).not.toEqual(exact);

  await recount(sequelize().getQueryInterface());
  expect(await state()).toEqual(exact);
  // And the list counts the ticket again.
  const listed = await api.get('/api/ticket/ticket', { assigned: op.id });
  expect(listed.body.count).toBe(1);
  expect(listed.body.data.map((t: { id: number }) => t.id)).toEqual([assigned.id]);
});

it('sets the assigned flag from the assignee rows and counts the ticket where the flag puts it', async () => {
  const unassigned = await f.ticket();
  const exact = await state();
  // A flag left at 1 when the cascade took its last assignee row (the triggers move its counters with it).
  await q(`UPDATE tickets SET assigned = 1 WHERE id = ${unassigned.id}`);
  expect(await state()).not.toEqual(exact);
  await recount(sequelize().getQueryInterface());
  expect(await state()).toEqual(exact);
});
