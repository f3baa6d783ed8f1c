/**
 * One department's queue by latest activity (`department=<id>&order_column=updated_at`): a range
 * of migration 097's index (src/ticket/tickets/listPage.ts, departmentRange), a status and the
 * other counted filters tested on its entries, first pages and deep pages positioned by the day
 * counters alike, and after an `after_id`. Every page is the database's own ORDER BY's, and the
 * page statement reads that index with no sort; one department and the departments below it (several
 * ranges) and the trash are read as before, the same pages.
 */
import { QueryTypes } from 'sequelize';
import { capture, explainOf, withoutSwitches, type Statement } from '../../bench/capture';
import { DAY } from '../../migrations/026_ticket_day_counts';
import { DEPARTMENT_UPDATED_INDEX } from '../../migrations/097_department_updated_index';
import { TicketPriority } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { useApi } from '../helpers/app';
import { expectList } from '../helpers/envelope';
import { comparePagesAt, deepPages, ordered } from './dayCounterSupport';
import { ids, ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
const BASE = '/api/ticket/ticket';
let ctx: TicketContext;
/** Two priorities, in id order. */
let priorities: number[];
const f = ticketFactories(api, () => ctx);

beforeAll(async () => {
  ctx = await ticketContext();
  priorities = (await TicketPriority.findAll({ order: [['id', 'ASC']] })).map((x) => x.id).slice(0, 2);
});

/** The page statement of a request's statements. */
const pageOf = (statements: Statement[]): Statement => statements.find((s) => withoutSwitches(s.sql).startsWith('SELECT STRAIGHT_JOIN t.* FROM (SELECT'))!;

/** How the page statement reads the tickets (EXPLAIN): each access's index, and whether it sorts. */
async function access(st: Statement): Promise<Array<{ key: unknown; sorts: boolean }>> {
  const plan = await sequelize().query<Record<string, unknown>>(explainOf(st.sql), { replacements: st.params, type: QueryTypes.SELECT });
  return plan.filter((r) => r.table === 'Ticket').map((r) => ({ key: r.key, sorts: /filesort/.test(String(r.Extra)) }));
}

/**
 * `n` tickets of `department`, their `updated_at` on days far in the future (after every other
 * ticket's, spread over several spans of 32 days, two at one second: the id decides), not in id
 * order, of two statuses and two priorities.
 */
async function queue(department: number, n: number): Promise<number[]> {
  const F = (Math.floor(Date.now() / 1000 / DAY) + 21500 + Math.floor(Math.random() * 1000)) * DAY;
  const made: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = await f.ticket({ department });
    const at = F + ((i * 7) % n) * 13 * DAY + i;
    await sequelize().query('UPDATE tickets SET updated_at = ?, status_id = ?, priority_id = ? WHERE id = ?', {
      replacements: [i === 4 ? F : at, ctx.statuses[i % 3 === 1 ? 1 : 0], priorities[i % 2], t.id],
    });
    made.push(t.id);
  }
  return made;
}

describe("one department's tickets in updated_at order (migration 097)", () => {
  const pages = deepPages(api, BASE);

  it('pages through a range of its index, both ways, alone and beside a status or a priority, first pages and positioned deep pages', async () => {
    const department = await f.department();
    const made = await queue(department.id, 12);
    for (const beside of [{}, { status: ctx.statuses[1] }, { priority: priorities[1] }] as Array<Record<string, number>>) {
      for (const order_direction of ['asc', 'desc']) {
        const q0 = { department: department.id, ...beside, order_column: 'updated_at', order_direction };
        const at = await ordered('updated_at', order_direction, beside.status, { department_id: department.id, ...(beside.priority ? { priority_id: beside.priority } : {}) });
        // Read positioned (every page from the second: the day counters' edge) and by skipping: the database's pages.
        const { positioned } = await pages.positioning(() => comparePagesAt(pages, q0, at, made));
        expect({ q0, positioned: positioned.length > 0 }).toEqual({ q0, positioned: true });
        // Where the department is the narrowest of the filters (the status's or priority's matches
        // in all of this database are more), the page statement reads its range, no sort: the first
        // page, and a positioned deep one. Otherwise through the other's index, as before.
        const [[column, value] = ['department_id', department.id]] = Object.entries(beside).map(([k, v]) => [`${k}_id`, v] as const);
        const [{ n: others }] = await sequelize().query<{ n: number }>(
          `SELECT COUNT(*) AS n FROM tickets WHERE ${column} = ? AND deleted_at IS NULL AND merged_into_id IS NULL`, { replacements: [value], type: QueryTypes.SELECT },
        );
        const ranged = column === 'department_id' || made.length < Number(others);
        for (const [start, position] of [[1, false], [Math.ceil(at.length / 2), true]] as const) {
          const asked = { ...q0, start, limit: 3 };
          const read = () => capture(() => api.get(BASE, asked));
          const { statements, result } = position ? await pages.positioning(read) : await read();
          expect({ asked, ids: ids(expectList(result)), count: result.body.count }).toEqual({ asked, ids: at.slice(start - 1, start + 2), count: at.length });
          const page = pageOf(statements);
          expect({ asked, hint: page.sql.includes(`FORCE INDEX (${DEPARTMENT_UPDATED_INDEX})`), edge: (page.params as Record<string, unknown>).pageEdge !== undefined })
            .toEqual({ asked, hint: ranged, edge: position });
          if (ranged) expect({ asked, access: await access(page) }).toEqual({ asked, access: [{ key: DEPARTMENT_UPDATED_INDEX, sorts: false }] });
        }
        // After an `after_id`: the rest of the list from that ticket on, through the same range.
        const after = { ...q0, after_id: at[1], limit: 3 };
        const { statements, result } = await capture(() => api.get(BASE, after));
        expect({ after, ids: ids(expectList(result)) }).toEqual({ after, ids: at.slice(2, 5) });
        expect({ after, hint: pageOf(statements).sql.includes(`FORCE INDEX (${DEPARTMENT_UPDATED_INDEX})`) }).toEqual({ after, hint: ranged });
      }
    }
  });

  it('follows a reply\'s move of updated_at and a change of department', async () => {
    const department = await f.department();
    const made = await queue(department.id, 6);
    const q0 = { department: department.id, order_column: 'updated_at', order_direction: 'desc', limit: 50 };
    // A reply moves the newest of them (days ahead) to now, behind the others; another moves to a department of its own.
    const newest = (await ordered('updated_at', 'desc', undefined, { department_id: department.id }))[0];
    const [{ user_id: customer }] = await sequelize().query<{ user_id: number }>('SELECT user_id FROM tickets WHERE id = ?', { replacements: [newest], type: QueryTypes.SELECT });
    await f.message({ id: newest, user_id: customer });
    const moved = made.find((id) => id !== newest)!;
    const other = await f.department();
    expect((await api.put(`${BASE}/${moved}`, { department: other.id })).status).toBe(200);
    const want = await ordered('updated_at', 'desc', undefined, { department_id: department.id });
    expect(want[want.length - 1]).toBe(newest);
    expect(want).not.toContain(moved);
    const { statements, result } = await capture(() => api.get(BASE, q0));
    expect({ ids: ids(expectList(result)), count: result.body.count }).toEqual({ ids: want, count: 5 });
    expect(pageOf(statements).sql).toContain(`FORCE INDEX (${DEPARTMENT_UPDATED_INDEX})`);
  });

  it('reads a department with those below it, and the trash, as before: the same pages', async () => {
    const parent = await f.department();
    const child = await f.department({ parent_id: parent.id });
    await queue(parent.id, 3);
    await queue(child.id, 3);
    const trashed = await f.ticket({ department: parent.id });
    expect((await api.del(`${BASE}/${trashed.id}`)).status).toBe(200);
    for (const order_direction of ['asc', 'desc']) {
      const tree = (await sequelize().query<{ id: number }>(
        `SELECT id FROM tickets WHERE department_id IN (?, ?) AND deleted_at IS NULL AND merged_into_id IS NULL ORDER BY updated_at ${order_direction}, id ${order_direction}`,
        { replacements: [parent.id, child.id], type: QueryTypes.SELECT },
      )).map((r) => Number(r.id));
      const asked = { department: parent.id, order_column: 'updated_at', order_direction, limit: 50 };
      const { statements, result } = await capture(() => api.get(BASE, asked));
      expect({ asked, ids: ids(expectList(result)), count: result.body.count }).toEqual({ asked, ids: tree, count: 6 });
      expect({ asked, hint: pageOf(statements).sql.includes(DEPARTMENT_UPDATED_INDEX) }).toEqual({ asked, hint: false });
      const inTrash = await capture(() => api.get(BASE, { ...asked, department: child.id, trashed: 1 }));
      expect(ids(expectList(inTrash.result))).toEqual([]);
      const parentTrash = await capture(() => api.get(BASE, { ...asked, trashed: 1 }));
      expect({ asked, ids: ids(expectList(parentTrash.result)), hint: pageOf(parentTrash.statements).sql.includes(DEPARTMENT_UPDATED_INDEX) })
        .toEqual({ asked, ids: [trashed.id], hint: false });
    }
  });
});
