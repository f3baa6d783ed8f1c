/**
 * A deep page of the ticket list in the order of a nullable time column (`last_reply_time`,
 * `due_time`, `resolved_time`) or of the customer (`user_id`), unfiltered or by status, positioned
 * by migration 061's and 062's counters (src/ticket/tickets/listPage.ts, timeEdge, customerEdge):
 * the tickets without a time (first ascending, last descending, in id order) by their created_at
 * day and id bound, the others by their time's day; a customer's tickets from its first. Every
 * page is the one the database's own ORDER BY gives, and the one skipping gives; the counters stay
 * exact through the writes that move a ticket between them, and after a fold.
 */
import { capture, explainOf, withoutSwitches, type Statement } from '../../bench/capture';
import { DAY } from '../../migrations/026_ticket_day_counts';
import { ORDER_DAY_COLUMNS } from '../../migrations/061_ticket_day_order_counts';
import { CUSTOMER_ORDER_COL } from '../../migrations/062_ticket_customer_order_counts';
import { sequelize } from '../../src/db/sequelize';
import { foldDayCounters } from '../../src/ticket/tickets/dayCounterFold';
import { useApi } from '../helpers/app';
import { comparePagesAt, deepPages, expectDayCounts, expectDayFilterCounts, ordered, query } from './dayCounterSupport';
import { ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
const BASE = '/api/ticket/ticket';
/** Days between this test's days: several spans of 32 days. */
const GAP = 13;
let ctx: TicketContext;
const f = ticketFactories(api, () => ctx);

beforeAll(async () => { ctx = await ticketContext(); });

describe('a deep page in the order of a time column that may be NULL (migration 061)', () => {
  const pages = deepPages(api, BASE);
  const { listed, positioning } = pages;

  it('gives the pages the database\'s order gives, positioned in the NULL block (by id bound) and among the times, both ways, unfiltered and by status, before and after a fold', async () => {
    // Days far in the future (after every other ticket of this database, not the days other tests
    // use: 20,000 and 23,000 days ahead), GAP days apart (several spans of 32 days); made first on
    // a past day of their own (a day's id bounds keep every id it counted while it has tickets).
    const F = (Math.floor(Date.now() / 1000 / DAY) + 26000 + Math.floor(Math.random() * 1000)) * DAY;
    const P = (5000 + Math.floor(Math.random() * 3000)) * DAY;
    const days = [0, 0, 1, 2, 3, 3, 4, 5, 6, 7, 8, 9];
    const made: number[] = [];
    for (const [i, d] of days.entries()) {
      const t = await f.ticket({ created_at: P + i });
      // Each time column NULL for some tickets of each status, the others on days of their own
      // (not in id order; two at one second: the id decides).
      await sequelize().query(
        'UPDATE tickets SET created_at = ?, updated_at = ?, status_id = ?, last_reply_time = ?, due_time = ?, resolved_time = ? WHERE id = ?',
        {
          replacements: [
            F + d * GAP * DAY + i, F + d * GAP * DAY + i, ctx.statuses[i % 3 === 1 ? 1 : 0],
            i % 4 === 0 || i === 7 ? null : F + ((i * 5) % 9) * GAP * DAY + (i % 2) * 7,
            i % 2 === 0 ? null : F + ((i * 7) % 11) * GAP * DAY + 100,
            i < 6 ? null : F + (i % 3) * GAP * DAY,
            t.id,
          ],
        },
      );
      made.push(t.id);
    }
    /** Every time order both ways, unfiltered and by status: around each of this test's tickets, the NULL block's edge and between. */
    const comparePages = () => positioning(async () => {
      for (const status of [undefined, ctx.statuses[1]]) {
        for (const order_column of ORDER_DAY_COLUMNS) {
          for (const order_direction of ['asc', 'desc']) {
            const q0 = { ...(status ? { status } : {}), order_column, order_direction };
            const at = await ordered(order_column, order_direction, status);
            const { offsets, positioned } = await comparePagesAt(pages, q0, at, made);
            // Pages positioned in the NULL block (at an id bound) and among the times (at a second):
            // of each kind, one where a page starts at one of this test's tickets past the first.
            // (The quarters' pages start at other tests' tickets, whose times this test does not
            // choose: they are compared above, not counted here.)
            const nullIds = new Set((await query<{ id: number }>(`SELECT id FROM tickets WHERE ${order_column} IS NULL`)).map((r) => Number(r.id)));
            const startsAt = (kind: (id: number) => boolean) => offsets.some((o) => o > 0 && made.includes(at[o]) && kind(at[o]));
            const of = (kind: (id: number) => boolean) => positioned.some(({ offset }) => made.includes(at[offset]) && kind(at[offset]));
            expect({ q0, nulls: of((id) => nullIds.has(id)), times: of((id) => !nullIds.has(id)) })
              .toEqual({ q0, nulls: startsAt((id) => nullIds.has(id)), times: startsAt((id) => !nullIds.has(id)) });
          }
        }
      }
    });
    try {
      await expectDayCounts(true);
      await comparePages();
      // Ascending, the NULL block's last ticket (this test's last without a due time, alone on its
      // day, the newest of the block): the page starts at its id, the first times after it.
      await positioning(async () => {
        const all = await ordered('due_time', 'asc');
        const lastNull = made[10];
        const page = await listed({ order_column: 'due_time', start: all.indexOf(lastNull) + 1 });
        expect({ edge: page.edge, ids: page.ids }).toEqual({ edge: lastNull, ids: all.slice(all.indexOf(lastNull), all.indexOf(lastNull) + 3) });
      });
      // Times set, moved and cleared, and statuses changed: the counters follow (a ticket moves
      // between the NULL block and the times, and between days and statuses).
      await sequelize().query('UPDATE tickets SET due_time = IF(due_time IS NULL, ?, NULL), status_id = IF(status_id = ?, ?, ?) WHERE id IN (?)', {
        replacements: [F + 4 * GAP * DAY + 5, ctx.statuses[0], ctx.statuses[1], ctx.statuses[0], [made[2], made[3], made[7]]],
      });
      await sequelize().query('UPDATE tickets SET last_reply_time = last_reply_time + ?, resolved_time = NULL WHERE id IN (?)', {
        replacements: [40 * DAY, [made[5], made[9]]],
      });
      await expectDayCounts(true);
      await comparePages();
      // Every day of this test past: folded into a row per day and a span's (migrations 051-053),
      // the times' days too (from VALUE_DAYS on).
      expect(await foldDayCounters(F + 20 * GAP * DAY)).toBeGreaterThan(0);
      const unfoldedTimes = await query<{ n: number }>(
        `SELECT COUNT(*) AS n FROM ticket_day_counts WHERE col >= 2 AND slot < 8 AND day BETWEEN 65536 + ? AND 65536 + ?`, [F / DAY, F / DAY + 20 * GAP],
      );
      expect(Number(unfoldedTimes[0].n)).toBe(0);
      await expectDayCounts(true);
      await comparePages();
    } finally {
      await sequelize().query('DELETE FROM tickets WHERE id IN (?)', { replacements: [made] });
    }
  });

  it('bounds the ids of each NULL block\'s day, and leaves the times\' bounds neutral', async () => {
    const t = await f.ticket({});
    await sequelize().query('UPDATE tickets SET due_time = NULL, resolved_time = created_at + 60 WHERE id = ?', { replacements: [t.id] });
    // Per column, state, day and status: the rows' bounds hold every ticket counted there (a
    // NULL block's) or are 4294967295 and 0 (a time's, which never narrow a NULL block's bounds).
    const loose = await query<Record<string, number>>(`
      SELECT c.col, c.day, c.status_id, MIN(c.lo_id) AS lo, MAX(c.hi_id) AS hi, k.lo AS tlo, k.hi AS thi FROM ticket_day_counts c JOIN (
        ${ORDER_DAY_COLUMNS.map((col, i) => `SELECT ${2 + i} AS col, IF(deleted_at IS NULL, 0, 1) AS state, created_at DIV ${DAY} AS day, status_id, MIN(id) AS lo, MAX(id) AS hi
          FROM tickets WHERE merged_into_id IS NULL AND ${col} IS NULL GROUP BY 2, 3, 4`).join(' UNION ALL ')}
      ) k ON k.col = c.col AND k.state = c.state AND k.day = c.day AND k.status_id = c.status_id
      GROUP BY c.col, c.state, c.day, c.status_id HAVING MIN(c.lo_id) > MIN(k.lo) OR MAX(c.hi_id) < MAX(k.hi)`);
    expect(loose).toEqual([]);
    const times = await query<{ lo: number; hi: number }>('SELECT MIN(lo_id) AS lo, MAX(hi_id) AS hi FROM ticket_day_counts WHERE col >= 2 AND day >= 65536');
    expect(times.map((r) => [Number(r.lo), Number(r.hi)])).toEqual([[4294967295, 0]]);
    const nulls = await query<{ n: number }>('SELECT COUNT(*) AS n FROM ticket_day_counts WHERE col = 3 AND day < 65536 AND lo_id <= ? AND hi_id >= ?', [t.id, t.id]);
    expect(Number(nulls[0].n)).toBeGreaterThan(0);
  });

  it('reads a positioned page as a range of the order\'s index, in its order (no filesort), both ways, in the NULL block and among the times', async () => {
    // Created on days of their own after every other ticket's (in a database other tests share,
    // tickets made with an old created_at put ids out of day order: no bound there), in day order;
    // made first on a past day of their own (today's bounds would keep their ids).
    const F = (Math.floor(Date.now() / 1000 / DAY) + 27200 + Math.floor(Math.random() * 800)) * DAY;
    const P = (5000 + Math.floor(Math.random() * 3000)) * DAY;
    const made: number[] = [];
    for (let i = 0; i < 8; i++) {
      const t = await f.ticket({ created_at: P + i });
      const time = i % 2 === 0 ? null : F - i * 3 * DAY;
      await sequelize().query('UPDATE tickets SET created_at = ?, last_reply_time = ?, due_time = ?, resolved_time = ? WHERE id = ?', {
        replacements: [F + i * DAY, time, time, time, t.id],
      });
      made.push(t.id);
    }
    const plans: string[] = [];
    try {
      await positioning(async () => {
        for (const order_column of ORDER_DAY_COLUMNS) {
          for (const order_direction of ['asc', 'desc']) {
            const at = await ordered(order_column, order_direction);
            const nulls = new Set((await query<{ id: number }>(`SELECT id FROM tickets WHERE ${order_column} IS NULL`)).map((r) => Number(r.id)));
            const kinds = new Set<string>();
            for (const start of [...new Set(made.map((id) => at.indexOf(id) + 1))].filter((n) => n >= 2)) {
              const { statements } = await capture(() => api.get(BASE, { order_column, order_direction, start, limit: 3 }));
              const page = statements.find((s: Statement) => withoutSwitches(s.sql).startsWith('SELECT STRAIGHT_JOIN t.* FROM (SELECT'))!;
              if ((page.params as Record<string, unknown>).pageEdge === undefined) continue;
              kinds.add(nulls.has(at[start - 1]) ? 'nulls' : 'times');
              const inner = (await query<Record<string, any>>(explainOf(page.sql), page.params as Record<string, unknown>)).find((r) => r.select_type === 'DERIVED')!;
              plans.push(`${order_column} ${order_direction}: ${inner.key} ${inner.type}${/filesort/.test(String(inner.Extra)) ? ' filesort' : ''}`);
            }
            expect({ order_column, order_direction, kinds: [...kinds].sort() }).toEqual({ order_column, order_direction, kinds: ['nulls', 'times'] });
          }
        }
      });
      for (const plan of plans) expect(plan).toBe(plan.replace(/: .*/, `: tickets_list_${plan.split(' ')[0]} range`));
    } finally {
      await sequelize().query('DELETE FROM tickets WHERE id IN (?)', { replacements: [made] });
    }
  });
});

describe('a deep page in the customer order (migration 062)', () => {
  const pages = deepPages(api, BASE);
  const { positioning } = pages;

  it('starts at a customer\'s first ticket (last, descending), gives the database\'s pages both ways, unfiltered and by status, through moves and a fold, as a range of the customer index', async () => {
    // Customers made now: the largest user ids, last ascending, first descending.
    const customers = [await f.user(), await f.user(), await f.user(), await f.user()];
    const made: number[] = [];
    for (const [k, tickets] of [3, 1, 4, 2].entries()) {
      for (let i = 0; i < tickets; i++) {
        const t = await f.ticket({ user: customers[k].id });
        await sequelize().query('UPDATE tickets SET status_id = ? WHERE id = ?', { replacements: [ctx.statuses[(k + i) % 2], t.id] });
        made.push(t.id);
      }
    }
    const comparePages = () => positioning(async () => {
      for (const status of [undefined, ctx.statuses[1]]) {
        for (const order_direction of ['asc', 'desc']) {
          const q0 = { ...(status ? { status } : {}), order_column: 'user_id', order_direction };
          const at = await ordered('user_id', order_direction, status);
          const { positioned } = await comparePagesAt(pages, q0, at, made);
          expect({ q0, positioned: positioned.length > 0 }).toEqual({ q0, positioned: true });
          // Each at the customer of the page's first ticket.
          for (const { offset, edge } of positioned) {
            const [{ user_id: customer }] = await query<{ user_id: number }>('SELECT user_id FROM tickets WHERE id = ?', [at[offset]]);
            expect({ q0, offset, edge }).toEqual({ q0, offset, edge: Number(customer) });
          }
        }
      }
    });
    try {
      await expectDayCounts(true);
      await comparePages();
      // A ticket to another customer, statuses changed: the counters follow.
      await sequelize().query('UPDATE tickets SET user_id = ? WHERE id = ?', { replacements: [customers[1].id, made[0]] });
      await sequelize().query('UPDATE tickets SET status_id = IF(status_id = ?, ?, ?) WHERE id IN (?)', { replacements: [ctx.statuses[0], ctx.statuses[1], ctx.statuses[0], [made[4], made[5]]] });
      await expectDayCounts(true);
      await comparePages();
      // Folded whatever the day: a customer's rows summed into one, its span's row kept with them
      // (folded as of a "today" no later than these customers' ids: not as past days).
      expect(await foldDayCounters(customers[0].id * DAY)).toBeGreaterThan(0);
      const unfolded = await query<{ n: number }>('SELECT COUNT(*) AS n FROM ticket_day_counts WHERE col = ? AND slot < 8 AND day IN (?)', [CUSTOMER_ORDER_COL, customers.map((c) => c.id)]);
      expect(Number(unfolded[0].n)).toBe(0);
      await expectDayCounts(true);
      await comparePages();
      // The page: a range of the customer index, in its order, both ways.
      await positioning(async () => {
        for (const order_direction of ['asc', 'desc']) {
          const at = await ordered('user_id', order_direction);
          const { statements } = await capture(() => api.get(BASE, { order_column: 'user_id', order_direction, start: at.indexOf(made[3]) + 1, limit: 3 }));
          const page = statements.find((s: Statement) => withoutSwitches(s.sql).startsWith('SELECT STRAIGHT_JOIN t.* FROM (SELECT'))!;
          expect((page.params as Record<string, unknown>).pageEdge).toBe(customers[1].id);
          const inner = (await query<Record<string, any>>(explainOf(page.sql), page.params as Record<string, unknown>)).find((r) => r.select_type === 'DERIVED')!;
          expect({ order_direction, plan: `${inner.key} ${inner.type}${/filesort/.test(String(inner.Extra)) ? ' filesort' : ''}` })
            .toEqual({ order_direction, plan: 'tickets_list_user_id range' });
        }
      });
    } finally {
      await sequelize().query('DELETE FROM tickets WHERE id IN (?)', { replacements: [made] });
    }
  });
});

describe('a deep page in a time order or the customer order beside one other counted filter (migrations 093 and 095) or, in a time order, a pair of them (095)', () => {
  const pages = deepPages(api, BASE);
  const { positioning } = pages;

  it('gives the database\'s pages, positioned by the filter\'s rows (a value, a flag, a flag\'s complement, a pair in a time order; with a status or not), both ways, through moves and a fold', async () => {
    // Days far ahead (not the other tests' days), GAP days apart; customers made now (the largest ids).
    const F = (Math.floor(Date.now() / 1000 / DAY) + 24000 + Math.floor(Math.random() * 1000)) * DAY;
    const P = (5000 + Math.floor(Math.random() * 3000)) * DAY;
    const [{ id: otherPriority }] = await query<{ id: number }>('SELECT id FROM ticket_priorities WHERE id <> ? ORDER BY id LIMIT 1', [ctx.priorityId]);
    const customers = [await f.user(), await f.user(), await f.user()];
    // A second department for a pair (priority and department) whose matches are not the priority's.
    const department = (await f.department()).id;
    const made: number[] = [];
    // Enough of each filter's matches that a page near the start is read from it, not from the far end.
    for (let i = 0; i < 24; i++) {
      const t = await f.ticket({ created_at: P + i, user: customers[(i >> 1) % 3].id });
      // Each time NULL for some tickets, on days of their own (not in id order) for the others;
      // the priority, the lock and the status mixed across them.
      await sequelize().query(
        `UPDATE tickets SET created_at = ?, updated_at = ?, status_id = ?, priority_id = ?, department_id = ?, locked = ?,
           last_reply_time = ?, due_time = ?, resolved_time = ? WHERE id = ?`,
        {
          replacements: [
            F + i * GAP * DAY, F + i * GAP * DAY, ctx.statuses[i % 2], i % 3 === 0 ? otherPriority : ctx.priorityId, i % 5 < 3 ? department : ctx.departmentId, i % 4 === 1 ? 1 : 0,
            i % 4 === 0 ? null : F + ((i * 5) % 9) * GAP * DAY + 7, i % 2 === 0 ? null : F + ((i * 7) % 11) * GAP * DAY, i < 5 ? null : F + (i % 3) * GAP * DAY,
            t.id,
          ],
        },
      );
      made.push(Number(t.id));
    }
    // The filters (with the ticket columns they match), with a status or not: a value, a flag, a
    // flag's complement; a pair (positioned in a time order: the customer order keeps no pair's rows).
    const filters: Array<[Record<string, number>, Record<string, number>, number | undefined]> = [
      [{ priority: otherPriority }, { priority_id: otherPriority }, ctx.statuses[1]],
      [{ locked: 1 }, { locked: 1 }, undefined],
      [{ locked: 0 }, { locked: 0 }, ctx.statuses[1]],
      [{ priority: otherPriority, department }, { priority_id: otherPriority, department_id: department }, undefined],
      [{ department, priority: ctx.priorityId }, { department_id: department, priority_id: ctx.priorityId }, ctx.statuses[0]],
    ];
    const comparePages = () => positioning(async () => {
      for (const [filter, where, status] of filters) {
        for (const order_column of [...ORDER_DAY_COLUMNS, 'user_id']) {
          for (const order_direction of ['asc', 'desc']) {
            const q0 = { ...filter, ...(status ? { status } : {}), order_column, order_direction };
            const at = await ordered(order_column, order_direction, status, where);
            const { positioned } = await comparePagesAt(pages, q0, at, made);
            // A pair in the customer order: the database's pages, read from the nearer end.
            const pairOfCustomers = Object.keys(filter).length > 1 && order_column === 'user_id';
            expect({ q0, positioned: positioned.length > 0 }).toEqual({ q0, positioned: !pairOfCustomers });
          }
        }
      }
    });
    try {
      await expectDayFilterCounts();
      await comparePages();
      // Moved between the rows: a priority, a lock, a time, a customer and a status changed (each
      // alone, a time with a priority in one write, and a priority with a department: a pair both
      // of whose columns changed), a ticket trashed.
      const write = (sql: string, replacements: unknown[]) => sequelize().query(sql, { replacements });
      await write('UPDATE tickets SET priority_id = ? WHERE id = ?', [otherPriority, made[1]]);
      await write('UPDATE tickets SET department_id = ? WHERE id IN (?)', [ctx.departmentId, [made[12], made[15]]]);
      await write('UPDATE tickets SET locked = 1 - locked WHERE id IN (?)', [[made[2], made[5]]]);
      await write('UPDATE tickets SET due_time = IF(due_time IS NULL, ?, NULL), priority_id = ? WHERE id IN (?)', [F + 3 * GAP * DAY, ctx.priorityId, [made[3], made[6]]]);
      await write('UPDATE tickets SET last_reply_time = last_reply_time + ? WHERE id = ?', [40 * DAY, made[7]]);
      await write('UPDATE tickets SET priority_id = IF(priority_id = ?, ?, ?), department_id = IF(department_id = ?, ?, ?) WHERE id IN (?)', [
        otherPriority, ctx.priorityId, otherPriority, department, ctx.departmentId, department, [made[13], made[14], made[17]],
      ]);
      await write('UPDATE tickets SET user_id = ? WHERE id = ?', [customers[2].id, made[8]]);
      await write('UPDATE tickets SET status_id = IF(status_id = ?, ?, ?) WHERE id IN (?)', [ctx.statuses[0], ctx.statuses[1], ctx.statuses[0], [made[9], made[10]]]);
      await write('UPDATE tickets SET deleted_at = ? WHERE id = ?', [F, made[11]]);
      await expectDayFilterCounts();
      await comparePages();
      // Folded (this test's days past, its customers' rows whatever the day): the same pages.
      expect(await foldDayCounters(F + 40 * GAP * DAY)).toBeGreaterThan(0);
      const unfolded = await query<{ n: number }>(
        'SELECT COUNT(*) AS n FROM ticket_day_filter_counts WHERE slot < 8 AND (col = ? AND day IN (?) OR col BETWEEN 2 AND 4 AND day BETWEEN 65536 + ? AND 65536 + ?)',
        [CUSTOMER_ORDER_COL, customers.map((c) => c.id), F / DAY, F / DAY + 40 * GAP],
      );
      expect(Number(unfolded[0].n)).toBe(0);
      // A pair changed again on folded days (their rows may have none for the ticket's slot).
      await write('UPDATE tickets SET priority_id = IF(priority_id = ?, ?, ?), department_id = IF(department_id = ?, ?, ?) WHERE id IN (?)', [
        otherPriority, ctx.priorityId, otherPriority, department, ctx.departmentId, department, [made[13], made[17]],
      ]);
      await expectDayFilterCounts();
      await comparePages();
    } finally {
      await sequelize().query('DELETE FROM tickets WHERE id IN (?)', { replacements: [made] });
    }
  });
});
