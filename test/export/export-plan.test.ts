/**
 * The tickets export's page at scale: its `(updated_at, id)` keyset is an index range (migration
 * 018b), never a sort of the tickets changed since the cursor (EXPLAIN of the statement the export runs).
 */
import './exportEnv';
import { QueryTypes } from 'sequelize';
import { capture } from '../../bench/capture';
import { Department, Ticket } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { nowSec, useApi } from '../helpers/app';
import { expectSuccess } from '../helpers/envelope';
import { ticketContext, ticketFactories, type TicketContext } from '../ticket/ticketSupport';

const api = useApi();
let ctx: TicketContext;
const f = ticketFactories(api, () => ctx);

beforeAll(async () => {
  ctx = await ticketContext();
  const made = [];
  for (let i = 0; i < 6; i++) made.push((await f.ticket()).id);
  // Changed an hour ago: past the export's hold-back.
  await Ticket.update({ updated_at: nowSec() - 3600 }, { where: { id: made }, hooks: false });
});

/** The tickets statement of an export request, and its EXPLAIN. */
async function plan(query: Record<string, unknown>) {
  const { result, statements } = await capture(() => api.get('/api/export/tickets', { limit: 2, ...query }));
  const page = expectSuccess(result);
  const tickets = statements.find((s) => /FROM `tickets` AS `Ticket`/.test(s.sql) && /ORDER BY `Ticket`.`updated_at` ASC, `Ticket`.`id` ASC/.test(s.sql));
  expect(tickets).toBeDefined();
  const rows = await sequelize().query<Record<string, any>>(`EXPLAIN ${tickets!.sql}`, { replacements: tickets!.params, type: QueryTypes.SELECT });
  return { page, rows };
}

it('reads the tickets in (updated_at, id) order from tickets_export_keyset, from the start and after a cursor', async () => {
  const first = await plan({});
  const second = await plan({ cursor: first.page.after_cursor });
  for (const { rows } of [first, second]) {
    expect(rows).toHaveLength(1);
    expect({ key: rows[0].key, type: rows[0].type }).toEqual({ key: 'tickets_export_keyset', type: 'range' });
    expect(rows[0].Extra).not.toMatch(/filesort/);
  }
});

it("narrowed by a search's department id, reads the department's ids and those below it, not a recursive subquery the optimiser cannot size", async () => {
  const top = await Department.create({ name: `Export plan ${nowSec()} ${Math.random()}`, parent_id: null });
  const below = await Department.create({ name: `Export plan below ${nowSec()} ${Math.random()}`, parent_id: top.id });
  for (const search of [`department:${top.id}`, `-department:${top.id}`, `department:${top.id} OR department:${below.id}`]) {
    const { statements } = await capture(() => api.get('/api/export/tickets', { limit: 2, search }));
    const tickets = statements.find((s) => /FROM `tickets` AS `Ticket`/.test(s.sql) && /_fingerprint/.test(s.sql))!;
    expect({ search, recursive: /WITH RECURSIVE/.test(tickets.sql) }).toEqual({ search, recursive: false });
    expect({ search, ids: JSON.stringify(tickets.params).includes(JSON.stringify([top.id, below.id])) }).toEqual({ search, ids: true });
  }
});

it('narrowed by a search, finds the end of its span (EXPORT_SEARCH_SPAN tickets on) from the keyset index alone, then reads the tickets of the span', async () => {
  const { statements } = await capture(() => api.get('/api/export/tickets', { limit: 2, search: 'status:1' }));
  const tickets = statements.filter((s) => /FROM `tickets` AS `Ticket`/.test(s.sql));
  const end = tickets.find((s) => !/_fingerprint/.test(s.sql));
  expect(end).toBeDefined();
  const [row, ...others] = await sequelize().query<Record<string, any>>(`EXPLAIN ${end!.sql}`, { replacements: end!.params, type: QueryTypes.SELECT });
  expect(others).toEqual([]);
  expect({ key: row.key, type: row.type }).toEqual({ key: 'tickets_export_keyset', type: 'range' });
  expect(row.Extra).toMatch(/Using index/);
  expect(row.Extra).not.toMatch(/filesort/);
  expect(end!.params).toMatchObject({ pageOffset: 9999, pageLimit: 1 });
  // Without a search, the whole stream: no span to find.
  const plain = await capture(() => api.get('/api/export/tickets', { limit: 2 }));
  expect(plain.statements.filter((s) => /FROM `tickets` AS `Ticket`/.test(s.sql) && !/_fingerprint/.test(s.sql))).toEqual([]);
});
