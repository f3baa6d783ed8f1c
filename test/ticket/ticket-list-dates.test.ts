/**
 * The ticket list's date ranges (migrations 026-028, 054, 055, src/ticket/tickets/listPage.ts): `count` for
 * a range of created_at or updated_at, alone or with a status, one other counted filter (or a pair
 * of priority, department, brand and channel) or both, sums
 * the day counters and COUNTs only the partial first and last days, exact through every write
 * path; the page in id order walks the primary key between the range's id bounds or sorts the
 * range, by cost; the migrations go down and up.
 */
import { capture, explainOf, withoutSwitches, type Statement } from '../../bench/capture';
import * as m026 from '../../migrations/026_ticket_day_counts';
import * as m027 from '../../migrations/027_ticket_day_status_counts';
import * as m028 from '../../migrations/028_ticket_day_filter_counts';
import * as m052 from '../../migrations/052_ticket_span_counts';
import * as m053 from '../../migrations/053_ticket_span_filter_counts';
import * as m054 from '../../migrations/054_ticket_day_filter_status';
import * as m055 from '../../migrations/055_ticket_day_filter_pairs';
import * as m061 from '../../migrations/061_ticket_day_order_counts';
import * as m062 from '../../migrations/062_ticket_customer_order_counts';
import * as m063 from '../../migrations/063_ticket_order_marks';
import * as m089 from '../../migrations/089_ticket_mark_filter_counts';
import * as m093 from '../../migrations/093_ticket_order_filter_counts';
import * as m095 from '../../migrations/095_ticket_time_order_filter_deltas';
import { Channel, Ticket, TicketPriority } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { foldDayCounters } from '../../src/ticket/tickets/dayCounterFold';
import { deepPaging } from '../../src/ticket/tickets/listPage';
import { useApi } from '../helpers/app';
import { expectList, expectSuccess } from '../helpers/envelope';
import { deepPages, expectDayCounts, expectDayFilterCounts, query } from './dayCounterSupport';
import { ids, ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
const BASE = '/api/ticket/ticket';
const DAY = 86400;
let ctx: TicketContext;
const f = ticketFactories(api, () => ctx);
/** A day of its own, far in the past (no other ticket of this database is created there): its first second. */
const B = (9000 + Math.floor(Math.random() * 3000)) * DAY;

beforeAll(async () => { ctx = await ticketContext(); });

/** Every ticket of the database in the range, counted the plain way. */
async function actual(column: string, min: number | undefined, max: number | undefined, trashed = false, status?: number): Promise<number> {
  const [row] = await query<{ n: number }>(
    `SELECT COUNT(*) AS n FROM tickets WHERE merged_into_id IS NULL AND deleted_at IS ${trashed ? 'NOT ' : ''}NULL
       AND ${column} >= ? AND ${column} <= ? ${status ? 'AND status_id = ?' : ''}`,
    [min ?? 0, max ?? 4_294_967_295, ...(status ? [status] : [])],
  );
  return Number(row!.n);
}

/** The list's count statement (the one reading the day counters) of a request. */
function countStatement(statements: Statement[]): Statement {
  const found = statements.filter((s) => /FROM ticket_day_counts/.test(s.sql));
  expect(found).toHaveLength(1);
  return found[0];
}

/** Ranges around B: a day, days, partial days, one day's edges, open-ended. */
const ranges = (): Array<[number | undefined, number | undefined]> => [
  [B, B + DAY - 1], [B, B + 3 * DAY - 1], [B + 43200, B + 2 * DAY + 200], [B + 1, B + 50000], [B + 50000, B + DAY + 10],
  [B + DAY - 1, B + DAY], [B - 1, B - 1], [B + 1, undefined], [undefined, B + DAY - 1], [B - 10 * DAY, B + 10 * DAY],
];

async function checkCounts(column: 'created_at' | 'updated_at', trashed = false, status?: number) {
  for (const [min, max] of ranges()) {
    const q: Record<string, unknown> = { limit: 1, ...(trashed ? { trashed: 1 } : {}), ...(status ? { status } : {}) };
    if (min !== undefined) q[`${column}_min`] = min;
    if (max !== undefined) q[`${column}_max`] = max;
    const { statements, result } = await capture(() => api.get(BASE, q));
    const context = { column, min, max, trashed, status };
    expect({ ...context, count: expectList(result) && result.body.count }).toEqual({ ...context, count: await actual(column, min, max, trashed, status) });
    // Only the partial days are COUNTed: each COUNT's range lies within one UTC day, or the whole
    // range is shorter than two days.
    const st = countStatement(statements);
    const params = st.params as Record<string, number>;
    const parts = Object.keys(params).filter((k) => k.startsWith('partFrom')).map((k) => [params[k], params[k.replace('From', 'To')]]);
    expect((st.sql.match(/COUNT\(/g) ?? []).length).toBe(parts.length);
    for (const [a, b] of parts) {
      const oneDay = Math.floor(a / DAY) === Math.floor(b / DAY) || b - a < 2 * DAY;
      expect({ ...context, part: [a, b], oneDay }).toEqual({ ...context, part: [a, b], oneDay: true });
    }
  }
}

describe('count of a date range from the day counters', () => {
  it('stays exact for created_at and updated_at, partial days and open ends, through creates, updates, trash, merges and deletes', async () => {
    const at = [B - 1, B, B + 43200, B + DAY - 1, B + DAY, B + 2 * DAY + 100, B + 5 * DAY + 5];
    const made = [];
    for (const [i, created_at] of at.entries()) made.push(await f.ticket({ created_at, status: ctx.statuses[i % 2] }));
    // updated_at on the same days (the API sets it to now).
    for (const [i, t] of made.entries()) await sequelize().query('UPDATE tickets SET updated_at = ? WHERE id = ?', { replacements: [at[i] + 7, t.id] });
    const check = async () => {
      await checkCounts('created_at');
      await checkCounts('updated_at');
      await checkCounts('created_at', true);
      // By status (migration 027): the status's counters, through changes of status too.
      for (const status of ctx.statuses.slice(0, 2)) {
        await checkCounts('created_at', false, status);
        await checkCounts('updated_at', false, status);
      }
    };
    await check();
    // An API update moves the ticket's updated_at to today; created_at stays.
    expectSuccess(await api.put(`${BASE}/${made[1].id}`, { status: ctx.statuses[1] }), 'Successfully updated the ticket!');
    await check();
    expect((await api.del(`${BASE}/${made[2].id}`)).status).toBe(200); // the trash
    await check();
    await Ticket.update({ deleted_at: null }, { where: { id: made[2].id } }); // out of the trash, by hand
    await sequelize().query('UPDATE tickets SET created_at = ?, updated_at = ? WHERE id = ?', { replacements: [B + DAY + 5, B - DAY, made[3].id] });
    await check();
    expectSuccess(await api.post(`${BASE}/${made[0].id}/merge`, { ids: [made[4].id] }), 'Successfully updated the ticket!');
    await check();
    await sequelize().query('DELETE FROM tickets WHERE id = ?', { replacements: [made[5].id] });
    await check();
    // With a counted filter beside the dates: a COUNT of the matches, still exact.
    const res = await api.get(BASE, { limit: 1, created_at_min: B - DAY, created_at_max: B + 10 * DAY, status: ctx.statuses[1] });
    expect(expectList(res) && res.body.count).toBe(await actual('created_at', B - DAY, B + 10 * DAY, false, ctx.statuses[1]));
  });
});

describe('the page of a date range', () => {
  /** The page statement of a list request and its EXPLAIN. */
  async function pageOf(q: Record<string, unknown>) {
    const { statements, result } = await capture(() => api.get(BASE, { limit: 5, ...q }));
    const page = statements.find((s) => withoutSwitches(s.sql).startsWith('SELECT STRAIGHT_JOIN t.* FROM (SELECT'))!;
    const rows = await query<Record<string, any>>(explainOf(page.sql), page.params);
    const inner = rows.find((r) => r.select_type === 'DERIVED')!;
    return { sql: page.sql, inner, result, statements };
  }

  it('walks the primary key between the range\'s ids (a day of tickets made in order, a wide range), or sorts a sparse day\'s few tickets', async () => {
    const D = B + 20 * DAY;
    const first = await f.ticket({ created_at: D + 10 });
    const inOrder = [];
    for (let i = 0; i < 8; i++) inOrder.push(await f.ticket({ created_at: D + DAY + 100 + i }));
    const last = await f.ticket({ created_at: D + 20 });
    // A day whose tickets were made in order: the walk, no sort.
    for (const order_direction of ['asc', 'desc']) {
      const { sql, inner, result } = await pageOf({ created_at_min: D + DAY, created_at_max: D + 2 * DAY - 1, order_direction });
      expect(ids(expectList(result))).toEqual((order_direction === 'asc' ? inOrder : [...inOrder].reverse()).slice(0, 5).map((t) => t.id));
      expect(sql).toContain('FORCE INDEX (PRIMARY)');
      expect({ key: inner.key, type: inner.type, extra: inner.Extra }).toEqual({ key: 'PRIMARY', type: 'range', extra: expect.not.stringMatching(/filesort/) });
      // The range's own ids only (lo..hi from the counters): at most the day's tickets.
      expect(Number(inner.rows)).toBeLessThanOrEqual(inOrder.length + 1);
    }
    // A wide range (every ticket of this file and more): the walk.
    const wide = await pageOf({ created_at_max: D + 2 * DAY });
    expect({ key: wide.inner.key, extra: wide.inner.Extra }).toEqual({ key: 'PRIMARY', extra: expect.not.stringMatching(/filesort/) });
    // Two tickets of one day far apart in id: the walk would read all between; the sort of the two.
    const sparse = await pageOf({ created_at_min: D, created_at_max: D + DAY - 1 });
    expect(ids(expectList(sparse.result))).toEqual([first.id, last.id]);
    expect({ key: sparse.inner.key }).toEqual({ key: 'tickets_list_created_at' });
    expect(Number(sparse.inner.rows)).toBeLessThanOrEqual(Math.sqrt(5 * (last.id - first.id + 1)));
    // In the range's own order: the range of its index, no sort.
    for (const order_direction of ['asc', 'desc']) {
      const own = await pageOf({ created_at_min: D, created_at_max: D + 2 * DAY, order_column: 'created_at', order_direction });
      expect({ key: own.inner.key, extra: own.inner.Extra }).toEqual({ key: 'tickets_list_created_at', extra: expect.not.stringMatching(/filesort/) });
      expect(expectList(own.result).length).toBe(5);
    }
    // Two statements of the list's own, whatever the range.
    for (const q of [{ created_at_min: D }, { updated_at_max: D }, { created_at_min: D, status: ctx.statuses[0] }, { created_at_min: D, trashed: 1 }]) {
      const { statements } = await pageOf(q);
      expect({ q, n: statements.filter((s) => /FROM ticket_day_counts|FROM `tickets`/.test(s.sql)).length }).toEqual({ q, n: 2 });
    }
    // Deep pages (past the middle: from the far end) equal the whole list's slices.
    const all = ids(expectList(await api.get(BASE, { created_at_min: D, created_at_max: D + 2 * DAY, limit: 100 })));
    expect(all).toHaveLength(10);
    for (const start of [1, 4, 6, 9, 10, 11]) {
      const res = await api.get(BASE, { created_at_min: D, created_at_max: D + 2 * DAY, start, limit: 3 });
      expect({ start, page: ids(expectList(res)) }).toEqual({ start, page: all.slice(start - 1, start + 2) });
    }
  });
});

describe('the page of a date range in another order', () => {
  it('sorts a narrow range read by its date\'s index, and walks the order\'s index for a range of most tickets', async () => {
    const D = B + 40 * DAY;
    const made = [];
    for (let i = 0; i < 6; i++) made.push(await f.ticket({ created_at: D + 100 + i, subject: `Dated ${String.fromCharCode(102 - i)}` }));
    for (const [order_column, order_direction] of [['updated_at', 'desc'], ['subject', 'asc'], ['last_reply_time', 'asc']] as const) {
      const { statements, result } = await capture(() => api.get(BASE, { created_at_min: D, created_at_max: D + DAY - 1, order_column, order_direction, limit: 5 }));
      const expected = await query<{ id: number }>(
        `SELECT id FROM tickets WHERE created_at BETWEEN ? AND ? AND deleted_at IS NULL AND merged_into_id IS NULL ORDER BY ${order_column} ${order_direction}, id ${order_direction} LIMIT 5`,
        [D, D + DAY - 1],
      );
      expect({ order_column, page: ids(expectList(result)) }).toEqual({ order_column, page: expected.map((r) => r.id) });
      const page = statements.find((st) => withoutSwitches(st.sql).startsWith('SELECT STRAIGHT_JOIN t.* FROM (SELECT'))!;
      expect(page.sql).toContain('FORCE INDEX (tickets_list_created_at)');
      const inner = (await query<Record<string, any>>(explainOf(page.sql), page.params)).find((r) => r.select_type === 'DERIVED')!;
      expect({ key: inner.key, type: inner.type }).toEqual({ key: 'tickets_list_created_at', type: 'range' });
    }
    // Every ticket in the range: the walk of the order's index, no sort.
    const { statements } = await capture(() => api.get(BASE, { created_at_max: 4_000_000_000, order_column: 'updated_at', order_direction: 'desc', limit: 5 }));
    const page = statements.find((st) => withoutSwitches(st.sql).startsWith('SELECT STRAIGHT_JOIN t.* FROM (SELECT'))!;
    expect(page.sql).toContain('FORCE INDEX (tickets_list_updated_at)');
    const inner = (await query<Record<string, any>>(explainOf(page.sql), page.params)).find((r) => r.select_type === 'DERIVED')!;
    expect({ key: inner.key, extra: inner.Extra }).toEqual({ key: 'tickets_list_updated_at', extra: expect.not.stringMatching(/filesort/) });
  });

  it('with three counted filters, counts and pages without index merge intersections (at 1M the optimiser intersected four indexes row by row: 0.66 s and 1.15 s)', async () => {
    const D = B + 45 * DAY;
    const priorities = (await TicketPriority.findAll({ order: [['id', 'ASC']] })).map((x) => x.id);
    const department = await f.department();
    const made = [];
    for (let i = 0; i < 6; i++) {
      made.push(await f.ticket({ created_at: D + 100 + i, subject: `Two filters ${String.fromCharCode(102 - i)}`, department: [department.id, ctx.departmentId][i % 2], priority: priorities[0] }));
    }
    // (A status and one other counted filter, or a pair of them, are summed from the day counters:
    // migrations 054 and 055. A flag beside two of them is not.)
    const q = { created_at_min: D, created_at_max: D + DAY - 1, department: department.id, priority: priorities[0], locked: 0 };
    for (const [order_column, order_direction] of [['updated_at', 'desc'], ['subject', 'asc']] as const) {
      const { statements, result } = await capture(() => api.get(BASE, { ...q, order_column, order_direction, limit: 2 }));
      const expected = await query<{ id: number }>(
        `SELECT id FROM tickets WHERE created_at BETWEEN ? AND ? AND department_id = ? AND priority_id = ? AND locked = 0 AND deleted_at IS NULL AND merged_into_id IS NULL
          ORDER BY ${order_column} ${order_direction}, id ${order_direction}`,
        [D, D + DAY - 1, department.id, priorities[0]],
      );
      expect({ order_column, page: ids(expectList(result)), count: result.body.count })
        .toEqual({ order_column, page: expected.slice(0, 2).map((r) => r.id), count: expected.length });
      const count = countStatement(statements);
      const page = statements.find((st) => withoutSwitches(st.sql).startsWith('SELECT STRAIGHT_JOIN t.* FROM (SELECT'))!;
      for (const st of [count, page]) {
        expect(st.sql).toMatch(/^SET STATEMENT optimizer_switch = 'index_merge_intersection=off' FOR SELECT /);
        const plan = await query<Record<string, any>>(explainOf(st.sql), st.params);
        expect(plan.filter((r) => /intersect/.test(String(r.Extra)))).toEqual([]);
      }
    }
  });
});

describe('count of a date range with one other counted filter or a pair of them, alone or with a status (migrations 028, 054 and 055)', () => {
  /** Days of this test's own, after the other tests' days around B. */
  const C = B + 60 * DAY;
  const within: Array<[number | undefined, number | undefined]> = [
    [C, C + DAY - 1], [C + 43200, C + 2 * DAY + 200], [C + 1, undefined], [undefined, C + DAY - 1], [C - 10 * DAY, C + 10 * DAY],
  ];

  it('sums the filter\'s day counters, exact through creates, changes of each filter and of the status, trash, merges and deletes', async () => {
    const priorities = (await TicketPriority.findAll({ order: [['id', 'ASC']] })).map((x) => x.id).slice(0, 2);
    const channels = (await Channel.findAll({ order: [['id', 'ASC']] })).map((x) => x.id).slice(0, 2);
    const parent = await f.department();
    const child = await f.department({ parent_id: parent.id });
    const operator = await f.operator();
    const at = [C - 1, C, C + 43200, C + DAY - 1, C + DAY, C + 2 * DAY + 100, C + 5 * DAY + 5];
    const made = [];
    for (const [i, created_at] of at.entries()) {
      made.push(await f.ticket({
        created_at, priority: priorities[i % 2], department: [parent.id, child.id, ctx.departmentId][i % 3], status: ctx.statuses[i % 4 === 1 ? 1 : 0], ...(i % 3 === 0 ? { internal: 1, user: operator.id } : {}),
      }));
    }
    for (const [i, t] of made.entries()) await sequelize().query('UPDATE tickets SET updated_at = ? WHERE id = ?', { replacements: [at[i] + 7, t.id] });

    /** Each counted filter (but status) as the list takes it, and as SQL on tickets. */
    const filters: Array<[Record<string, unknown>, string]> = [
      [{ priority: priorities[0] }, `priority_id = ${priorities[0]}`],
      [{ priority: priorities.join(',') }, `priority_id IN (${priorities.join(',')})`],
      [{ department: parent.id }, `department_id IN (${parent.id}, ${child.id})`],
      [{ department: child.id }, `department_id = ${child.id}`],
      [{ brand: ctx.brandId }, `brand_id = ${ctx.brandId}`],
      [{ channel: channels[1] }, `channel_id = ${channels[1]}`],
      [{ internal: 1 }, 'internal = 1'], [{ internal: 0 }, 'internal = 0'],
      [{ locked: 1 }, 'locked = 1'], [{ locked: 0 }, 'locked = 0'],
      [{ assigned: -1 }, 'assigned = 0'],
      // With a status (or two): the counters' rows of those statuses (migration 054).
      [{ priority: priorities[0], status: ctx.statuses[0] }, `priority_id = ${priorities[0]} AND status_id = ${ctx.statuses[0]}`],
      [{ department: parent.id, status: ctx.statuses[1] }, `department_id IN (${parent.id}, ${child.id}) AND status_id = ${ctx.statuses[1]}`],
      [{ channel: channels[1], status: ctx.statuses.slice(0, 2).join(',') }, `channel_id = ${channels[1]} AND status_id IN (${ctx.statuses[0]}, ${ctx.statuses[1]})`],
      [{ locked: 0, status: ctx.statuses[0] }, `locked = 0 AND status_id = ${ctx.statuses[0]}`],
      [{ internal: 1, status: ctx.statuses[1] }, `internal = 1 AND status_id = ${ctx.statuses[1]}`],
      [{ assigned: -1, status: ctx.statuses[1] }, `assigned = 0 AND status_id = ${ctx.statuses[1]}`],
      // Pairs of priority, department, brand and channel, alone or with a status (migration 055).
      [{ priority: priorities[0], department: parent.id }, `priority_id = ${priorities[0]} AND department_id IN (${parent.id}, ${child.id})`],
      [{ department: child.id, priority: priorities.join(',') }, `department_id = ${child.id} AND priority_id IN (${priorities.join(',')})`],
      [{ channel: channels[1], priority: priorities[1] }, `channel_id = ${channels[1]} AND priority_id = ${priorities[1]}`],
      [{ brand: ctx.brandId, department: parent.id }, `brand_id = ${ctx.brandId} AND department_id IN (${parent.id}, ${child.id})`],
      [{ department: parent.id, channel: channels.join(',') }, `department_id IN (${parent.id}, ${child.id}) AND channel_id IN (${channels.join(',')})`],
      [{ priority: priorities[1], brand: ctx.brandId }, `priority_id = ${priorities[1]} AND brand_id = ${ctx.brandId}`],
      [{ channel: channels[1], brand: ctx.brandId }, `channel_id = ${channels[1]} AND brand_id = ${ctx.brandId}`],
      [{ priority: priorities[0], department: parent.id, status: ctx.statuses[0] }, `priority_id = ${priorities[0]} AND department_id IN (${parent.id}, ${child.id}) AND status_id = ${ctx.statuses[0]}`],
      [{ department: child.id, channel: channels[1], status: ctx.statuses.slice(0, 2).join(',') }, `department_id = ${child.id} AND channel_id = ${channels[1]} AND status_id IN (${ctx.statuses[0]}, ${ctx.statuses[1]})`],
    ];
    const check = async () => {
      for (const column of ['created_at', 'updated_at'] as const) {
        for (const trashed of [false, true]) {
          for (const [params, sql] of filters) {
            for (const [min, max] of within) {
              const q: Record<string, unknown> = { limit: 1, ...params, ...(trashed ? { trashed: 1 } : {}) };
              if (min !== undefined) q[`${column}_min`] = min;
              if (max !== undefined) q[`${column}_max`] = max;
              const { statements, result } = await capture(() => api.get(BASE, q));
              const [row] = await query<{ n: number }>(
                `SELECT COUNT(*) AS n FROM tickets WHERE merged_into_id IS NULL AND deleted_at IS ${trashed ? 'NOT ' : ''}NULL AND ${column} BETWEEN ? AND ? AND ${sql}`,
                [min ?? 0, max ?? 4_294_967_295],
              );
              const context = { column, trashed, params, min, max };
              expect({ ...context, count: expectList(result) && result.body.count }).toEqual({ ...context, count: Number(row!.n) });
              // The whole days from the filter's counters; only the partial days COUNTed.
              const st = countStatement(statements);
              const parts = Object.keys(st.params as object).filter((k) => k.startsWith('partFrom')).length;
              expect({ ...context, counters: /FROM ticket_day_filter_counts/.test(st.sql), counts: (st.sql.match(/COUNT\(/g) ?? []).length })
                .toEqual({ ...context, counters: true, counts: parts });
            }
          }
        }
      }
    };
    await check();
    // Each filter's value changed through the API (updated_at moves to today) and by hand (on its day).
    expectSuccess(await api.put(`${BASE}/${made[1].id}`, { priority: priorities[0], department: child.id, locked: 1 }), 'Successfully updated the ticket!');
    expectSuccess(await api.put(`${BASE}/${made[2].id}`, { assignedto: [operator.id] }), 'Successfully updated the ticket!');
    await sequelize().query('UPDATE tickets SET channel_id = ?, internal = 1 - internal, locked = 1 WHERE id IN (?)', { replacements: [channels[1], [made[3].id, made[4].id]] });
    await check();
    // A status's change alone: through the API, and by hand on the ticket's own days (no day moves).
    expectSuccess(await api.put(`${BASE}/${made[0].id}`, { status: ctx.statuses[1] }), 'Successfully updated the ticket!');
    await sequelize().query('UPDATE tickets SET status_id = IF(status_id = ?, ?, ?) WHERE id IN (?)', { replacements: [ctx.statuses[0], ctx.statuses[1], ctx.statuses[0], [made[3].id, made[5].id]] });
    await check();
    expectSuccess(await api.put(`${BASE}/${made[2].id}`, { assignedto: [] }), 'Successfully updated the ticket!');
    await sequelize().query('UPDATE tickets SET department_id = ?, created_at = ?, updated_at = ? WHERE id = ?', { replacements: [parent.id, C + DAY + 5, C - DAY, made[5].id] });
    expect((await api.del(`${BASE}/${made[6].id}`)).status).toBe(200); // the trash
    await check();
    expectSuccess(await api.post(`${BASE}/${made[0].id}/merge`, { ids: [made[4].id] }), 'Successfully updated the ticket!');
    await sequelize().query('DELETE FROM tickets WHERE id = ?', { replacements: [made[6].id] });
    await check();
    // Three counted filters beside the dates: a COUNT of the matches, still exact.
    const three = { limit: 1, created_at_min: C - DAY, created_at_max: C + 10 * DAY, priority: priorities[0], department: parent.id, brand: ctx.brandId };
    const { statements, result: res } = await capture(() => api.get(BASE, three));
    const [row] = await query<{ n: number }>(
      `SELECT COUNT(*) AS n FROM tickets WHERE merged_into_id IS NULL AND deleted_at IS NULL AND created_at BETWEEN ? AND ? AND priority_id = ? AND department_id IN (?) AND brand_id = ?`,
      [C - DAY, C + 10 * DAY, priorities[0], [parent.id, child.id], ctx.brandId],
    );
    expect(expectList(res) && res.body.count).toBe(Number(row!.n));
    expect(countStatement(statements).sql).not.toMatch(/ticket_day_filter_counts/);
    expect(Number(row!.n)).toBeGreaterThan(0);
  });
});

describe('migrations 026, 027, 028, 054, 055, 061, 062 and 063', () => {
  const triggers = () => query<{ t: string }>("SELECT TRIGGER_NAME AS t FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME LIKE 'tickets\\_day\\_counts\\_%'");
  const expectFilled = expectDayCounts;

  it('go down (063: the marks and the string orders\' rows gone; 062 and 061: the customer and time columns\' rows gone; 027: the counters by day alone; 026: table and triggers gone) and up again (counts filled from the tickets)', async () => {
    const qi = sequelize().getQueryInterface();
    const timeRows = async () => Number((await query<{ n: number }>('SELECT COUNT(*) AS n FROM ticket_day_counts WHERE col >= 2'))[0].n);
    const markedRows = async () => Number((await query<{ n: number }>('SELECT COUNT(*) AS n FROM ticket_day_counts WHERE col IN (?)', [m063.MARK_COLS]))[0].n);
    const marksTable = () => query("SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'ticket_order_marks'");
    expect(await markedRows()).toBeGreaterThan(0);
    // 095, 093 and 089 (the orders' filter rows) first, as a way down takes them, and last on the way up.
    await m095.down(qi);
    await m093.down(qi);
    await m089.down(qi);
    await m063.down(qi);
    expect(await markedRows()).toBe(0);
    expect(await marksTable()).toEqual([]);
    await expectFilled(true);
    await m062.down(qi);
    expect(Number((await query<{ n: number }>('SELECT COUNT(*) AS n FROM ticket_day_counts WHERE col = ?', [m062.CUSTOMER_ORDER_COL]))[0].n)).toBe(0);
    expect(await timeRows()).toBeGreaterThan(0);
    await m061.down(qi);
    expect(await timeRows()).toBe(0);
    await expectFilled(true, false);
    // Migrations 063, 062, 061 and 052 (on 027's table) first, as a way down takes them, and last on the way up.
    await m052.down(qi);
    await m027.down(qi);
    expect(await query("SELECT 1 FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'ticket_day_counts' AND COLUMN_NAME = 'status_id'")).toEqual([]);
    expect((await triggers()).length).toBe(3);
    await expectFilled(false);
    await m026.down(qi);
    expect(await triggers()).toEqual([]);
    expect(await query("SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'ticket_day_counts'")).toEqual([]);
    await m026.up(qi);
    expect((await triggers()).length).toBe(3);
    await expectFilled(false);
    await m027.up(qi);
    expect((await triggers()).length).toBe(3);
    await m052.up(qi);
    await expectFilled(true, false);
    await m061.up(qi);
    await m062.up(qi);
    await m063.up(qi);
    await m089.up(qi);
    await m093.up(qi);
    await m095.up(qi);
    expect((await triggers()).length).toBe(3);
    expect(await marksTable()).toEqual([{ 1: 1 }]);
    await expectFilled(true);
    // Kept again after the way back: a new ticket is counted, and its change of status.
    const t = await f.ticket({ created_at: B + 30 * DAY, status: ctx.statuses[0] });
    const dated = { created_at_min: B + 30 * DAY, created_at_max: B + 32 * DAY - 1, limit: 1 };
    const res = await api.get(BASE, dated);
    expect(ids(expectList(res))).toEqual([t.id]);
    expect(res.body.count).toBe(1);
    const counts = async () => Promise.all(ctx.statuses.slice(0, 2).map(async (status) => (await api.get(BASE, { ...dated, status })).body.count));
    expect(await counts()).toEqual([1, 0]);
    expectSuccess(await api.put(`${BASE}/${t.id}`, { status: ctx.statuses[1] }), 'Successfully updated the ticket!');
    expect(await counts()).toEqual([0, 1]);
    await expectFilled(true);
  });

  it('028 goes down (055 first: the pairs gone; 054: its counters by day without the status; then its table and triggers gone) and up again (counts filled from the tickets, then kept)', async () => {
    const qi = sequelize().getQueryInterface();
    const own = () => query<{ t: string }>("SELECT TRIGGER_NAME AS t FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME LIKE 'tickets\\_day\\_filter\\_counts\\_%'");
    const expectFilterCounts = expectDayFilterCounts;
    await expectFilterCounts();
    // Migrations 055, 054 and 053 (on 028's table) first, as a way down takes them, and last on the
    // way up. Down from 055, the pairs' rows are gone and the others kept; down from 054, the
    // counters are filled again from the tickets, by day without the status.
    const pairRows = async () => Number((await query<{ n: number }>('SELECT COUNT(*) AS n FROM ticket_day_filter_counts WHERE dim >= ?', [m028.DAY_FILTER_COLUMNS.length]))[0].n);
    expect(await pairRows()).toBeGreaterThan(0);
    // (095, 093 and 089 first and last too: the orders' rows of this table; down from 095, the
    // time orders' rows are 093's again, whole.)
    await m095.down(qi);
    await expectFilterCounts();
    await m093.down(qi);
    await m089.down(qi);
    await m055.down(qi);
    expect(await pairRows()).toBe(0);
    await expectFilterCounts();
    expect((await own()).length).toBe(3);
    // Up again on the kept rows: the pairs' rows filled from the tickets.
    await m055.up(qi);
    expect(await pairRows()).toBeGreaterThan(0);
    await expectFilterCounts();
    await m055.down(qi);
    await m054.down(qi);
    await expectFilterCounts();
    await m053.down(qi);
    await m028.down(qi);
    expect(await own()).toEqual([]);
    expect(await query("SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'ticket_day_filter_counts'")).toEqual([]);
    // Made while the counters are gone: counted by the fill.
    const before = await f.ticket({ created_at: B + 100 * DAY, internal: 1, user: (await f.operator()).id });
    await m028.up(qi);
    expect((await own()).length).toBe(3);
    await m053.up(qi);
    await m054.up(qi);
    await m055.up(qi);
    await m089.up(qi);
    await m093.up(qi);
    await m095.up(qi);
    expect((await own()).length).toBe(3);
    await expectFilterCounts();
    const after = await f.ticket({ created_at: B + 100 * DAY });
    expectSuccess(await api.put(`${BASE}/${after.id}`, { locked: 1, priority: ctx.priorityId }), 'Successfully updated the ticket!');
    expect(await expectFilterCounts()).toBeGreaterThan(0);
    const dated = { created_at_min: B + 100 * DAY, created_at_max: B + 102 * DAY - 1, limit: 5 };
    expect((await api.get(BASE, { ...dated, internal: 1 })).body.count).toBe(1);
    expect((await api.get(BASE, { ...dated, internal: 0 })).body.count).toBe(1);
    expect(ids(expectList(await api.get(BASE, { ...dated, locked: 1 })))).toEqual([after.id]);
    expect(ids(expectList(await api.get(BASE, { ...dated, priority: ctx.priorityId, department: ctx.departmentId })))).toContain(after.id);
    expect([before.id, after.id]).toHaveLength(2);
  });
});

describe('a deep page of the list, unfiltered or by one counted filter, its complement or a pair (and a status), positioned by the day counters', () => {
  const { listed, skipped, positioning } = deepPages(api, BASE);

  it('gives the same pages as skipping, in id, created_at and updated_at order both ways, unfiltered or by one counted filter, and falls back where ids are out of day order', async () => {
    const priorities = (await TicketPriority.findAll({ order: [['id', 'ASC']] })).map((x) => x.id).slice(0, 2);
    const parent = await f.department();
    const child = await f.department({ parent_id: parent.id });
    // Days far in the future, after every other ticket of this database: tickets made in day order
    // (their ids follow created_at), then one made last on an earlier day.
    const F = (Math.floor(Date.now() / 1000 / DAY) + 20000 + Math.floor(Math.random() * 1000)) * DAY;
    // (The API takes no date after now: the dates are set by hand, the counters follow by trigger.
    // Made first on a past day of their own, not today: the counters' id bounds of a day keep every
    // id they ever counted while the day has tickets, and today has other tests' tickets.)
    const P = (5000 + Math.floor(Math.random() * 3000)) * DAY;
    // Days 13 apart: the tickets lie in several spans of 32 days (migration 052), some spans with two days.
    const GAP = 13;
    const days = [0, 0, 1, 3, 3, 3, 4, 7, 2];
    // One ticket of the priority before them all (a smaller id, a day of its own before theirs): the
    // priority's page below starts past the first ticket, a deep page in any database (alone, this
    // test's tickets are the only ones).
    const early = await f.ticket({ created_at: P - DAY });
    await sequelize().query('UPDATE tickets SET created_at = ?, updated_at = ?, priority_id = ? WHERE id = ?', {
      replacements: [F - 40 * DAY, F - 40 * DAY, priorities[1], early.id],
    });
    const all = [];
    for (const [i, d] of days.entries()) {
      const t = await f.ticket({ created_at: P + i });
      // updated_at on days of their own, not in id order; two statuses, two priorities, a
      // department and the one below it, some locked.
      await sequelize().query('UPDATE tickets SET created_at = ?, updated_at = ?, status_id = ?, priority_id = ?, department_id = ?, locked = ? WHERE id = ?', {
        replacements: [F + d * GAP * DAY + 100 + i, F + ((i * 5) % 9) * GAP * DAY + i, ctx.statuses[i % 3 === 1 ? 1 : 0], priorities[i % 2], [parent.id, child.id, ctx.departmentId][i % 3], i % 4 === 0 ? 1 : 0, t.id],
      });
      all.push(t);
    }
    const made = all.slice(0, -1);
    const odd = all[all.length - 1];
    /**
     * Date ranges' counts against the tickets: within a span of 32 days, over whole spans, open at
     * either end, for both date columns, alone and with a status or a priority (whole spans are
     * read from their rows: migrations 052 and 053).
     */
    const compareCounts = async () => {
      const ranges: Array<[number | undefined, number | undefined]> = [
        [F, F + 40 * DAY - 1], [F + 5 * DAY + 3600, F + 70 * DAY - 1], [F - 100 * DAY, F + 200 * DAY], [undefined, F + 60 * DAY], [F + 14 * DAY, undefined], [F + 2 * DAY, F + 3 * DAY],
      ];
      for (const column of ['created_at', 'updated_at']) {
        for (const [min, max] of ranges) {
          for (const filter of [{}, { status: ctx.statuses[1] }, { priority: priorities[1] }, { status: ctx.statuses[0], priority: priorities[1] }, { priority: priorities[1], department: parent.id }]) {
            const q = { ...filter, ...(min === undefined ? {} : { [`${column}_min`]: min }), ...(max === undefined ? {} : { [`${column}_max`]: max }) };
            const [{ n }] = await query<{ n: number }>(
              `SELECT COUNT(*) AS n FROM tickets WHERE deleted_at IS NULL AND merged_into_id IS NULL AND ${column} BETWEEN ? AND ?${'status' in filter ? ' AND status_id = ?' : ''}${'priority' in filter ? ' AND priority_id = ?' : ''}${'department' in filter ? ' AND department_id IN (?)' : ''}`,
              [min ?? 0, max ?? 4294967295, ...Object.values(filter).map((v) => (v === parent.id ? [parent.id, child.id] : v))],
            );
            expect({ q, count: (await api.get(BASE, { ...q, limit: 1 })).body.count }).toEqual({ q, count: Number(n) });
          }
        }
      }
    };
    /** Every page of each filter and order against skipping, and where the id order starts. */
    const comparePages = () => positioning(async () => {
      await compareCounts();
      // Positioned: unfiltered, by a status, a priority, a department's tree, a flag set or not
      // (its complement: all tickets' days less the flag's), by a status beside one of them
      // (migration 054), and by a pair of value columns, with a status or not (055). Not: a flag
      // beside another filter (read by skipping, the same pages).
      const unpositioned: Array<Record<string, number>> = [{ priority: priorities[1], locked: 1 }, { status: ctx.statuses[0], department: parent.id, locked: 0 }];
      const filters: Array<Record<string, number>> = [
        {}, { status: ctx.statuses[1] }, { priority: priorities[1] }, { department: parent.id }, { locked: 1 }, { locked: 0 }, { assigned: -1 },
        { status: ctx.statuses[0], priority: priorities[1] }, { status: ctx.statuses[0], department: parent.id }, { status: ctx.statuses[1], locked: 1 },
        { status: ctx.statuses[0], locked: 0 }, { priority: priorities[1], department: parent.id }, { status: ctx.statuses[0], priority: priorities[0], department: parent.id },
        { priority: priorities[1], brand: ctx.brandId }, ...unpositioned,
      ];
      for (const filter of filters) {
        const positioned = !unpositioned.includes(filter);
        const { count } = await skipped(filter);
        // The first pages, the days of this test's tickets at the end, and pages between.
        const offsets = [...new Set([0, 1, 2, 5, ...Array.from({ length: 8 }, (_, i) => Math.floor((count * i) / 8)), ...Array.from({ length: 12 }, (_, i) => count - 12 + i), count])]
          .filter((o) => o >= 0 && o <= count);
        for (const order_column of ['id', 'created_at', 'updated_at']) {
          for (const order_direction of ['asc', 'desc']) {
            for (const offset of offsets) {
              const q = { ...filter, order_column, order_direction, start: offset + 1 };
              const [got, want] = [await listed(q), await skipped(q)];
              // The same page and count, in the list's two statements (the position read in the counters').
              expect({ q, ids: got.ids, count: got.count, statements: got.statements }).toEqual({ q, ids: want.ids, count: want.count, statements: 2 });
              // The dates' orders always start at a day's edge.
              if (order_column !== 'id' && offset > 0 && offset < count) expect({ q, edge: typeof got.edge }).toEqual({ q, edge: positioned ? 'number' : 'undefined' });
            }
          }
        }
      }
      const { count } = await skipped({});
      // In id order the page starts at the first ticket of this test's first day (every earlier
      // day's tickets have smaller ids), not where the later tickets' ids are out of day order.
      const first = await listed({ order_column: 'id', start: count - 7 });
      expect({ edge: first.edge, ids: first.ids }).toEqual({ edge: made[0].id, ids: made.slice(1, 4).map((t) => t.id) });
      const last = await listed({ order_column: 'id', start: count });
      expect({ edge: last.edge, ids: last.ids }).toEqual({ edge: undefined, ids: [odd.id] });
      // With a filter, from the same bound: its day's smallest id of all tickets (a filter's
      // counters keep no ids), then the filter's matches from there.
      const byPriority = await skipped({ priority: priorities[1] });
      const fromBound = await listed({ priority: priorities[1], order_column: 'id', start: byPriority.count - 3 });
      expect({ edge: fromBound.edge, ids: fromBound.ids }).toEqual({ edge: made[0].id, ids: [made[1], made[3], made[5]].map((t) => t.id) });
    });
    try {
      await comparePages();
      // The same once the past days' rows are folded (migrations 051 and 052; every day of this test is past at F + 10 × GAP days).
      expect(await foldDayCounters(F + 10 * GAP * DAY)).toBeGreaterThan(0);
      await expectDayCounts(true);
      await expectDayFilterCounts();
      await comparePages();
      // Tickets moving between statuses after the fold: their days' rows at the triggers' slots
      // beside the folded ones (a span counts its row and those), then folded again.
      await sequelize().query('UPDATE tickets SET status_id = IF(status_id = ?, ?, ?) WHERE id IN (?)', {
        replacements: [ctx.statuses[0], ctx.statuses[1], ctx.statuses[0], [made[2].id, made[5].id, made[6].id]],
      });
      await comparePages();
      await foldDayCounters(F + 10 * GAP * DAY);
      await expectDayCounts(true);
      await expectDayFilterCounts();
      await comparePages();
    } finally {
      // Gone again: tickets dated decades ahead would stay past every later test's horizon (the
      // export of a later file in this worker's database never reaches them).
      await sequelize().query('DELETE FROM tickets WHERE id IN (?)', { replacements: [[early, ...all].map((t) => t.id)] });
    }
  });

  it('positions a deep page in a value order (each value\'s tickets in id order), unfiltered, by status, by one counted filter or its pair, and gives the pages skipping gives', async () => {
    const priorities = (await TicketPriority.findAll({ order: [['id', 'ASC']] })).map((x) => x.id).slice(0, 3);
    const department = await f.department();
    // Days far in the future, after every other ticket of this database, 13 days apart (several
    // spans of 32 days); made first on a past day of their own (the counters' id bounds of a day
    // keep every id they counted while the day has tickets), then one made last on an earlier day.
    // Not among the days the other tests use (20,000 days ahead and the 1,000 after): a span's
    // bounds keep the ids of its days' tickets deleted since, which would put older ids among these.
    const F = (Math.floor(Date.now() / 1000 / DAY) + 23000 + Math.floor(Math.random() * 1000)) * DAY;
    const P = (5000 + Math.floor(Math.random() * 3000)) * DAY;
    const days = [0, 0, 1, 2, 2, 3, 5, 5, 6, 8, 9, 9, 8];
    const made: Array<{ id: number }> = [];
    for (const [i, d] of days.entries()) {
      const t = await f.ticket({ created_at: P + i });
      await sequelize().query('UPDATE tickets SET created_at = ?, updated_at = ?, status_id = ?, priority_id = ?, department_id = ?, locked = ? WHERE id = ?', {
        replacements: [F + d * 13 * DAY + i, F + d * 13 * DAY + i, ctx.statuses[i % 4 === 1 ? 1 : 0], priorities[i % 3], [department.id, ctx.departmentId][i % 2], i % 3 === 0 ? 1 : 0, t.id],
      });
      made.push(t);
    }
    const orders = ['status_id', 'priority_id', 'department_id', 'brand_id', 'channel_id'];
    // Each filter with the orders it is positioned in: unfiltered and by status all; a department
    // (its tree) the status order by its rows per status, its own order by its values, the others
    // by their pair with it (migration 055); a priority and a status the same way; a flag set the
    // status order only (no pair holds a flag), its complement none (a difference of counters).
    const filters: Array<[Record<string, unknown>, string[]]> = [
      [{}, orders], [{ status: `${ctx.statuses[0]},${ctx.statuses[1]}` }, orders], [{ department: department.id }, orders],
      [{ priority: priorities[1], status: ctx.statuses[0] }, orders], [{ locked: 1 }, ['status_id']], [{ locked: 0 }, []],
    ];
    /** Every value order both ways, for each filter: around each of this test's tickets and between, against the database's order and skipping. */
    const comparePages = () => positioning(async () => {
      for (const [filter, positionedIn] of filters) {
        const { count } = await skipped(filter);
        for (const order_column of orders) {
          for (const order_direction of ['asc', 'desc']) {
            // Where this test's tickets are in the list (each value's tickets in id order, NULLs none).
            const q0 = { ...filter, order_column, order_direction };
            // The list as the tickets hold it (a department's tree is itself: it has none below it).
            const columns: Record<string, string> = { status: 'status_id', priority: 'priority_id', department: 'department_id', locked: 'locked' };
            const where = Object.keys(filter).map((k) => ` AND ${columns[k]} IN (?)`).join('');
            const values = Object.values(filter).map((v) => String(v).split(',').map(Number));
            const order = await query<{ id: number }>(
              `SELECT id FROM tickets WHERE deleted_at IS NULL AND merged_into_id IS NULL${where} ORDER BY ${order_column} ${order_direction}, id ${order_direction}`,
              values,
            );
            expect({ q0, count }).toEqual({ q0, count: order.length });
            const at = order.map((r) => Number(r.id));
            const offsets = [...new Set([1, 2, ...made.map((t) => at.indexOf(t.id)).filter((i) => i >= 0).flatMap((i) => [i - 1, i]), ...Array.from({ length: 4 }, (_, i) => Math.floor((count * i) / 4))])]
              .filter((o) => o >= 0 && o <= count);
            let positioned = 0;
            for (const offset of offsets) {
              const q = { ...q0, start: offset + 1 };
              const [got, want] = [await listed(q), await skipped(q)];
              expect({ q, ids: got.ids, count: got.count, statements: got.statements }).toEqual({ q, ids: at.slice(offset, offset + 3), count, statements: 2 });
              expect({ q, ids: want.ids }).toEqual({ q, ids: at.slice(offset, offset + 3) });
              if (got.edge !== undefined) positioned += 1;
            }
            // Positioned: pages start at a bound (not those of days whose ids are out of day order:
            // this test's last ticket, on an earlier day). Not: none does.
            const expected = positionedIn.includes(order_column);
            expect({ q0, positioned: expected ? positioned > 0 : positioned }).toEqual({ q0, positioned: expected ? true : 0 });
          }
        }
      }
    });
    try {
      await comparePages();
      // Tickets moving between statuses and priorities, then the past days folded (migrations 051-053).
      await sequelize().query('UPDATE tickets SET status_id = IF(status_id = ?, ?, ?), priority_id = ? WHERE id IN (?)', {
        replacements: [ctx.statuses[0], ctx.statuses[1], ctx.statuses[0], priorities[2], [made[2].id, made[5].id, made[6].id]],
      });
      expect(await foldDayCounters(F + 10 * 13 * DAY)).toBeGreaterThan(0);
      await comparePages();
      // A filter of few tickets (a department of two) in a value order: its walk from the bound
      // would read a row per entry of the order's index for each match, reading its two matches
      // and sorting them fewer: not positioned (deepPaging.rowWalk), the same page.
      const sparse = await f.department();
      await sequelize().query('UPDATE tickets SET department_id = ? WHERE id IN (?)', { replacements: [sparse.id, [made[0].id, made[2].id]] });
      const q = { department: sparse.id, order_column: 'priority_id', start: 2 };
      const kept = { ...deepPaging };
      try {
        deepPaging.start = 1;
        const [walked, want] = [await listed(q), await skipped(q)];
        expect({ edge: walked.edge, ids: walked.ids }).toEqual({ edge: undefined, ids: want.ids });
        deepPaging.rowWalk = 0;
        const forced = await listed(q);
        expect({ edge: typeof forced.edge, ids: forced.ids }).toEqual({ edge: 'number', ids: want.ids });
        expect(want.ids).toHaveLength(1);
      } finally {
        Object.assign(deepPaging, kept);
      }
    } finally {
      await sequelize().query('DELETE FROM tickets WHERE id IN (?)', { replacements: [made.map((t) => t.id)] });
    }
  });

  it('positions a page of a filter of few tickets short of deepPaging.start matches in, whether or not this process has counted the filter', async () => {
    const [department, other] = [await f.department(), await f.department()];
    const made = [];
    for (let i = 0; i < 6; i++) made.push(await f.ticket({ department: department.id }));
    for (let i = 0; i < 6; i++) await f.ticket({ department: other.id });
    const kept = deepPaging.start;
    try {
      const { count: total } = await skipped({});
      // The 4th to 6th of the department's 6 tickets, read from the end: 3 matches, about total / 2
      // entries of the created_at order (the department's share is 6 / total; total is 12 or more).
      deepPaging.start = Math.floor(total / 2);
      expect(deepPaging.start).toBeGreaterThan(3);
      const q = { department: department.id, order_column: 'created_at', start: 4 };
      const want = await skipped(q);
      expect({ ids: want.ids, count: want.count }).toEqual({ ids: made.slice(3).map((t) => t.id), count: 6 });
      // skipped() counted the department: its share says the page is deep, and the statement finds where it starts.
      const positioned = await listed(q);
      expect({ edge: typeof positioned.edge, ids: positioned.ids, count: positioned.count, statements: positioned.statements }).toEqual({ edge: 'number', ids: want.ids, count: 6, statements: 2 });
      // The whole list, 3 tickets in: no filter, no position.
      expect((await listed({ order_column: 'created_at', start: 4 })).edge).toBeUndefined();
      // A filter this process has not counted yet (another department of as few tickets): its
      // share unknown, its first page past the first is positioned too, as are the next.
      const first = await listed({ ...q, department: other.id });
      const second = await listed({ ...q, department: other.id });
      const want2 = await skipped({ ...q, department: other.id });
      expect({ first: typeof first.edge, second: typeof second.edge, ids: [first.ids, second.ids], statements: first.statements })
        .toEqual({ first: 'number', second: 'number', ids: [want2.ids, want2.ids], statements: 2 });
      // Of a filter not counted yet, the first page is never positioned (no position asked for),
      // any other page is.
      const asks = async (start: number) => {
        const fresh = (await f.department()).id;
        const { statements } = await capture(() => api.get(BASE, { limit: 3, ...q, department: fresh, start }));
        return statements.find((s) => /FROM ticket_list_counts/.test(s.sql))!.sql.startsWith('WITH');
      };
      expect({ first: await asks(1), fourth: await asks(4) }).toEqual({ first: false, fourth: true });
    } finally {
      deepPaging.start = kept;
    }
  });
});
