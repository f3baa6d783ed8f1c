/**
 * A ticket's organisation (`tickets.organisation_id`, migration 086): always its customer's as it
 * is now, through every way a ticket is made or changes customer and every way a customer joins,
 * leaves or moves between organisations, an organisation's delete and a cascade. The list's
 * `organisation` filter and a saved filter's organisation condition read it; an organisation's
 * page is a range of its own index whatever its number of people; the migration goes down and up.
 */
import { QueryTypes } from 'sequelize';
import { capture } from '../../bench/capture';
import * as m086 from '../../migrations/086_ticket_organisation';
import * as m087 from '../../migrations/087_list_indexes_hold_customers';
import * as m088 from '../../migrations/088_subject_index_holds_counted';
import * as m090 from '../../migrations/090_customer_subject_indexes';
import * as m091 from '../../migrations/091_ticket_organisation_counts';
import { listIndexes } from '../../migrations/097_department_updated_index';
import { Organisation, TicketPriority, User } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { unique, useApi } from '../helpers/app';
import { expectList, expectSuccess } from '../helpers/envelope';
import { ids, query, ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
const BASE = '/api/ticket/ticket';
let ctx: TicketContext;
const f = ticketFactories(api, () => ctx);

beforeAll(async () => { ctx = await ticketContext(); });

const organisation = () => Organisation.create({ name: unique('TicketOrg'), brand_id: ctx.brandId });

/** The organisation kept on each of `tickets`, by ticket id. */
const kept = async (tickets: number[]) => new Map((await query<{ id: number; o: number | null }>(
  'SELECT id, organisation_id AS o FROM tickets WHERE id IN (?)', [tickets],
)).map((r) => [Number(r.id), r.o === null ? null : Number(r.o)]));

/** Tickets of the whole database whose kept organisation is not their customer's. */
const drifted = async () => Number((await query<{ n: number }>(
  'SELECT COUNT(*) AS n FROM tickets t JOIN users u ON u.id = t.user_id WHERE NOT (t.organisation_id <=> u.organisation_id)',
))[0].n);

/** An organisation's listed tickets through the members, the plain way (id order). */
const plain = async (org: number) => (await query<{ id: number }>(
  `SELECT id FROM tickets WHERE user_id IN (SELECT id FROM users WHERE organisation_id = ?) AND deleted_at IS NULL AND merged_into_id IS NULL ORDER BY id`,
  [org],
)).map((r) => Number(r.id));

/** The list of `org` (id order) equals the plain way's, and its count. */
async function expectListed(org: number, want: number[]) {
  expect(await plain(org)).toEqual(want);
  const res = await api.get(BASE, { organisation: org, limit: 100 });
  expect({ org, ids: ids(expectList(res)), count: res.body.count }).toEqual({ org, ids: want, count: want.length });
}

describe("a ticket's organisation, kept by migration 086", () => {
  it("follows the customer's organisation through creates, a change of customer, joining, leaving, moving and deletes", async () => {
    const [a, b] = [await organisation(), await organisation()];
    const [u1, u2, u3] = [await f.user({ organisation_id: a.id }), await f.user(), await f.user({ organisation_id: b.id })];
    // Made through the API for each customer.
    const t1 = await f.ticket({ user: u1.id });
    const t2 = await f.ticket({ user: u1.id });
    const t3 = await f.ticket({ user: u2.id });
    const t4 = await f.ticket({ user: u3.id });
    const all = [t1.id, t2.id, t3.id, t4.id];
    expect(await kept(all)).toEqual(new Map([[t1.id, a.id], [t2.id, a.id], [t3.id, null], [t4.id, b.id]]));
    await expectListed(a.id, [t1.id, t2.id]);

    // A ticket given another customer takes theirs (and leaves the old one's organisation).
    expectSuccess(await api.put(`${BASE}/${t2.id}`, { user: u3.id }), 'Successfully updated the ticket!');
    expect((await kept([t2.id])).get(t2.id)).toBe(b.id);
    await expectListed(a.id, [t1.id]);
    await expectListed(b.id, [t2.id, t4.id]);

    // A customer joining (the user's update through the API), moving, leaving.
    expectSuccess(await api.put(`/api/user/user/${u2.id}`, { organisation_id: a.id }), 'Successfully updated the user!');
    expect((await kept([t3.id])).get(t3.id)).toBe(a.id);
    await expectListed(a.id, [t1.id, t3.id]);
    expectSuccess(await api.put(`/api/user/user/${u1.id}`, { organisation_id: b.id }), 'Successfully updated the user!');
    await expectListed(a.id, [t3.id]);
    await expectListed(b.id, [t1.id, t2.id, t4.id]);
    expectSuccess(await api.put(`/api/user/user/${u1.id}`, { organisation_id: 0 }), 'Successfully updated the user!');
    expect((await kept([t1.id])).get(t1.id)).toBeNull();
    await expectListed(b.id, [t2.id, t4.id]);
    expect(await drifted()).toBe(0);

    // The organisation's delete through the API clears its members' tickets.
    const deleted = await api.del(`/api/user/organisation/${b.id}`);
    expect({ status: deleted.status, message: deleted.body.message }).toEqual({ status: 200, message: 'Successfully deleted the organisation!' });
    expect(await kept([t2.id, t4.id])).toEqual(new Map([[t2.id, null], [t4.id, null]]));
    // A delete no statement of ours runs (the users' foreign key clears their organisation by a
    // cascade, which runs no trigger): the tickets' foreign key clears theirs too.
    await sequelize().query('DELETE FROM organisations WHERE id = ?', { replacements: [a.id] });
    expect((await User.findByPk(u2.id))!.organisation_id).toBeNull();
    expect((await kept([t3.id])).get(t3.id)).toBeNull();
    expect(await drifted()).toBe(0);
  });

  it('reads the organisation in a saved filter, equal and not equal', async () => {
    const org = await organisation();
    const member = await f.user({ organisation_id: org.id });
    const theirs = await f.ticket({ user: member.id, subject: unique('OrgFilter') });
    const other = await f.ticket({ subject: theirs.subject });
    for (const [operator, want] of [['equals', [theirs.id]], ['not_equals', [other.id]]] as const) {
      const filter = expectSuccess(await api.post('/api/ticket/filter', {
        name: unique('Org'),
        conditions: [{ rules: [{ item: 'organisation', operator, value: org.id }, { item: 'subject', operator: 'equals', value: theirs.subject }] }],
      }), 'Successfully created new filter!');
      const res = await api.get(BASE, { filter: filter.id, limit: 100 });
      expect({ operator, ids: ids(expectList(res)), count: res.body.count }).toEqual({ operator, ids: want, count: want.length });
    }
  });

  it('pages an organisation of more people than a merge takes from its own range, in id, updated_at and subject order, without a sort', async () => {
    const org = await organisation();
    // More people than the members' merge took (64): each with a ticket.
    const people = await User.bulkCreate(Array.from({ length: 70 }, (_, i) => ({
      type: 'user', brand_id: ctx.brandId, email: `${unique('many')}-${i}@example.com`, firstname: 'Many', lastname: 'People', organisation_id: org.id,
    })) as any[]);
    // Subjects of five families, ties broken by id.
    for (const [i, person] of people.entries()) await f.ticket({ user: person.id, subject: `Org family ${(i * 3) % 5}` });
    const want = await plain(org.id);
    expect(want.length).toBe(70);
    for (const [column, index] of [['id', m086.ORGANISATION_INDEX], ['updated_at', m086.ORGANISATION_UPDATED_INDEX], ['subject', m090.ORGANISATION_SUBJECT_INDEX]]) {
      for (const filter of [{}, { order_direction: 'desc' }, { status: ctx.statuses.join(',') }, { start: 20 }]) {
        const q = { organisation: org.id, order_column: column, limit: 5, ...filter };
        const { statements, result } = await capture(() => api.get(BASE, q));
        const order = column === 'id' ? `id` : `${column}, id`;
        const dir = 'order_direction' in filter ? ' DESC' : '';
        const sorted = (await query<{ id: number }>(`SELECT id FROM tickets WHERE id IN (?) ORDER BY ${order.split(', ').map((c) => c + dir).join(', ')}`, [want])).map((r) => Number(r.id));
        const start = 'start' in filter ? Number(filter.start) - 1 : 0;
        expect({ q, ids: ids(expectList(result)), count: result.body.count }).toEqual({ q, ids: sorted.slice(start, start + 5), count: 70 });
        const page = statements.find((s) => s.sql.startsWith('SELECT STRAIGHT_JOIN t.* FROM (SELECT'))!;
        expect({ q, forced: page.sql.includes(`FORCE INDEX (${index})`) }).toEqual({ q, forced: true });
        const plan = await sequelize().query<Record<string, any>>(`EXPLAIN ${page.sql}`, { replacements: page.params, type: QueryTypes.SELECT });
        // The organisation's range, in its index's order: no sort of the organisation's tickets.
        expect({ q, ranges: plan.filter((r) => r.table === 'c').map((r) => ({ key: r.key, sorted: /filesort/.test(String(r.Extra)) })) })
          .toEqual({ q, ranges: [{ key: index, sorted: false }] });
      }
    }
  });

  it("counts an organisation's tickets beside another filter from its counters, and walks its range for the page in id, updated_at and subject order", async () => {
    const org = await organisation();
    const members = [await f.user({ organisation_id: org.id }), await f.user({ organisation_id: org.id })];
    const priorities = [ctx.priorityId, (await TicketPriority.create({ name: unique('Org priority'), order: 1000 })).id];
    for (let i = 0; i < 8; i++) await f.ticket({ user: members[i % 2].id, priority: priorities[i % 2] });
    for (const [filter, hinted] of [
      [{ priority: priorities[0] }, true], [{ department: ctx.departmentId }, true], [{ priority: priorities[1], order_column: 'updated_at', order_direction: 'desc' }, true],
      [{ priority: priorities[0], order_column: 'subject', order_direction: 'desc' }, true],
      // An order no index of the organisation holds: the optimiser's page.
      [{ priority: priorities[0], order_column: 'created_at' }, false],
    ] as const) {
      const q = { organisation: org.id, limit: 100, ...filter };
      const { statements, result } = await capture(() => api.get(BASE, q));
      const column = 'order_column' in filter ? filter.order_column : 'id';
      const want = (await query<{ id: number }>(
        `SELECT t.id FROM tickets t JOIN users u ON u.id = t.user_id WHERE u.organisation_id = ? AND t.deleted_at IS NULL AND t.merged_into_id IS NULL
           AND ${'priority' in filter ? 't.priority_id = ?' : 't.department_id = ?'} ORDER BY t.${column} ${'order_direction' in filter ? 'DESC' : 'ASC'}, t.id ${'order_direction' in filter ? 'DESC' : 'ASC'}`,
        [org.id, 'priority' in filter ? filter.priority : filter.department],
      )).map((r) => Number(r.id));
      expect(want.length).toBeGreaterThan(0);
      expect({ q, ids: ids(expectList(result)), count: result.body.count }).toEqual({ q, ids: want, count: want.length });
      // The count: the organisation's rows of migration 091's counters that match the filter, a
      // range of their key; no COUNT of its tickets (ticket-organisation-counts.test.ts).
      expect({ q, counts: statements.filter((st) => /COUNT\(/.test(st.sql)).length }).toEqual({ q, counts: 0 });
      const count = statements.find((st) => /FROM ticket_organisation_counts/.test(st.sql))!;
      const counted = await sequelize().query<Record<string, any>>(`EXPLAIN ${count.sql}`, { replacements: count.params, type: QueryTypes.SELECT });
      expect({ q, keys: counted.map((r) => r.key) }).toEqual({ q, keys: ['PRIMARY'] });
      const page = statements.find((st) => st.sql.startsWith('SELECT STRAIGHT_JOIN t.* FROM (SELECT'))!;
      const index = ({ id: m086.ORGANISATION_INDEX, updated_at: m086.ORGANISATION_UPDATED_INDEX, subject: m090.ORGANISATION_SUBJECT_INDEX } as Record<string, string>)[column];
      expect({ q, hinted: page.sql.includes(`FORCE INDEX (${index})`) }).toEqual({ q, hinted });
      if (hinted) {
        const plan = await sequelize().query<Record<string, any>>(`EXPLAIN ${page.sql}`, { replacements: page.params, type: QueryTypes.SELECT });
        const inner = plan.find((r) => r.select_type === 'DERIVED')!;
        expect({ q, key: inner.key, sorted: /filesort/.test(String(inner.Extra)) }).toEqual({ q, key: index, sorted: false });
      }
    }
  });

  it("pages an organisation's tickets in the customer order from its members' counters: every page exact, each a range of the customer index in its order", async () => {
    const org = await organisation();
    // Members with 3, 0, 1 and 4 tickets (one with none), of two statuses; one ticket trashed, one
    // merged into another, one's status changed (each moves it between the counters' rows).
    const members = [await f.user({ organisation_id: org.id }), await f.user({ organisation_id: org.id }), await f.user({ organisation_id: org.id }), await f.user({ organisation_id: org.id })];
    const made = [];
    for (const [i, m] of [0, 2, 3, 0, 3, 0, 3, 3].entries()) made.push(await f.ticket({ user: members[m].id, status: ctx.statuses[i % 2] }));
    expect((await api.del(`${BASE}/${made[3].id}`)).status).toBe(200);
    expectSuccess(await api.post(`${BASE}/${made[2].id}/merge`, { ids: [made[4].id] }), 'Successfully updated the ticket!');
    expectSuccess(await api.put(`${BASE}/${made[7].id}`, { status: ctx.statuses[0] }), 'Successfully updated the ticket!');
    for (const status of [undefined, ctx.statuses[0]]) {
      for (const dir of ['asc', 'desc']) {
        const want = (await query<{ id: number }>(
          `SELECT id FROM tickets WHERE organisation_id = ? AND deleted_at IS NULL AND merged_into_id IS NULL ${status ? 'AND status_id = ?' : ''}
             ORDER BY user_id ${dir}, id ${dir}`, [org.id, ...(status ? [status] : [])],
        )).map((r) => Number(r.id));
        expect(want.length).toBeGreaterThan(2);
        // Every page of two, and the page past the end.
        for (let start = 1; start <= want.length + 1; start++) {
          const q = { organisation: org.id, order_column: 'user_id', order_direction: dir, start, limit: 2, ...(status ? { status } : {}) };
          const { statements, result } = await capture(() => api.get(BASE, q));
          expect({ q, ids: ids(expectList(result)), count: result.body.count }).toEqual({ q, ids: want.slice(start - 1, start + 1), count: want.length });
          // Two statements of the list's own: the members' counters (the count and where the page
          // falls), and the page; no COUNT.
          const own = statements.filter((st) => /FROM ticket_day_counts|FROM `tickets`|COUNT\(/.test(st.sql));
          expect({ q, own: own.map((st) => (/ticket_day_counts/.test(st.sql) ? 'counters' : /COUNT\(/.test(st.sql) ? 'COUNT' : 'page')) })
            .toEqual({ q, own: ['counters', 'page'] });
          if (start > want.length) continue;
          const page = own[1];
          expect({ q, forced: page.sql.includes('FORCE INDEX (tickets_filter_user_id)') }).toEqual({ q, forced: true });
          const plan = await sequelize().query<Record<string, any>>(`EXPLAIN ${page.sql}`, { replacements: page.params, type: QueryTypes.SELECT });
          const inner = plan.find((r) => r.select_type === 'DERIVED')!;
          expect({ q, key: inner.key, sorted: /filesort/.test(String(inner.Extra)) }).toEqual({ q, key: 'tickets_filter_user_id', sorted: false });
        }
        // After an id: from that ticket on (the customers' tickets sorted or walked), exact.
        const after = await api.get(BASE, { organisation: org.id, order_column: 'user_id', order_direction: dir, after_id: want[0], limit: 100, ...(status ? { status } : {}) });
        expect({ dir, status, ids: ids(expectList(after)) }).toEqual({ dir, status, ids: want.slice(1) });
      }
    }
  });

  it('goes down (column, indexes, key and triggers gone) and up again (filled from the customers, then kept)', async () => {
    const qi = sequelize().getQueryInterface();
    const own = async () => (await query<{ t: string }>(
      'SELECT TRIGGER_NAME AS t FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME IN (?)',
      [['tickets_organisation_insert', 'tickets_organisation_update', 'users_tickets_organisation']],
    )).length;
    const column = async () => (await query("SELECT 1 FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'tickets' AND COLUMN_NAME = 'organisation_id'")).length;
    const org = await organisation();
    const member = await f.user({ organisation_id: org.id });
    const before = await f.ticket({ user: member.id });
    // Migrations 091, 088 and 087 first, as a down of them all runs (091's triggers read the
    // column; 087's and 088's list indexes end with it: its drop would take it out of them, and
    // 086's up would not put it back).
    await m091.down(qi);
    await m088.down(qi);
    await m087.down(qi);
    await m086.down(qi);
    expect({ triggers: await own(), column: await column() }).toEqual({ triggers: 0, column: 0 });
    // Made while the column is gone: filled by the migration's up.
    const during = await f.ticket({ user: member.id });
    await m086.up(qi);
    await m087.up(qi);
    await m088.up(qi);
    await m091.up(qi);
    expect({ triggers: await own(), column: await column() }).toEqual({ triggers: 3, column: 1 });
    // The list indexes as they are defined again (088's, and 097's, which the down left: later files of this worker walk them).
    const listed = await query<{ n: string; c: string }>(`SELECT INDEX_NAME AS n, GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX) AS c
      FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'tickets' AND INDEX_NAME LIKE 'tickets\\_list\\_%' GROUP BY INDEX_NAME`);
    const defined = Object.entries(listIndexes()).filter(([n]) => n.startsWith('tickets_list_'));
    expect(new Map(listed.map((r) => [r.n, r.c]))).toEqual(new Map(defined.map(([n, c]) => [n, c.join(',')])));
    expect(await kept([before.id, during.id])).toEqual(new Map([[before.id, org.id], [during.id, org.id]]));
    expect(await drifted()).toBe(0);
    await expectListed(org.id, [before.id, during.id]);
    // Kept again after the up.
    const after = await f.ticket({ user: member.id });
    expect((await kept([after.id])).get(after.id)).toBe(org.id);
  });
});
