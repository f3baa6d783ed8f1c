/**
 * One customer's tickets (`user=<id>`, alone or with `status`; migration 035,
 * src/ticket/tickets/listPage.ts): `count` sums the customer's counters, exact through every way a
 * ticket is created, changes customer or status, goes to the trash and back, is merged and
 * deleted, and through the customer's own delete; never a COUNT of the customer's tickets. The
 * page is the customer's tickets in the list's order, in two statements, past the middle read
 * from the far end; organisations' tickets are counted from their members' counters; the
 * migration goes down and up.
 */
import { QueryTypes } from 'sequelize';
import { capture } from '../../bench/capture';
import * as m035 from '../../migrations/035_ticket_user_counts';
import * as m092 from '../../migrations/092_ticket_user_counts_by_filter';
import { Brand, Organisation, Ticket, User, UserEmail } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { unique, useApi } from '../helpers/app';
import { expectList, expectSuccess } from '../helpers/envelope';
import { expectAfterPages, expectKeyedCounts, ids, query, ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
const BASE = '/api/ticket/ticket';
let ctx: TicketContext;
const f = ticketFactories(api, () => ctx);

beforeAll(async () => { ctx = await ticketContext(); });

/** The customer's tickets, the plain way, in the list's order. */
const actual = async (customer: number, trashed: boolean, status: number | undefined, order: string) => (await query<{ id: number }>(
  `SELECT id FROM tickets WHERE user_id = ? AND merged_into_id IS NULL AND deleted_at IS ${trashed ? 'NOT ' : ''}NULL ${status ? 'AND status_id = ?' : ''} ORDER BY ${order}`,
  [customer, ...(status ? [status] : [])],
)).map((r) => Number(r.id));

const ORDERS: Array<[string, string, string]> = [
  ['id', 'asc', 'id ASC'], ['id', 'desc', 'id DESC'], ['updated_at', 'asc', 'updated_at ASC, id ASC'], ['updated_at', 'desc', 'updated_at DESC, id DESC'],
  ['user_id', 'asc', 'user_id ASC, id ASC'], ['user_id', 'desc', 'user_id DESC, id DESC'],
  ['subject', 'asc', 'subject ASC, id ASC'], ['subject', 'desc', 'subject DESC, id DESC'],
];

/** Every customer's count and pages, by status and none, listed and trashed; pages of two past the middle. */
async function check(customers: number[]) {
  for (const customer of customers) {
    for (const trashed of [false, true]) {
      for (const status of [undefined, ...ctx.statuses.slice(0, 2)]) {
        for (const [order_column, order_direction, order] of ORDERS) {
          const q = { user: customer, limit: 100, order_column, order_direction, ...(status ? { status } : {}), ...(trashed ? { trashed: 1 } : {}) };
          const { statements, result } = await capture(() => api.get(BASE, q));
          const want = await actual(customer, trashed, status, order);
          expect({ q, count: result.body.count, ids: ids(expectList(result)) }).toEqual({ q, count: want.length, ids: want });
          // The count from the counters, no COUNT: the list's two statements.
          const own = statements.filter((s) => /FROM ticket_user_counts|FROM ticket_list_counts|FROM `tickets`|COUNT\(/.test(s.sql));
          expect({
            q, counters: own.some((s) => /FROM ticket_user_counts/.test(s.sql)), counts: own.filter((s) => /COUNT\(/.test(s.sql)).length, own: own.length,
          }).toEqual({ q, counters: true, counts: 0, own: 2 });
          for (const start of [Math.floor(want.length / 2) + 1, want.length].filter((x) => x >= 1)) {
            const deep = await api.get(BASE, { ...q, start, limit: 2 });
            expect({ q, start, ids: ids(expectList(deep)) }).toEqual({ q, start, ids: want.slice(start - 1, start + 1) });
          }
        }
      }
    }
  }
}

/** The customers' counters against the tickets themselves (migration 092's columns); the number of rows. */
const expectFilled = () => expectKeyedCounts(m092.USER_COUNTS);

describe("one customer's tickets, counted by migration 035", () => {
  it('are counted exactly and listed in order, through create, customer and status changes, trash, merge and deletes', async () => {
    const [a, b, c] = [await f.user(), await f.user(), await f.user()];
    const made = [];
    for (let i = 0; i < 9; i++) made.push(await f.ticket({ user: [a.id, b.id, c.id][i % 3], status: ctx.statuses[i % 2] }));
    // Ties in updated_at and subject order, broken by id.
    for (const [i, t] of made.entries()) {
      await sequelize().query('UPDATE tickets SET updated_at = ?, subject = ? WHERE id = ?', { replacements: [1_700_000_000 + ((i * 5) % 9) * 60, `Tied ${(i * 7) % 4}`, t.id] });
    }
    const customers = [a.id, b.id, c.id];
    await check(customers);
    // Through the API: a ticket moved to another customer, a status changed, one to the trash.
    expectSuccess(await api.put(`${BASE}/${made[0].id}`, { user: b.id }), 'Successfully updated the ticket!');
    expectSuccess(await api.put(`${BASE}/${made[3].id}`, { user: c.id, status: ctx.statuses[0] }), 'Successfully updated the ticket!');
    expectSuccess(await api.put(`${BASE}/${made[4].id}`, { status: ctx.statuses[0], subject: 'Tied 9' }), 'Successfully updated the ticket!');
    expect((await api.del(`${BASE}/${made[5].id}`)).status).toBe(200);
    expect((await api.del(`${BASE}/${made[7].id}`)).status).toBe(200);
    await check(customers);
    // By hand: a ticket out of the trash, a status and a customer changed in SQL.
    await Ticket.update({ deleted_at: null }, { where: { id: made[5].id } });
    await sequelize().query('UPDATE tickets SET status_id = ?, user_id = ? WHERE id = ?', { replacements: [ctx.statuses[1], a.id, made[6].id] });
    // Merged (the merged ticket leaves its customer's count) and deleted for good.
    expectSuccess(await api.post(`${BASE}/${made[1].id}/merge`, { ids: [made[2].id] }), 'Successfully updated the ticket!');
    await sequelize().query('DELETE FROM tickets WHERE id = ?', { replacements: [made[8].id] });
    await check(customers);
    expect(await expectFilled()).toBeGreaterThan(0);
    // A customer's delete takes their tickets, by statement (a cascade would run no trigger).
    expect((await api.del(`/api/user/user/${c.id}`)).status).toBe(200);
    await check([a.id, b.id, c.id]);
    await expectFilled();
    // Two customers: the sum of their counters; another counted filter beside the customer: their
    // counters too (migration 092).
    for (const q of [{ user: `${a.id},${b.id}` }, { user: a.id, priority: made[0].priority_id }]) {
      const { statements, result } = await capture(() => api.get(BASE, { ...q, limit: 100 }));
      const [{ n }] = await query<{ n: number }>(
        `SELECT COUNT(*) AS n FROM tickets WHERE user_id IN (?) AND deleted_at IS NULL AND merged_into_id IS NULL${'priority' in q ? ' AND priority_id = ?' : ''}`,
        [String(q.user).split(',').map(Number), ...('priority' in q ? [q.priority] : [])],
      );
      expect({ q, count: expectList(result) && result.body.count }).toEqual({ q, count: Number(n) });
      expect(Number(n)).toBeGreaterThan(0);
      expect({ q, counters: statements.some((s) => /FROM ticket_user_counts/.test(s.sql)), counts: statements.filter((s) => /COUNT\(/.test(s.sql)).length })
        .toEqual({ q, counters: true, counts: 0 });
    }
  });

  it("counts organisations' tickets (and a status) from their counters, through trash, merge and a member moving", async () => {
    const [one, two] = [await Organisation.create({ name: unique('CountOrg'), brand_id: ctx.brandId }), await Organisation.create({ name: unique('CountOrg'), brand_id: ctx.brandId })];
    const [a, b, c] = [await f.user({ organisation_id: one.id }), await f.user({ organisation_id: one.id }), await f.user({ organisation_id: two.id })];
    const made = [];
    for (const [i, u] of [a, a, b, b, c, c, a].entries()) made.push(await f.ticket({ user: u.id, status: ctx.statuses[i % 2] }));
    expect((await api.del(`${BASE}/${made[1].id}`)).status).toBe(200);
    expectSuccess(await api.post(`${BASE}/${made[2].id}/merge`, { ids: [made[3].id] }), 'Successfully updated the ticket!');
    /** The organisations' tickets, the plain way, in the list's order. */
    const plain = async (orgs: number[], trashed: boolean, status: number | undefined, order: string) => (await query<{ id: number }>(
      `SELECT id FROM tickets WHERE user_id IN (SELECT id FROM users WHERE organisation_id IN (?)) AND merged_into_id IS NULL
         AND deleted_at IS ${trashed ? 'NOT ' : ''}NULL ${status ? 'AND status_id = ?' : ''} ORDER BY ${order}`,
      [orgs, ...(status ? [status] : [])],
    )).map((r) => Number(r.id));
    const check = async () => {
      for (const orgs of [[one.id], [one.id, two.id]]) {
        for (const trashed of [false, true]) {
          for (const status of [undefined, ctx.statuses[0]]) {
            for (const [order_column, order_direction, order] of ORDERS) {
              const q = { organisation: orgs.join(','), order_column, order_direction, limit: 100, ...(status ? { status } : {}), ...(trashed ? { trashed: 1 } : {}) };
              const { statements, result } = await capture(() => api.get(BASE, q));
              const want = await plain(orgs, trashed, status, order);
              expect({ q, count: result.body.count, ids: ids(expectList(result)) }).toEqual({ q, count: want.length, ids: want });
              // Their own counters (migration 091); listed in the customer order, their members' rows
              // of that order's counters (migration 062).
              const counters = !trashed && order_column === 'user_id' ? 'ticket_day_counts' : 'ticket_organisation_counts';
              expect({ q, counters: statements.some((st) => st.sql.includes(`FROM ${counters}`)), counts: statements.filter((st) => /COUNT\(/.test(st.sql)).length })
                .toEqual({ q, counters: true, counts: 0 });
            }
          }
        }
      }
    };
    await check();
    // A member moving to the other organisation takes their tickets along at once; one leaving takes them out.
    await User.update({ organisation_id: two.id }, { where: { id: b.id } });
    await User.update({ organisation_id: null }, { where: { id: c.id } });
    await check();
    // Beside another counted filter than a status: their counters too (ticket-organisation-counts.test.ts).
    const { statements, result } = await capture(() => api.get(BASE, { organisation: one.id, priority: ctx.priorityId }));
    expect(result.body.count).toBe((await plain([one.id], false, undefined, 'id')).length);
    expect(statements.some((st) => /FROM ticket_organisation_counts/.test(st.sql))).toBe(true);
  });

  it("pages an organisation's tickets from its own range in id, updated_at and subject order and several customers' from each one's in those and the customer order when that reads fewer entries, every page exact", async () => {
    const org = await Organisation.create({ name: unique('MergedOrg'), brand_id: ctx.brandId });
    const members = [await f.user({ organisation_id: org.id }), await f.user({ organisation_id: org.id }), await f.user({ organisation_id: org.id })];
    const made = [];
    // Twelve tickets, the members taking turns unevenly (ids interleave across the members' ranges).
    for (const [i, u] of [0, 1, 0, 2, 2, 1, 0, 0, 1, 2, 0, 1].entries()) made.push(await f.ticket({ user: members[u].id, status: ctx.statuses[i % 3 === 0 ? 1 : 0] }));
    expect((await api.del(`${BASE}/${made[4].id}`)).status).toBe(200);
    expectSuccess(await api.post(`${BASE}/${made[5].id}/merge`, { ids: [made[8].id] }), 'Successfully updated the ticket!');
    // Five times for twelve tickets, not in id order: ties broken by id, the members' ranges interleaved.
    for (const [i, t] of made.entries()) {
      await sequelize().query('UPDATE tickets SET updated_at = ?, subject = ? WHERE id = ?', { replacements: [1_700_000_000 + ((i * 7) % 5) * 60, `Tied ${(i * 5) % 3}`, t.id] });
    }
    const plain = async (status: number | undefined, order: string) => (await query<{ id: number }>(
      `SELECT id FROM tickets WHERE user_id IN (SELECT id FROM users WHERE organisation_id = ?) AND merged_into_id IS NULL AND deleted_at IS NULL
         ${status ? 'AND status_id = ?' : ''} ORDER BY ${order}`,
      [org.id, ...(status ? [status] : [])],
    )).map((r) => Number(r.id));
    // The ranges a page merges, by filter and order: the organisation's own (migration 086), or each customer's.
    const INDEXES: Record<string, Record<string, string>> = {
      organisation: { id: 'tickets_organisation_id', updated_at: 'tickets_organisation_updated', subject: 'tickets_organisation_subject' },
      // The customer order (user_id, then id): each customer's id order.
      user: { id: 'tickets_filter_user_id', updated_at: 'tickets_user_updated', subject: 'tickets_user_subject', user_id: 'tickets_filter_user_id' },
    };
    const ranges = (by: string, column: string, sql: string) => (sql.match(new RegExp(`FORCE INDEX \\(${INDEXES[by][column]}\\)`, 'g')) ?? []).length;
    for (const [status, filter] of [undefined, ctx.statuses[0]].flatMap((st) => [{ organisation: org.id }, { user: members.map((m) => m.id).join(',') }].map((fl) => [st, fl] as const))) {
      const by = 'organisation' in filter ? 'organisation' : 'user';
      const keys = by === 'organisation' ? 1 : members.length;
      // Merged: one statement reads each key's range of the order's index (UNION ALL of them), then the page of them.
      const mergedPage = (column: string, sql: string[]) => sql.some((st) => /SELECT u\.id FROM \(/.test(st) && ranges(by, column, st) === keys);
      for (const [column, dir] of Object.keys(INDEXES[by]).flatMap((c) => [[c, 'asc'], [c, 'desc']])) {
        const order = column === 'id' ? `id ${dir}` : `${column} ${dir}, id ${dir}`;
        const want = await plain(status, order);
        const q = { ...filter, order_column: column, order_direction: dir, ...(status ? { status } : {}) };
        // Every page of two (from the far end past the middle): read by merging when the ranges up
        // to the page (keys × its reach) hold fewer entries than the tickets.
        for (let start = 1; start <= want.length; start++) {
          const { statements, result } = await capture(() => api.get(BASE, { ...q, start, limit: 2 }));
          const reach = want.length - (start - 1) < start - 1 + 2 ? want.length - (start - 1) : start - 1 + 2;
          expect({ q, start, ids: ids(expectList(result)), count: result.body.count, merged: mergedPage(column, statements.map((st) => st.sql)) })
            .toEqual({ q, start, ids: want.slice(start - 1, start + 1), count: want.length, merged: keys * reach < want.length });
        }
        // After an id: the ranges past it (the first page's reach).
        await expectAfterPages(api, BASE, q, want, order, (sql) => mergedPage(column, sql) === keys * 2 < want.length);
        // In an order no index of the ranges holds, or in the trash: the optimiser's page, exact.
        for (const other of [{ order_column: 'created_at' }, { trashed: 1 }]) {
          const { statements, result } = await capture(() => api.get(BASE, { ...q, ...other, limit: 100 }));
          expect({ other, merged: Object.keys(INDEXES[by]).some((c) => mergedPage(c, statements.map((st) => st.sql))), count: result.body.count })
            .toEqual({ other, merged: false, count: 'trashed' in other ? 1 : want.length });
        }
      }
    }
    expect((await plain(undefined, 'id')).length).toBe(10);
  });

  it("counts and pages a customer's tickets by their address, primary or additional, as by their id; an address two people hold merges both", async () => {
    const customer = await f.user();
    const extra = `${unique('extra')}@example.com`;
    await UserEmail.create({ user_id: customer.id, email: extra });
    const made = [];
    for (let i = 0; i < 8; i++) made.push(await f.ticket({ user: customer.id, status: ctx.statuses[i % 2] }));
    for (const [i, t] of made.entries()) {
      await sequelize().query('UPDATE tickets SET updated_at = ?, subject = ? WHERE id = ?', { replacements: [1_700_000_000 + ((i * 3) % 5) * 60, `Tied ${i % 3}`, t.id] });
    }
    expect((await api.del(`${BASE}/${made[2].id}`)).status).toBe(200);
    expectSuccess(await api.post(`${BASE}/${made[3].id}/merge`, { ids: [made[4].id] }), 'Successfully updated the ticket!');
    const INDEXES: Record<string, string> = { id: 'tickets_filter_user_id', updated_at: 'tickets_user_updated', subject: 'tickets_user_subject', user_id: 'tickets_filter_user_id' };
    // The address as given (any case): the customer's tickets, counted from their counters.
    for (const address of [customer.email, extra.toUpperCase()]) {
      for (const trashed of [false, true]) {
        for (const status of [undefined, ctx.statuses[0]]) {
          for (const [order_column, order_direction, order] of [...ORDERS, ['created_at', 'desc', 'created_at DESC, id DESC'] as [string, string, string]]) {
            const q = { user_email: address, limit: 100, order_column, order_direction, ...(status ? { status } : {}), ...(trashed ? { trashed: 1 } : {}) };
            const { statements, result } = await capture(() => api.get(BASE, q));
            const want = await actual(customer.id, trashed, status, order);
            expect({ q, count: result.body.count, ids: ids(expectList(result)) }).toEqual({ q, count: want.length, ids: want });
            // The counters and the page, no COUNT: the list's two statements.
            const own = statements.filter((st) => /FROM ticket_user_counts|FROM `tickets`|COUNT\(/.test(st.sql));
            expect({ q, counters: own.some((st) => /FROM ticket_user_counts/.test(st.sql)), counts: own.filter((st) => /COUNT\(/.test(st.sql)).length, own: own.length })
              .toEqual({ q, counters: true, counts: 0, own: 2 });
            // Listed, in an order of the customer's indexes: a range of it, no sort; in another,
            // a walk of that order's index or the customer's tickets sorted (walkedOrSorted).
            const index = trashed ? undefined : INDEXES[order_column];
            const page = statements.find((st) => /^(SET STATEMENT .* FOR )?SELECT STRAIGHT_JOIN t\.\* FROM \(SELECT/.test(st.sql))!;
            expect({ q, hinted: page.sql.includes('FORCE INDEX') }).toEqual({ q, hinted: !trashed });
            if (index) {
              const plan = await sequelize().query<Record<string, any>>(`EXPLAIN ${page.sql}`, { replacements: page.params, type: QueryTypes.SELECT });
              const inner = plan.find((r) => r.select_type === 'DERIVED' && r.table === 'Ticket')!;
              expect({ q, key: inner.key, sorted: /filesort/.test(String(inner.Extra)) }).toEqual({ q, key: index, sorted: false });
            }
            for (const start of [Math.floor(want.length / 2) + 1, want.length].filter((x) => x >= 1)) {
              const deep = await api.get(BASE, { ...q, start, limit: 2 });
              expect({ q, start, ids: ids(expectList(deep)) }).toEqual({ q, start, ids: want.slice(start - 1, start + 1) });
            }
            // After an id (listed): still a range of the order's customer index where there is one.
            if (!trashed) await expectAfterPages(api, BASE, q, want, order, (sql) => !index || sql.some((st) => st.includes(`FORCE INDEX (${index})`)));
          }
        }
      }
    }
    // An address nobody holds: nothing, counted as nothing.
    const none = await api.get(BASE, { user_email: `${unique('nobody')}@example.com` });
    expect({ ids: ids(expectList(none)), count: none.body.count }).toEqual({ ids: [], count: 0 });
    // The same address held by a customer of another brand: both people's tickets.
    const brand = await Brand.create({ name: unique('Twin brand') });
    const twin = await User.create({ type: 'user', brand_id: brand.id, email: customer.email, firstname: 'Twin', lastname: 'User' });
    // (Their brand has no department: the ticket written as the customer's first one, theirs.)
    await sequelize().query(`INSERT INTO tickets (number, department_id, brand_id, channel_id, user_id, status_id, priority_id, subject, last_reply_by,
        locked, merged, internal, token, created_at, updated_at)
      SELECT CONCAT(number, '-twin'), department_id, ?, channel_id, ?, status_id, priority_id, subject, last_reply_by, 0, 0, 0, SHA1(RAND()), created_at, updated_at
      FROM tickets WHERE id = ?`, { replacements: [brand.id, twin.id, made[0].id] });
    const theirs = (await Ticket.findOne({ where: { user_id: twin.id } }))!;
    expect(await query('SELECT user_id FROM person_emails WHERE email = ? ORDER BY user_id', [customer.email])).toHaveLength(2);
    for (const [order_column, order_direction, order] of ORDERS) {
      const want = (await query<{ id: number }>(
        `SELECT id FROM tickets WHERE user_id IN (?) AND deleted_at IS NULL AND merged_into_id IS NULL ORDER BY ${order}`, [[customer.id, twin.id]],
      )).map((r) => Number(r.id));
      expect(want).toContain(theirs.id);
      const res = await api.get(BASE, { user_email: customer.email, order_column, order_direction, limit: 100 });
      expect({ order, ids: ids(expectList(res)), count: res.body.count }).toEqual({ order, ids: want, count: want.length });
      const page = await api.get(BASE, { user_email: customer.email, order_column, order_direction, start: 2, limit: 2 });
      expect({ order, ids: ids(expectList(page)) }).toEqual({ order, ids: want.slice(1, 3) });
    }
  });

  it('migrations 092 and 035 go down (table and triggers gone) and up again (counts filled from the tickets, then kept)', async () => {
    const qi = sequelize().getQueryInterface();
    const own = async () => (await query<{ t: string }>("SELECT TRIGGER_NAME AS t FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME LIKE 'tickets\\_user\\_counts\\_%'")).length;
    const customer = await f.user();
    await f.ticket({ user: customer.id, status: ctx.statuses[0] });
    await m092.down(qi);
    await m035.down(qi);
    expect(await own()).toBe(0);
    expect(await query("SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'ticket_user_counts'")).toEqual([]);
    // Created while the counters are gone: counted by the fill.
    const t = await f.ticket({ user: customer.id, status: ctx.statuses[1] });
    await m035.up(qi);
    await m092.up(qi);
    expect(await own()).toBe(3);
    expect(await expectFilled()).toBeGreaterThan(0);
    expect((await api.get(BASE, { user: customer.id })).body.count).toBe(2);
    expectSuccess(await api.put(`${BASE}/${t.id}`, { status: ctx.statuses[0] }), 'Successfully updated the ticket!');
    expect((await api.get(BASE, { user: customer.id, status: ctx.statuses[0] })).body.count).toBe(2);
    await expectFilled();
  });
});
