/**
 * The ticket list at scale (migration 018, src/ticket/tickets/listPage.ts): counts kept by
 * triggers stay exact through every write path, keyset paging with `after_id`, a fixed number of
 * statements whatever the filter, sort or page, and page plans that walk an index (EXPLAIN).
 */
import { QueryTypes, literal } from 'sequelize';
import { capture } from '../../bench/capture';
import { Brand, Channel, Department, DepartmentBrand, DepartmentEmail, OperatorDepartment, Organisation, Ticket, TicketAssignee, TicketPriority, TicketTag } from '../../src/db/models';
import { countQueries, sequelize } from '../../src/db/sequelize';
import { sortIndex } from '../../src/ticket/tickets/listPage';
import { searchEngine } from '../../src/ticket/tickets/search/engine';
import { newEmail, nowSec, unique, useApi } from '../helpers/app';
import { expectError, expectList, expectSuccess } from '../helpers/envelope';
import { countWarm, listQueries } from '../helpers/queries';
import { ids, ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
const BASE = '/api/ticket/ticket';
let ctx: TicketContext;
const f = ticketFactories(api, () => ctx);
let brand: Brand;
let dept: Department;
let subDept: Department;
let channelId: number;
let priorities: number[];

const SORTABLE = [
  'id', 'number', 'subject', 'department_id', 'brand_id', 'channel_id', 'user_id', 'status_id', 'priority_id', 'due_time', 'resolved_time',
  'last_reply_time', 'created_at', 'updated_at', 'deleted_at',
];

/** A ticket of `brandId` by a new user of that brand (unless `user` is given). */
async function ticketOf(brandId: number, extra: Record<string, unknown>) {
  return f.ticket({ brand: brandId, user: extra.user ?? (await f.user({ brand_id: brandId })).id, ...extra });
}

async function department(parentId: number | null = null) {
  const d = await Department.create({ name: unique('PlanDept'), parent_id: parentId });
  await DepartmentBrand.create({ department_id: d.id, brand_id: brand.id });
  await DepartmentEmail.create({ department_id: d.id, brand_id: brand.id, address: newEmail('pd') });
  return d;
}

/** A brand of the test's own and a department of it (with an address of the brand): a list narrowed by the brand is the test's tickets. */
async function ownBrand(label: string): Promise<{ own: Brand; d: Department }> {
  const own = await Brand.create({ name: unique(`${label}Brand`) });
  const d = await Department.create({ name: unique(`${label}Dept`) });
  await DepartmentBrand.create({ department_id: d.id, brand_id: own.id });
  await DepartmentEmail.create({ department_id: d.id, brand_id: own.id, address: newEmail(label.toLowerCase().slice(0, 8)) });
  return { own, d };
}

beforeAll(async () => {
  ctx = await ticketContext();
  brand = await Brand.create({ name: unique('PlanBrand') });
  dept = await department();
  subDept = await department(dept.id);
  channelId = (await Channel.findOne({ order: [['id', 'ASC']] }))!.id;
  // Priorities offered in every department (other files of this database add some limited to their own).
  priorities = (await TicketPriority.findAll({ where: literal('id NOT IN (SELECT priority_id FROM priority_departments)'), order: [['id', 'ASC']] })).map((p) => p.id);
});

/** The tickets a list of this file's brand holds, counted the plain way. */
async function actual(where: string, replacements: unknown[] = []): Promise<number> {
  const [row] = await sequelize().query<{ n: number }>(
    `SELECT COUNT(*) AS n FROM tickets WHERE merged_into_id IS NULL AND brand_id = ? AND ${where}`,
    { replacements: [brand.id, ...replacements], type: QueryTypes.SELECT },
  );
  return Number(row!.n);
}

const countOf = async (query: Record<string, unknown>) => {
  const res = await api.get(BASE, { brand: brand.id, limit: 1, ...query });
  expectList(res);
  return res.body.count as number;
};

describe('count from the counters', () => {
  it('stays exact for each counted filter, alone and two together, through creates, updates, trash, merges and deletes', async () => {
    const [s1, s2] = [ctx.statuses[0], ctx.statuses[1]];
    const [p1, p2] = [priorities[0], priorities[priorities.length - 1]];
    const make = (extra: Record<string, unknown>) => ticketOf(brand.id, { department: dept.id, ...extra });
    const a = await make({ status: s1, priority: p1 });
    const b = await make({ status: s2, priority: p1 });
    const c = await make({ status: s1, priority: p2, department: subDept.id });
    const d = await make({ status: s2, priority: p2, internal: 1, user: (await f.operator()).id });
    const check = async () => {
      const cases: Array<[Record<string, unknown>, string, unknown[]]> = [
        [{}, 'deleted_at IS NULL', []],
        [{ status: s1 }, 'deleted_at IS NULL AND status_id = ?', [s1]],
        [{ status: `${s1},${s2}` }, 'deleted_at IS NULL AND status_id IN (?, ?)', [s1, s2]],
        [{ priority: p2 }, 'deleted_at IS NULL AND priority_id = ?', [p2]],
        [{ department: dept.id }, 'deleted_at IS NULL AND department_id IN (?, ?)', [dept.id, subDept.id]],
        [{ department: subDept.id }, 'deleted_at IS NULL AND department_id = ?', [subDept.id]],
        [{ channel: channelId }, 'deleted_at IS NULL AND channel_id = ?', [channelId]],
        [{ internal: 1 }, 'deleted_at IS NULL AND internal = 1', []],
        [{ locked: 1 }, 'deleted_at IS NULL AND locked = 1', []],
        [{ status: s1, priority: p1 }, 'deleted_at IS NULL AND status_id = ? AND priority_id = ?', [s1, p1]],
        [{ status: s2, department: dept.id }, 'deleted_at IS NULL AND status_id = ? AND department_id IN (?, ?)', [s2, dept.id, subDept.id]],
        [{ trashed: 1 }, 'deleted_at IS NOT NULL', []],
        [{ trashed: 1, status: s1 }, 'deleted_at IS NOT NULL AND status_id = ?', [s1]],
      ];
      for (const [query, where, values] of cases) {
        const { result, queries } = await countQueries(() => countOf(query));
        expect({ query, count: result }).toEqual({ query, count: await actual(where, values) });
        expect(queries.some((q) => /count\(/i.test(q) && /FROM `tickets`/.test(q))).toBe(false);
      }
    };
    await check();
    expectSuccess(await api.put(`${BASE}/${a.id}`, { status: s2, priority: p2 }), 'Successfully updated the ticket!');
    expectSuccess(await api.put(`${BASE}/${b.id}`, { department: subDept.id, locked: 1 }), 'Successfully updated the ticket!');
    await check();
    expect((await api.del(`${BASE}/${c.id}`)).status).toBe(200);
    await check();
    await Ticket.update({ deleted_at: null }, { where: { id: c.id } }); // out of the trash, by hand
    await sequelize().query('UPDATE tickets SET status_id = ?, internal = 1 WHERE id = ?', { replacements: [s1, b.id] });
    await check();
    // Into b, internal now as d is (an internal ticket merges only with one).
    expectSuccess(await api.post(`${BASE}/${b.id}/merge`, { ids: [d.id] }), 'Successfully updated the ticket!');
    await check();
    await sequelize().query('DELETE FROM tickets WHERE id = ?', { replacements: [c.id] });
    await check();
  });

  it('counts other filters exactly (by their index)', async () => {
    const t = await ticketOf(brand.id, { department: dept.id });
    expect(await countOf({ user: t.user_id })).toBe(1);
    expect(await countOf({ user: t.user_id, status: t.status_id })).toBe(1);
    expect(await countOf({ number: t.number })).toBe(1);
  });
});

describe('assigned=-1 (unassigned): counted by the counters (migration 025)', () => {
  /** The truth: unassigned by the assignee rows themselves, not by the flag. */
  const NONE = 'NOT EXISTS (SELECT 1 FROM ticket_assignees a WHERE a.ticket_id = tickets.id)';

  it('stays exact through assigning, unassigning, replacing, an operator\'s delete, merges, trash and raw SQL, and never COUNTs tickets', async () => {
    const { own, d } = await ownBrand('Unassigned');
    const [op1, op2, op3] = [await f.operator(), await f.operator(), await f.operator()];
    const s1 = ctx.statuses[0];
    const make = (extra: Record<string, unknown> = {}) => ticketOf(own.id, { department: d.id, status: s1, ...extra });
    const a = await make({ assignedto: [op1.id] });
    const b = await make();
    const c = await make({ assignedto: [op1.id, op2.id] });
    const e = await make({ status: ctx.statuses[1] });
    const g = await make({ assignedto: [op3.id] });
    const truth = async (where: string, values: unknown[] = []) => {
      const [row] = await sequelize().query<{ n: number }>(
        `SELECT COUNT(*) AS n FROM tickets WHERE merged_into_id IS NULL AND brand_id = ? AND ${NONE} AND ${where}`,
        { replacements: [own.id, ...values], type: QueryTypes.SELECT },
      );
      return Number(row!.n);
    };
    const check = async (step: string) => {
      const cases: Array<[Record<string, unknown>, string, unknown[]]> = [
        [{}, 'deleted_at IS NULL', []],
        [{ status: s1 }, 'deleted_at IS NULL AND status_id = ?', [s1]],
        [{ department: d.id, internal: 0 }, 'deleted_at IS NULL AND department_id = ? AND internal = 0', [d.id]],
        [{ trashed: 1 }, 'deleted_at IS NOT NULL', []],
      ];
      for (const [query, where, values] of cases) {
        const { result, queries } = await countQueries(async () => {
          const res = await api.get(BASE, { brand: own.id, assigned: -1, limit: 100, ...query });
          return { count: res.body.count as number, ids: ids(expectList(res)) };
        });
        const expected = await truth(where, values);
        expect({ step, query, count: result.count, listed: result.ids.length }).toEqual({ step, query, count: expected, listed: expected });
        // The counters, never a COUNT over tickets nor a probe of the assignees per ticket.
        expect({ step, query, counted: queries.filter((q) => /count\(/i.test(q) && /FROM `tickets`/.test(q)) }).toEqual({ step, query, counted: [] });
        expect({ step, query, probes: queries.filter((q) => /FROM `tickets`/.test(q) && /ticket_assignees/.test(q)) }).toEqual({ step, query, probes: [] });
      }
      // The flag of every ticket of the brand agrees with its assignee rows.
      const wrong = await sequelize().query(`SELECT id, assigned FROM tickets WHERE brand_id = ? AND assigned = (${NONE})`, { replacements: [own.id], type: QueryTypes.SELECT });
      expect({ step, wrong }).toEqual({ step, wrong: [] });
    };
    await check('created');
    expectSuccess(await api.put(`${BASE}/${b.id}`, { assignedto: [op2.id] }), 'Successfully updated the ticket!');
    await check('assigned through the API');
    expectSuccess(await api.put(`${BASE}/${a.id}`, { assignedto: '' }), 'Successfully updated the ticket!');
    await check('unassigned through the API');
    expectSuccess(await api.put(`${BASE}/${c.id}`, { assignedto: [op3.id] }), 'Successfully updated the ticket!');
    await check('assignees replaced');
    // op2 was b's only assignee (and one of c's before): its delete leaves b unassigned.
    expect((await api.del(`/api/user/operator/${op2.id}`)).status).toBe(200);
    expect(await TicketAssignee.count({ where: { user_id: op2.id } })).toBe(0);
    await check('an assignee deleted');
    // An assigned source merged into an unassigned target: the target is assigned (its rows joined).
    expectSuccess(await api.post(`${BASE}/${e.id}/merge`, { ids: [g.id] }), 'Successfully updated the ticket!');
    await check('merged');
    expect((await api.del(`${BASE}/${b.id}`)).status).toBe(200);
    expect((await api.del(`${BASE}/${e.id}`)).status).toBe(200);
    await check('trashed');
    await Ticket.update({ deleted_at: null }, { where: { id: b.id } }); // out of the trash, by hand
    await check('restored');
    await sequelize().query('INSERT INTO ticket_assignees (ticket_id, user_id) VALUES (?, ?)', { replacements: [b.id, op1.id] });
    await check('raw INSERT');
    await sequelize().query('DELETE FROM ticket_assignees WHERE ticket_id = ?', { replacements: [c.id] });
    await check('raw DELETE');
    await sequelize().query('UPDATE ticket_assignees SET ticket_id = ? WHERE ticket_id = ?', { replacements: [c.id, b.id] });
    await check('raw UPDATE of ticket_id');
    // The operator's tickets go with them; a ticket's delete takes its assignee rows.
    await sequelize().query('DELETE FROM tickets WHERE id = ?', { replacements: [c.id] });
    await check('raw DELETE of a ticket');
  });

  it('pages the unassigned tickets exactly as the full list, by the order\'s index (no sort but of the page)', async () => {
    const { own, d } = await ownBrand('UnassignedPages');
    const op = await f.operator();
    for (let i = 0; i < 9; i++) await ticketOf(own.id, { department: d.id, ...(i % 3 === 1 ? { assignedto: [op.id] } : {}) });
    for (const order of [{ order_column: 'id' }, { order_column: 'updated_at' }, { order_column: 'due_time' }, { order_column: 'subject' }]) {
      for (const order_direction of ['asc', 'desc']) {
        const query = { brand: own.id, ...order, order_direction };
        const all = ids(expectList(await api.get(BASE, { ...query, limit: 100 })));
        const assigned = new Set((await TicketAssignee.findAll({ where: { ticket_id: all } })).map((r) => r.ticket_id));
        const none = all.filter((id) => !assigned.has(id));
        expect(none).toHaveLength(6);
        for (const start of [1, 2, 4, 5, 6]) {
          const res = await api.get(BASE, { ...query, assigned: -1, start, limit: 2 });
          expect({ query, start, ids: ids(expectList(res)), count: res.body.count }).toEqual({ query, start, ids: none.slice(start - 1, start + 1), count: 6 });
        }
      }
    }
  });

  it('EXPLAIN: the page walks the order\'s index and tests the flag on its entries', async () => {
    await ticketOf(brand.id, { department: dept.id });
    for (const column of ['id', 'created_at', 'updated_at', 'last_reply_time', 'due_time']) {
      for (const direction of ['asc', 'desc']) {
        const { statements } = await capture(() => api.get(BASE, { assigned: -1, order_column: column, order_direction: direction, limit: 5 }));
        const page = statements.find((st) => st.sql.startsWith('SELECT STRAIGHT_JOIN t.* FROM (SELECT'))!;
        expect(page.sql).not.toMatch(/ticket_assignees/);
        const rows = await sequelize().query<Record<string, any>>(`EXPLAIN ${page.sql}`, { replacements: page.params, type: QueryTypes.SELECT });
        const inner = rows.find((r) => r.select_type === 'DERIVED')!;
        const outer = rows.find((r) => r.select_type === 'PRIMARY' && String(r.table).startsWith('<derived'))!;
        const context = { column, direction, rows };
        expect({ ...context, key: inner.key, extra: inner.Extra }).toEqual({ ...context, key: sortIndex(column), extra: expect.stringMatching(/Using index/) });
        expect({ ...context, extra: inner.Extra }).not.toEqual({ ...context, extra: expect.stringMatching(/filesort/) });
        expect(rows.filter((r) => r.type === 'ALL' && !String(r.table).startsWith('<derived'))).toEqual([]);
        expect(Number(outer.rows)).toBeLessThanOrEqual(5 + 2);
        expect(rows.filter((r) => String(r.select_type).includes('SUBQUERY'))).toEqual([]);
      }
    }
  });

  it('the search\'s assigned:none tests the same column (no probe of the assignees)', async () => {
    const { own, d } = await ownBrand('UnassignedSearch');
    const op = await f.operator();
    const word = `zu${Math.random().toString(36).slice(2, 10)}`;
    const free = await ticketOf(own.id, { department: d.id, subject: `Free ${word}` });
    await ticketOf(own.id, { department: d.id, subject: `Taken ${word}`, assignedto: [op.id] });
    const { result, queries } = await countQueries(() => api.get(BASE, { brand: own.id, search: `${word} assigned:none` }));
    expect({ ids: ids(expectList(result)), count: result.body.count }).toEqual({ ids: [free.id], count: 1 });
    expect(queries.filter((q) => /ticket_assignees/.test(q) && /FROM `tickets`/.test(q))).toEqual([]);
  });
});

describe('after_id (keyset paging)', () => {
  it('walks the whole list in every order, each page after the last ticket of the one before', async () => {
    const { own: kb, d: kd } = await ownBrand('Keyset');
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await ticketOf(kb.id, { department: kd.id, subject: `Same subject ${i % 2}`, status: ctx.statuses[i % 2] }));
    // Nullable sort values, some equal: due_time on two tickets only.
    await Ticket.update({ due_time: nowSec() + 100 }, { where: { id: [made[1].id, made[3].id] } });
    for (const column of ['id', 'subject', 'due_time', 'status_id']) {
      for (const direction of ['asc', 'desc']) {
        const all = ids(expectList(await api.get(BASE, { brand: kb.id, order_column: column, order_direction: direction, limit: 100 })));
        expect(all).toHaveLength(5);
        const walked: number[] = [];
        let after: number | undefined;
        for (let i = 0; i < 5; i++) {
          const res = await api.get(BASE, { brand: kb.id, order_column: column, order_direction: direction, limit: 2, ...(after ? { after_id: after } : {}) });
          const page = ids(expectList(res));
          expect(res.body.count).toBe(5); // the count is the whole list's
          if (!page.length) break;
          walked.push(...page);
          after = page[page.length - 1];
        }
        expect({ column, direction, walked }).toEqual({ column, direction, walked: all });
      }
    }
  });

  it('refuses a ticket that does not exist', async () => {
    expectError(await api.get(BASE, { after_id: 2_000_000_000 }), 422, 'The selected after id is invalid.');
    expectError(await api.get(BASE, { after_id: 'x' }), 422, /after id/);
  });
});

describe('deep start (past the middle: read from the far end)', () => {
  it('gives every page, the last ones included, exactly as the whole list in every order both ways', async () => {
    const { own, d } = await ownBrand('Deep');
    const made = [];
    for (let i = 0; i < 11; i++) made.push(await ticketOf(own.id, { department: d.id, status: ctx.statuses[i % 2], ...(i % 3 ? { due_time: 2_000_000_000 + (i % 4) } : {}) }));
    // Equal values and NULLs (due_time), a sort of the whole brand, a counted filter.
    for (const order of [{ order_column: 'id' }, { order_column: 'due_time' }, { order_column: 'status_id' }, { order_column: 'updated_at' }]) {
      for (const order_direction of ['asc', 'desc']) {
        const query = { brand: own.id, ...order, order_direction };
        const all = ids(expectList(await api.get(BASE, { ...query, limit: 100 })));
        expect(all).toHaveLength(11);
        for (const start of [1, 5, 6, 7, 9, 10, 11, 12]) {
          const res = await api.get(BASE, { ...query, start, limit: 3 });
          expect({ query, start, ids: ids(expectList(res)), count: res.body.count }).toEqual({ query, start, ids: all.slice(start - 1, start + 2), count: 11 });
        }
      }
    }
  });

  it('reads the index backwards past the middle (the order reversed in the inner statement)', async () => {
    const { statements } = await capture(() => api.get(BASE, { brand: brand.id, order_column: 'updated_at', order_direction: 'desc', start: 1_000_000, limit: 5 }));
    const page = statements.find((st) => st.sql.startsWith('SELECT STRAIGHT_JOIN t.* FROM (SELECT'))!;
    expect(page.sql).toMatch(/ORDER BY `Ticket`.`updated_at` ASC, `Ticket`.`id` ASC LIMIT/);
    // (A walk of the order's index is bounded: boundedWalks.)
    expect(page.sql).toMatch(/ORDER BY t.`updated_at` DESC, t.`id` DESC( LIMIT :pageLimit ROWS EXAMINED :pageExamined)?$/);
  });
});

describe('statements per list request', () => {
  it('are the same number for every filter, pair of filters, sort and page', async () => {
    // A brand of its own: every page below holds tickets alike in what they embed.
    const brand = await Brand.create({ name: unique('StatementBrand') });
    const dept = await Department.create({ name: unique('StatementDept') });
    await DepartmentBrand.create({ department_id: dept.id, brand_id: brand.id });
    await DepartmentEmail.create({ department_id: dept.id, brand_id: brand.id, address: newEmail('sd') });
    const org = await Organisation.create({ name: unique('PlanOrg'), brand_id: brand.id });
    const tag = await TicketTag.create({ name: unique('plan-tag') });
    const op = await f.operator();
    const user = await f.user({ brand_id: brand.id, organisation_id: org.id });
    const word = `zq${Math.random().toString(36).slice(2, 10)}`;
    // Tickets alike in what they embed (a tag, an assignee, a watcher), so pages differ only in rows.
    const made = [];
    for (let i = 0; i < 3; i++) {
      made.push(await ticketOf(brand.id, {
        department: dept.id, user: user.id, subject: `Plan ${word} ${i}`, tag: [tag.id], assignedto: [op.id], watching: [op.id],
      }));
    }
    // One without an assignee (its watcher embeds the same operator), for `assigned=-1`.
    const free = await ticketOf(brand.id, { department: dept.id, user: user.id, subject: `Plan ${word} free`, tag: [tag.id], watching: [op.id] });
    const t = made[0];
    const filters: Array<Record<string, unknown>> = [
      {}, { department: dept.id }, { status: t.status_id }, { priority: t.priority_id }, { channel: t.channel_id }, { internal: 0 }, { locked: 0 },
      { tag: tag.id }, { user: user.id }, { organisation: org.id }, { watching: op.id }, { assigned: op.id }, { assigned: -1 }, { user_email: user.email },
      { number: t.number }, { search: word }, { created_at_min: t.created_at - 10 }, { updated_at_max: nowSec() + 10 },
      { status: t.status_id, priority: t.priority_id }, { user: user.id, status: t.status_id }, { tag: tag.id, department: dept.id },
      { assigned: -1, status: free.status_id }, { after_id: made[1].id },
    ];
    const seen = new Map<string, number>();
    const measure = async (filter: Record<string, unknown>, column: string, direction: string, start: number) => {
      const query = { brand: brand.id, ...filter, order_column: column, order_direction: direction, start, limit: 1 };
      // Warm: every cache freshly loaded by the same request just before (helpers/queries.ts).
      const { result, queries } = await countWarm(() => api.get(BASE, query));
      const page = expectList(result);
      if (!filter.after_id && start === 1) expect({ query, rows: page.length }).toEqual({ query, rows: 1 });
      if (!page.length) return;
      // after_id reads the ticket it names: one statement more, whatever the rest. With
      // SEARCH_ENGINE=mroonga a search in id order is one statement: its Groonga selects (the count
      // and the page's ids) and the page's rows by id.
      const listed = filter.search !== undefined && column === 'id' && searchEngine().name === 'mroonga';
      const shape = filter.after_id ? 'after_id' : listed ? 'search' : 'filters';
      const list = listQueries(queries);
      const plan = list.filter((q) => /FROM ticket_list_counts|FROM ticket_day_counts|FROM ticket_tag_counts|FROM ticket_(organisation|user)_counts|FROM ticket_tag_list|FROM `tickets`|FROM tickets WHERE id =|mroonga_command\(/.test(q));
      // The count and the page (and the ticket after_id names), whatever else.
      expect({ query, plan: plan.length }).toEqual({ query, plan: filter.after_id ? 3 : listed ? 1 : 2 });
      if (!seen.has(shape)) seen.set(shape, list.length);
      // On a difference, the statements show in the failure.
      const shown = list.length === seen.get(shape) ? [] : list;
      expect({ query, statements: list.length, shown }).toEqual({ query, statements: seen.get(shape), shown: [] });
    };
    // Every filter (and pairs) on two orders and two pages; every order both ways on three shapes.
    for (const filter of filters) {
      for (const [column, direction] of [['id', 'asc'], ['updated_at', 'desc']]) for (const start of [1, 2]) await measure(filter, column, direction, start);
    }
    for (const filter of [{}, { status: t.status_id, priority: t.priority_id }, { user: user.id }]) {
      for (const column of SORTABLE) for (const direction of ['asc', 'desc']) await measure(filter, column, direction, 2);
    }
    expect(seen.get('after_id')).toBe(seen.get('filters')! + 1);
    if (seen.has('search')) expect(seen.get('search')).toBe(seen.get('filters')! - 1);
  });
});

describe('page plans (EXPLAIN)', () => {
  /**
   * The page statement of a list request and its EXPLAIN. Pages of 5: the walk is taken when it
   * reads fewer entries than the matches, which a test database's few tickets decide at 5, not 50.
   */
  async function pageOf(query: Record<string, unknown>) {
    const { statements } = await capture(() => api.get(BASE, { limit: 5, ...query }));
    const page = statements.find((s) => s.sql.startsWith('SELECT STRAIGHT_JOIN t.* FROM (SELECT'));
    expect(page).toBeDefined();
    const explained = await sequelize().query<Record<string, any>>(`EXPLAIN ${page!.sql}`, { replacements: page!.params, type: QueryTypes.SELECT });
    return { sql: page!.sql, rows: explained };
  }
  const plan = async (query: Record<string, unknown>) => (await pageOf(query)).rows;

  it('walks the sort column\'s index (no full scan, no sort but of the page) for every order, unfiltered and with a broad filter', async () => {
    await ticketOf(brand.id, { department: dept.id });
    for (const column of SORTABLE) {
      for (const direction of ['asc', 'desc']) {
        for (const filter of [{}, { internal: 0 }, { start: 3 }]) {
          const rows = await plan({ order_column: column, order_direction: direction, ...filter });
          const inner = rows.find((r) => r.select_type === 'DERIVED')!;
          const outer = rows.find((r) => r.select_type === 'PRIMARY' && String(r.table).startsWith('<derived'))!;
          const context = { column, direction, filter, rows };
          expect({ ...context, key: inner.key }).toEqual({ ...context, key: sortIndex(column) });
          expect({ ...context, extra: inner.Extra }).not.toEqual({ ...context, extra: expect.stringMatching(/filesort/) });
          expect(rows.filter((r) => r.type === 'ALL' && !String(r.table).startsWith('<derived'))).toEqual([]);
          // The outer sort is of the page's rows only.
          expect(Number(outer.rows)).toBeLessThanOrEqual(5 + 2);
        }
      }
    }
  });

  it("reads a small department's tickets (and its sub-departments') by the department's index, in every order", async () => {
    const small = await department();
    const below = await department(small.id);
    const made = [(await ticketOf(brand.id, { department: small.id })).id, (await ticketOf(brand.id, { department: below.id })).id];
    // Many tickets elsewhere, newer than the department's: a walk of the list's order reads them all first.
    for (let i = 0; i < 30; i++) await ticketOf(brand.id, { department: dept.id });
    for (const filter of [{}, { order_column: 'updated_at', order_direction: 'desc' }, { status: ctx.statuses.join(',') }, { start: 2 }]) {
      const { sql, rows } = await pageOf({ department: small.id, ...filter });
      const inner = rows.find((r) => r.select_type === 'DERIVED')!;
      // The departments' ids in the statement, not a recursive subquery the optimiser cannot size:
      // at a million tickets it walked the primary key instead (240-360 ms for five tickets).
      expect({ filter, recursive: /WITH RECURSIVE/.test(sql) }).toEqual({ filter, recursive: false });
      expect({ filter, key: inner.key }).toEqual({ filter, key: expect.stringMatching(/^tickets_(list|filter)_department_id$/) });
      // The department's entries alone (an estimate: the optimiser's figure for the index range).
      expect({ filter, rows: inner.rows, few: Number(inner.rows) <= made.length + 2 }).toEqual({ filter, rows: inner.rows, few: true });
    }
    expect(ids(expectList(await api.get(BASE, { department: small.id })))).toEqual(made);

    // A saved filter's department condition the same way: its count reads the department's index
    // entries (at a million tickets, as a subquery, the count read every listed ticket's: 161 ms).
    // (A condition the list does not filter by beside it: a department's alone is the list's filter.)
    const filter = expectSuccess(await api.post('/api/ticket/filter', {
      name: unique('SmallDept'),
      conditions: [{ rules: [{ item: 'department', operator: 'equals', value: small.id }, { item: 'subject', operator: 'not_contains', value: 'zzz' }] }],
    }), 'Successfully created new filter!');
    const { statements, result } = await capture(() => api.get(BASE, { filter: filter.id, limit: 5 }));
    expect(ids(expectList(result))).toEqual(made);
    const count = statements.find((st) => st.sql.startsWith('SELECT COUNT(*) AS n FROM `tickets`'))!;
    expect(count.sql).not.toMatch(/WITH RECURSIVE/);
    const explained = await sequelize().query<Record<string, any>>(`EXPLAIN ${count.sql}`, { replacements: count.params, type: QueryTypes.SELECT });
    const read = explained.find((r) => r.table === 'Ticket')!;
    expect({ key: read.key, rows: Number(read.rows) <= made.length + 2 }).toEqual({ key: expect.stringMatching(/^tickets_(list|filter)_department_id$/), rows: true });
  });

  it('runs a saved filter as an operator who sees few tickets through the set of those tickets, not a test of every ticket', async () => {
    const small = await department();
    const operator = await f.operator();
    await OperatorDepartment.create({ user_id: operator.id, department_id: small.id });
    const theirs = (await ticketOf(brand.id, { department: small.id })).id;
    // Tickets the operator does not see: more than twenty times those they do (visibleSet.share).
    for (let i = 0; i < 30; i++) await ticketOf(brand.id, { department: dept.id });
    const filter = expectSuccess(await api.post('/api/ticket/filter', {
      name: unique('Mine'), conditions: [{ rules: [{ item: 'subject', operator: 'not_contains', value: 'zzz' }] }],
    }), 'Successfully created new filter!');
    const { statements, result } = await capture(() => api.get(BASE, { filter: filter.id, filter_operator: operator.id, limit: 5 }));
    expect(ids(expectList(result))).toEqual([theirs]);
    const count = statements.find((st) => st.sql.startsWith('SELECT COUNT(*) AS n FROM `tickets`'))!;
    const plan = await sequelize().query<Record<string, any>>(`EXPLAIN ${count.sql}`, { replacements: count.params, type: QueryTypes.SELECT });
    // The department's tickets through its index, each looked up by id: at a million tickets the
    // operator's condition as a test of each ticket read every ticket of the filter (550 ms).
    const read = (table: string) => plan.filter((r) => r.table === table).map((r) => ({ type: r.type, key: r.key }));
    expect(read('Ticket')).toEqual([{ type: 'eq_ref', key: 'PRIMARY' }]);
    expect(read('tickets')).toContainEqual({ type: 'ref', key: expect.stringMatching(/^tickets_(list|filter)_department_id$/) });
    expect(plan.filter((r) => r.type === 'ALL' && !/^<(subquery|derived|union)/.test(String(r.table)))).toEqual([]);
  });

  it("reads an organisation's tickets as a range of its own index (migration 086) in id and updated_at order, and several customers' as a merge of their ranges", async () => {
    const org = await Organisation.create({ name: unique('RangesOrg'), brand_id: brand.id });
    const members = [await f.user({ brand_id: brand.id, organisation_id: org.id }), await f.user({ brand_id: brand.id, organisation_id: org.id })];
    // More tickets than the ranges up to the page hold (2 × 5, of a status 2 × 2): the page takes them.
    for (let i = 0; i < 12; i++) await ticketOf(brand.id, { user: members[i % 2].id, status: ctx.statuses[i % 2], department: dept.id });
    const INDEXES: Record<string, Record<string, string>> = {
      organisation: { id: 'tickets_organisation_id', updated_at: 'tickets_organisation_updated' },
      user: { id: 'tickets_filter_user_id', updated_at: 'tickets_user_updated' },
    };
    for (const [by, keys] of [['organisation', [org.id]], ['user', members.map((m) => m.id)]] as const) {
      for (const column of ['id', 'updated_at']) {
        for (const filter of [{}, { status: ctx.statuses[0], order_direction: 'desc', limit: 2 }]) {
          const { rows } = await pageOf({ [by]: keys.join(','), order_column: column, ...filter });
          // Each key's range: its index, in the index's order (no sort of the key's tickets).
          const ranges = rows.filter((r) => r.table === 'c');
          expect({ by, column, filter, ranges: ranges.map((r) => ({ key: r.key, sorted: /filesort/.test(String(r.Extra)) })) })
            .toEqual({ by, column, filter, ranges: keys.map(() => ({ key: INDEXES[by][column], sorted: false })) });
        }
      }
    }
  });

  it("reads one customer's tickets by their own index, in id order whatever filter sits beside the user, and by updated_at", async () => {
    const user = (await f.user({ brand_id: brand.id })).id;
    for (const status of ctx.statuses.slice(0, 2)) await ticketOf(brand.id, { user, status, department: dept.id });
    for (const filter of [{}, { status: ctx.statuses[0] }, { status: ctx.statuses.join(','), internal: 0 }, { priority: priorities.join(',') }, { order_direction: 'desc' }, { start: 2 }]) {
      const { sql, rows } = await pageOf({ user, ...filter });
      const inner = rows.find((r) => r.select_type === 'DERIVED')!;
      // The hint, not the optimiser's guess: at a million tickets it walked every ticket's id instead (240 ms).
      expect({ filter, hinted: sql.includes('FORCE INDEX (tickets_filter_user_id)') }).toEqual({ filter, hinted: true });
      expect({ filter, key: inner.key, extra: inner.Extra }).toEqual({ filter, key: 'tickets_filter_user_id', extra: expect.not.stringMatching(/filesort/) });
    }
    // Beside the user, a status, a priority or a department: the count is the customer's counters
    // (migration 035, widened by 092), the page the customer's index alone (migration 032: those
    // columns follow the id in its entries).
    for (const filter of [{ status: ctx.statuses[0] }, { status: ctx.statuses.join(',') }, { priority: priorities[0] }, { status: ctx.statuses[0], priority: priorities.join(',') }, { department: dept.id }]) {
      const { statements } = await capture(() => api.get(BASE, { limit: 5, user, ...filter }));
      expect({ filter, counters: statements.filter((s) => /FROM ticket_user_counts/.test(s.sql)).length, counts: statements.filter((s) => /COUNT\(/.test(s.sql)).length })
        .toEqual({ filter, counters: 1, counts: 0 });
      const { rows } = await pageOf({ user, ...filter });
      const inner = rows.find((r) => r.select_type === 'DERIVED')!;
      expect({ filter, key: inner.key, extra: inner.Extra }).toEqual({ filter, key: 'tickets_filter_user_id', extra: expect.stringMatching(/Using index/) });
    }
    // Beside a filter no counter holds (`watching`), the count reads the same index as the page
    // (not an intersection with the filter's, every ticket of it).
    {
      const { statements } = await capture(() => api.get(BASE, { limit: 5, user, watching: user }));
      const count = statements.find((s) => s.sql.startsWith('SELECT COUNT(*) AS n FROM `tickets`'));
      expect(count?.sql).toContain('FORCE INDEX (tickets_filter_user_id)');
      const explained = await sequelize().query<Record<string, any>>(`EXPLAIN ${count!.sql}`, { replacements: count!.params, type: QueryTypes.SELECT });
      expect(explained.find((r) => r.table === 'Ticket')!.key).toBe('tickets_filter_user_id');
    }
    // Several customers of few tickets (a merge of their ranges would read more than all of
    // them): their tickets read through that index and sorted (not one range in id order).
    const several = await pageOf({ user: `${user},${user + 1}` });
    const sorted = several.rows.find((r) => r.select_type === 'DERIVED')!;
    expect({ hinted: several.sql.includes('FORCE INDEX (tickets_filter_user_id)'), key: sorted.key, extra: sorted.Extra })
      .toEqual({ hinted: true, key: 'tickets_filter_user_id', extra: expect.stringMatching(/filesort/) });
    // The trash: not in id order in that index; no hint.
    expect((await pageOf({ user, trashed: 1 })).sql).not.toContain('FORCE INDEX (tickets_filter_user_id)');
    // By `updated_at` (and a status, after an id): a range of migration 085's index, in its order;
    // at a million tickets the optimiser's page read a busy customer's tickets and sorted them.
    const latest = (await Ticket.findOne({ where: { user_id: user }, order: [['updated_at', 'DESC'], ['id', 'DESC']] }))!.id;
    for (const filter of [{}, { status: ctx.statuses[0] }, { order_direction: 'desc' }, { order_direction: 'desc', after_id: latest }, { start: 2 }]) {
      const { sql, rows } = await pageOf({ user, order_column: 'updated_at', ...filter });
      const inner = rows.find((r) => r.select_type === 'DERIVED')!;
      expect({ filter, hinted: sql.includes('FORCE INDEX (tickets_user_updated)'), key: inner.key, extra: inner.Extra })
        .toEqual({ filter, hinted: true, key: 'tickets_user_updated', extra: expect.not.stringMatching(/filesort/) });
    }
    expect((await pageOf({ user, order_column: 'updated_at', trashed: 1 })).sql).not.toContain('FORCE INDEX (tickets_user_updated)');
  });

  it('reads the page\'s ids from the index alone for the id and time orders, filters included', async () => {
    for (const column of ['id', 'created_at', 'updated_at', 'last_reply_time', 'due_time']) {
      const rows = await plan({ order_column: column, order_direction: 'desc', status: ctx.statuses.join(','), internal: 0, start: 2 });
      const inner = rows.find((r) => r.select_type === 'DERIVED')!;
      expect({ column, key: inner.key, extra: inner.Extra }).toEqual({ column, key: sortIndex(column), extra: expect.stringMatching(/Using index/) });
    }
  });
});
