import { QueryTypes } from 'sequelize';
import { Ticket } from '../../src/db/models';
import { countQueries, sequelize } from '../../src/db/sequelize';
import { NARROWING_PARAMS, ticketFilters } from '../../src/ticket/tickets/listFilters';
import { countedByCounters } from '../../src/ticket/tickets/listPage';
import { useApi } from '../helpers/app';
import { expectSuccess } from '../helpers/envelope';
import { ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

/**
 * The unfiltered ticket list reads its `count` from counters that triggers keep (migration 015)
 * instead of counting every ticket: it must stay exact through creates, trash, merges and deletes,
 * whoever writes them.
 */
const api = useApi();
let ctx: TicketContext;
beforeAll(async () => { ctx = await ticketContext(); });
const f = ticketFactories(api, () => ctx);

const actual = async () => {
  const [row] = await sequelize().query<{ n: number }>('SELECT COUNT(*) AS n FROM tickets WHERE deleted_at IS NULL AND merged_into_id IS NULL', { type: QueryTypes.SELECT });
  return Number(row!.n);
};
const listed = async () => (await api.get('/api/ticket/ticket', { limit: 1 })).body.count as number;

describe('count of the unfiltered ticket list', () => {
  it('is exact after creates, trash, restore by hand, merges and deletes, without COUNT(*)', async () => {
    const a = await f.ticket();
    const b = await f.ticket();
    const c = await f.ticket();
    expect(await listed()).toBe(await actual());
    expect((await api.del(`/api/ticket/ticket/${a.id}`)).status).toBe(200);
    expect(await listed()).toBe(await actual());
    await Ticket.update({ deleted_at: null }, { where: { id: a.id } }); // out of the trash, by hand
    expect(await listed()).toBe(await actual());
    expectSuccess(await api.post(`/api/ticket/ticket/${b.id}/merge`, { ids: [c.id] }), 'Successfully updated the ticket!');
    expect(await listed()).toBe(await actual());
    await sequelize().query('DELETE FROM tickets WHERE id = ?', { replacements: [a.id] });
    expect(await listed()).toBe(await actual());
    const { queries } = await countQueries(() => listed());
    expect(queries.some((q) => /count\(\*\)/i.test(q) && /FROM `tickets`/.test(q))).toBe(false);
  });

  it('stays exact when a user with tickets is deleted (their tickets go with them, not by a cascade triggers never see)', async () => {
    const t = await f.ticket();
    await f.ticket({ user: t.user_id });
    expect(await listed()).toBe(await actual());
    expect((await api.del(`/api/user/user/${t.user_id}`)).status).toBe(200);
    expect(await Ticket.count({ where: { user_id: t.user_id } })).toBe(0);
    expect(await listed()).toBe(await actual());
  });

  it('stays exact when the user of a merge target is deleted: their own ticket merged into it goes, another customer\'s is given back and listed (and counted) again', async () => {
    const target = await f.ticket();
    const own = await f.ticket({ user: target.user_id });
    const others = await f.ticket(); // another user's ticket
    expectSuccess(await api.post(`/api/ticket/ticket/${target.id}/merge`, { ids: [own.id, others.id] }), 'Successfully updated the ticket!');
    expect(await listed()).toBe(await actual());
    expect((await api.del(`/api/user/user/${target.user_id}`)).status).toBe(200);
    expect(await Ticket.findByPk(own.id)).toBeNull();
    expect(await Ticket.findByPk(others.id)).toMatchObject({ merged_into_id: null });
    expect(await listed()).toBe(await actual());
    const res = await api.get('/api/ticket/ticket', { limit: 10, user: others.user_id });
    expect({ count: res.body.count, ids: res.body.data.map((t: any) => t.id) }).toEqual({ count: 1, ids: [others.id] });
  });

  it('still counts a filtered list and the trash', async () => {
    const t = await f.ticket();
    const res = await api.get('/api/ticket/ticket', { limit: 1, user: t.user_id });
    expect(res.body.count).toBe(1);
    const trash = await api.get('/api/ticket/ticket', { limit: 1, trashed: 1 });
    const [row] = await sequelize().query<{ n: number }>('SELECT COUNT(*) AS n FROM tickets WHERE deleted_at IS NOT NULL AND merged_into_id IS NULL', { type: QueryTypes.SELECT });
    expect(trash.body.count).toBe(Number(row!.n));
  });
});

describe('which lists the counters answer', () => {
  it('every list parameter that narrows the list, but the counted ones, counts its matches instead', () => {
    const counted = ['status', 'priority', 'department', 'brand', 'channel', 'internal', 'locked'];
    // Derived from the list's own filters: a filter added there is never missed here.
    expect(NARROWING_PARAMS).toEqual(expect.arrayContaining([...Object.keys(ticketFilters), 'filter', 'created_at_min', 'updated_at_max']));
    for (const k of NARROWING_PARAMS) expect([k, countedByCounters({ [k]: [1] })]).toEqual([k, counted.includes(k)]);
    expect(countedByCounters({ trashed: 1, after_id: 5 })).toBe(true);
    // `assigned=-1` alone is the counters' `assigned = 0`; operators' ids (with -1 or not) count their matches.
    expect(countedByCounters({ assigned: [-1], status: [1] })).toBe(true);
    expect(countedByCounters({ assigned: [-1, 1] })).toBe(false);
    expect(countedByCounters({ assigned: [-1], tag: [1] })).toBe(false);
  });
});
