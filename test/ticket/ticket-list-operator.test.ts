/**
 * One operator's tickets (`assigned=<operator>`, alone or with `status`; migrations 029 and 030,
 * src/ticket/tickets/listPage.ts): `count` sums the operator's counters, exact through every way a
 * ticket is assigned, unassigned, reassigned, changes status, goes to the trash and back, is
 * merged and deleted; the page is the operator's tickets in the list's order, in two statements,
 * by updated_at a range of the operator's rows of 030's `ticket_assignee_list` (kept through the
 * same writes), and so in the orders migration 031 copies (due_time, last_reply_time,
 * priority_id, created_at) and in every other order (083); the migrations go down and up.
 */
import { QueryTypes } from 'sequelize';
import { capture } from '../../bench/capture';
import * as m029 from '../../migrations/029_ticket_assignee_counts';
import * as m030 from '../../migrations/030_ticket_assignee_list';
import * as m031 from '../../migrations/031_ticket_assignee_orders';
import * as m082 from '../../migrations/082_ticket_tag_list';
import * as m083 from '../../migrations/083_link_list_orders';
import * as m084 from '../../migrations/084_link_list_trash';
import * as m094 from '../../migrations/094_link_list_organisations';
import { Ticket, TicketPriority } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { unique, useApi } from '../helpers/app';
import { expectList, expectSuccess } from '../helpers/envelope';
import { expectAfterPages, expectLinkListed, ids, scrambleOrders, ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
const BASE = '/api/ticket/ticket';
let ctx: TicketContext;
const f = ticketFactories(api, () => ctx);
let priorities: number[];

beforeAll(async () => {
  ctx = await ticketContext();
  priorities = (await TicketPriority.findAll({ order: [['id', 'ASC']] })).map((s) => s.id).slice(0, 2);
});

const query = <T extends object>(sql: string, replacements?: unknown[]): Promise<T[]> => sequelize().query<T>(sql, { replacements, type: QueryTypes.SELECT });

/** The operator's tickets, the plain way, in the list's order. */
const actual = async (operator: number, trashed: boolean, status: number | undefined, order: string) => (await query<{ id: number }>(
  `SELECT t.id FROM tickets t JOIN ticket_assignees a ON a.ticket_id = t.id AND a.user_id = ?
   WHERE t.merged_into_id IS NULL AND t.deleted_at IS ${trashed ? 'NOT ' : ''}NULL ${status ? 'AND t.status_id = ?' : ''} ORDER BY ${order}`,
  [operator, ...(status ? [status] : [])],
)).map((r) => Number(r.id));

/** The list's orders checked (column, direction, the same order in SQL): id, and every other order of the operator's list, both ways. */
const ORDERS: Array<[string, string, string]> = [['id', 'asc', 't.id ASC'], ['id', 'desc', 't.id DESC']];
for (const c of m083.LINK_ORDER_COLUMNS.filter((o) => o !== 'id')) ORDERS.push([c, 'desc', `t.${c} DESC, t.id DESC`], [c, 'asc', `t.${c} ASC, t.id ASC`]);
const ORDER_INDEXES = m083.linkListOrders(m030.ASSIGNEE_LIST);
/** The trash's orders checked: every fourth (a range of the list too, migration 084). */
const TRASH_ORDERS = ORDERS.filter((_, i) => i % 4 === 0);

/**
 * Every operator's count and pages (id, and every order of ticket_assignee_list both ways), by
 * status and none, listed and trashed; and pages of two past the middle (read from the far end).
 */
async function check(operators: number[]) {
  for (const operator of operators) {
    for (const trashed of [false, true]) {
      for (const status of [undefined, ...ctx.statuses.slice(0, 2)]) {
        for (const [order_column, order_direction, order] of trashed ? TRASH_ORDERS : ORDERS) {
          const q = { assigned: operator, limit: 100, order_column, order_direction, ...(status ? { status } : {}), ...(trashed ? { trashed: 1 } : {}) };
          const { statements, result } = await capture(() => api.get(BASE, q));
          const want = await actual(operator, trashed, status, order);
          const page = ids(expectList(result));
          expect({ q, count: result.body.count, ids: page }).toEqual({ q, count: want.length, ids: want });
          // The count from the counters, no COUNT; the list's two statements; listed, in every
          // order, the page from the operator's assignee rows in that order (migrations 030, 031, 083).
          const own = statements.filter((s) => /FROM ticket_assignee_counts|FROM ticket_list_counts|FROM `tickets`|FROM ticket_assignee_list a|COUNT\(/.test(s.sql));
          expect({
            q, counters: own.some((s) => /FROM ticket_assignee_counts/.test(s.sql)), counts: own.filter((s) => /COUNT\(/.test(s.sql)).length, own: own.length,
            byAssignment: own.some((s) => s.sql.includes(`FROM ticket_assignee_list a FORCE INDEX (${ORDER_INDEXES.get(order_column)})`)),
          }).toEqual({ q, counters: true, counts: 0, own: 2, byAssignment: true });
          for (const start of [Math.floor(want.length / 2) + 1, want.length].filter((x) => x >= 1)) {
            const deep = await api.get(BASE, { ...q, start, limit: 2 });
            expect({ q, start, ids: ids(expectList(deep)) }).toEqual({ q, start, ids: want.slice(start - 1, start + 1) });
          }
          // After an id (the first operator's; with a status in every third order): a range of
          // the list in that order too.
          if (operator === operators[0] && (!status || ORDERS.findIndex((o) => o[2] === order) % 3 === 0)) {
            const index = `FROM ticket_assignee_list a FORCE INDEX (${ORDER_INDEXES.get(order_column)})`;
            await expectAfterPages(api, BASE, q, want, order, (sql) => sql.some((st) => st.includes(index)));
          }
        }
      }
    }
  }
}

/**
 * Several operators' tickets (`assigned=<a>,<b>`), by status and none, listed and trashed: a
 * ticket of two of them once; listed, the count reads their rows of ticket_assignee_list (030).
 */
async function checkSeveral(operators: number[]) {
  for (const trashed of [false, true]) {
    for (const status of [undefined, ...ctx.statuses.slice(0, 2)]) {
      const q = { assigned: operators.join(','), limit: 100, ...(status ? { status } : {}), ...(trashed ? { trashed: 1 } : {}) };
      const { statements, result } = await capture(() => api.get(BASE, q));
      const want = (await query<{ id: number }>(
        `SELECT DISTINCT t.id FROM tickets t JOIN ticket_assignees a ON a.ticket_id = t.id AND a.user_id IN (?)
         WHERE t.merged_into_id IS NULL AND t.deleted_at IS ${trashed ? 'NOT ' : ''}NULL ${status ? 'AND t.status_id = ?' : ''} ORDER BY t.id`,
        [operators, ...(status ? [status] : [])],
      )).map((r) => Number(r.id));
      expect({ q, count: result.body.count, ids: ids(expectList(result)) }).toEqual({ q, count: want.length, ids: want });
      expect({ q, fromList: statements.some((st) => st.sql.includes('LEFT JOIN ticket_assignee_list b FORCE INDEX (ticket_assignee_list_id)')) }).toEqual({ q, fromList: true });
      // After an id, listed: each operator's rows of the list past that ticket, merged.
      if (!trashed) await expectAfterPages(api, BASE, q, want, 't.id ASC', (sql) => sql.some((st) => /FROM ticket_assignee_list a FORCE INDEX \(\w+\)\s+WHERE a.user_id = :key1/.test(st)));
    }
  }
}

/** The counters (029) and the list (030) against the assignments and their tickets. */
async function expectFilled() {
  const counted = await query<Record<string, number>>(
    'SELECT user_id, state, status_id, SUM(n) AS n FROM ticket_assignee_counts GROUP BY 1, 2, 3 HAVING SUM(n) <> 0 ORDER BY 1, 2, 3',
  );
  const fromRows = await query<Record<string, number>>(
    `SELECT a.user_id, IF(t.deleted_at IS NULL, 0, 1) AS state, t.status_id, COUNT(*) AS n FROM ticket_assignees a JOIN tickets t ON t.id = a.ticket_id
     WHERE t.merged_into_id IS NULL GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
  );
  const rows = (list: Array<Record<string, number | null>>) => list.map((r) => Object.values(r).map((v) => (v === null ? null : Number(v))));
  expect(rows(counted)).toEqual(rows(fromRows));
  // Migrations 030, 031 and 083's list: a row per assignee row, with its ticket's state, status and
  // the columns of its orders.
  await expectLinkListed(m030.ASSIGNEE_LIST);
  return fromRows.length;
}

describe('one operator\'s tickets, counted by migration 029', () => {
  it('are counted exactly and listed in order, through assignment, status, trash, merge and delete', async () => {
    const [a, b, c] = [await f.operator(), await f.operator(), await f.operator()];
    const made = [];
    for (let i = 0; i < 8; i++) {
      const assignedto = [[a.id], [b.id], [a.id, b.id], []][i % 4];
      made.push(await f.ticket({ status: ctx.statuses[i % 2], assignedto }));
    }
    // Times and priorities of their own, out of id order, some due and reply times NULL, ties
    // among the priorities (by hand: the copies follow by trigger).
    const at = (i: number, step: number) => 1_700_000_000 + ((i * step) % 8) * 60;
    for (const [i, t] of made.entries()) {
      await sequelize().query('UPDATE tickets SET updated_at = ?, due_time = ?, last_reply_time = ?, priority_id = ?, created_at = ? WHERE id = ?', {
        replacements: [at(i, 5), i % 3 === 0 ? null : at(i, 3), i % 4 === 1 ? null : at(i, 7), priorities[i % 2], at(i + 1, 3) - 86_400, t.id],
      });
    }
    await scrambleOrders(made.map((t) => t.id), [(await f.user()).id, (await f.user()).id], [ctx.departmentId, (await f.department()).id]);
    const ops = [a.id, b.id, c.id];
    await check(ops);
    await checkSeveral(ops);
    await checkSeveral([...ops].reverse());
    // Reassigned, unassigned and assigned through the API; status changed; one to the trash.
    expectSuccess(await api.put(`${BASE}/${made[0].id}`, { assignedto: [b.id, c.id] }), 'Successfully updated the ticket!');
    expectSuccess(await api.put(`${BASE}/${made[2].id}`, { assignedto: [] }), 'Successfully updated the ticket!');
    expectSuccess(await api.put(`${BASE}/${made[3].id}`, { assignedto: [a.id], status: ctx.statuses[0] }), 'Successfully updated the ticket!');
    expectSuccess(await api.put(`${BASE}/${made[4].id}`, { status: ctx.statuses[1] }), 'Successfully updated the ticket!');
    expect((await api.del(`${BASE}/${made[5].id}`)).status).toBe(200);
    await check(ops);
    await checkSeveral(ops);
    // By hand: an assignment moved to another operator and ticket, a ticket out of the trash, a
    // status changed in SQL.
    await sequelize().query('UPDATE ticket_assignees SET user_id = ?, ticket_id = ? WHERE ticket_id = ? AND user_id = ?', { replacements: [c.id, made[6].id, made[1].id, b.id] });
    await Ticket.update({ deleted_at: null }, { where: { id: made[5].id } });
    await sequelize().query('UPDATE tickets SET status_id = ? WHERE id = ?', { replacements: [ctx.statuses[0], made[6].id] });
    expect((await api.del(`${BASE}/${made[7].id}`)).status).toBe(200);
    await check(ops);
    await checkSeveral(ops);
    // Merged (the merged ticket leaves every operator's count) and deleted for good (its
    // assignments go by cascade, which runs no trigger).
    expectSuccess(await api.post(`${BASE}/${made[3].id}/merge`, { ids: [made[0].id] }), 'Successfully updated the ticket!');
    await sequelize().query('DELETE FROM tickets WHERE id = ?', { replacements: [made[4].id] });
    await sequelize().query('UPDATE tickets SET updated_at = updated_at - 3600, due_time = NULL, last_reply_time = 1600000000 WHERE id = ?', { replacements: [made[6].id] });
    expectSuccess(await api.put(`${BASE}/${made[1].id}`, { priority: priorities[1 - priorities.indexOf(made[1].priority_id ?? priorities[0])] ?? priorities[0] }), 'Successfully updated the ticket!');
    await check(ops);
    await checkSeveral(ops);
    expect(await expectFilled()).toBeGreaterThan(0);
    // An operator's delete touches the tickets they were assigned to (updated_at moves) in a
    // statement that reads ticket_assignees: the list's rows follow (a trigger that wrote
    // ticket_assignees itself would fail that statement, MariaDB's error 1442).
    await sequelize().query('UPDATE tickets SET updated_at = 1600000000 WHERE id IN (?)', { replacements: [made.map((t) => t.id)] });
    expect((await api.del(`/api/user/operator/${c.id}`)).status).toBe(200);
    await check([a.id, b.id]);
    await checkSeveral([a.id, b.id]);
    await expectFilled();
    // Two operators: a ticket of both counted once (a COUNT of the matches).
    const both = await api.get(BASE, { assigned: `${a.id},${b.id}`, limit: 100 });
    const [{ n }] = await query<{ n: number }>(
      'SELECT COUNT(DISTINCT t.id) AS n FROM tickets t JOIN ticket_assignees x ON x.ticket_id = t.id WHERE x.user_id IN (?) AND t.deleted_at IS NULL AND t.merged_into_id IS NULL',
      [[a.id, b.id]],
    );
    expect(expectList(both) && both.body.count).toBe(Number(n));
    expect(Number(n)).toBeGreaterThan(0);
  });

  it('migration 030 goes down (table and triggers gone) and up again (rows filled from the assignments, then kept)', async () => {
    const qi = sequelize().getQueryInterface();
    const table = async () => (await query("SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'ticket_assignee_list'")).length;
    const op = await f.operator();
    const first = await f.ticket({ assignedto: [op.id] });
    // 031, 083, 084 and 094 add to 030's table: down all five, and up all five.
    await m094.down(qi);
    await m084.down(qi);
    await m083.down(qi);
    await m031.down(qi);
    await m030.down(qi);
    expect(await table()).toBe(0);
    // Assigned and updated while the copies are gone: filled by the migration.
    const second = await f.ticket({ assignedto: [op.id] });
    await sequelize().query('UPDATE tickets SET updated_at = ? WHERE id = ?', { replacements: [1_600_000_000, second.id] });
    await m030.up(qi);
    await m031.up(qi);
    await m083.up(qi);
    await m084.up(qi);
    await m094.up(qi);
    expect(await table()).toBe(1);
    await expectFilled();
    const byUpdate = async () => ids(expectList(await api.get(BASE, { assigned: op.id, order_column: 'updated_at', order_direction: 'asc' })));
    expect(await byUpdate()).toEqual([second.id, first.id]);
    await sequelize().query('UPDATE tickets SET updated_at = ? WHERE id = ?', { replacements: [1_500_000_000, first.id] });
    expect(await byUpdate()).toEqual([first.id, second.id]);
    await expectFilled();
  });

  it('migration 031 goes down (its columns gone, 030\'s triggers keep the rest) and up again (filled, then kept)', async () => {
    const qi = sequelize().getQueryInterface();
    const columns = async () => (await query<{ c: string }>(
      "SELECT COLUMN_NAME AS c FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'ticket_assignee_list' ORDER BY ORDINAL_POSITION",
    )).map((r) => r.c);
    const op = await f.operator();
    const first = await f.ticket({ assignedto: [op.id] });
    await m094.down(qi);
    await m084.down(qi);
    await m083.down(qi);
    await m031.down(qi);
    expect(await columns()).toEqual(['user_id', 'ticket_id', 'listed', 'status_id', 'updated_at']);
    // Assigned, and due times moved, while the copies are gone; 030's triggers still keep updated_at.
    const second = await f.ticket({ assignedto: [op.id] });
    await sequelize().query('UPDATE tickets SET due_time = ?, updated_at = ? WHERE id = ?', { replacements: [1_600_000_000, 1_600_000_000, second.id] });
    await sequelize().query('UPDATE tickets SET due_time = ? WHERE id = ?', { replacements: [1_650_000_000, first.id] });
    const [{ n }] = await query<{ n: number }>('SELECT COUNT(*) AS n FROM ticket_assignee_list WHERE ticket_id = ? AND updated_at = 1600000000', [second.id]);
    expect(Number(n)).toBe(1);
    await m031.up(qi);
    expect(await columns()).toEqual(['user_id', 'ticket_id', 'listed', 'status_id', 'updated_at', ...m031.ASSIGNEE_ORDER_COLUMNS]);
    await m083.up(qi);
    await m084.up(qi);
    await m094.up(qi);
    await expectFilled();
    const byDue = async () => ids(expectList(await api.get(BASE, { assigned: op.id, order_column: 'due_time', order_direction: 'asc' })));
    expect(await byDue()).toEqual([second.id, first.id]);
    await sequelize().query('UPDATE tickets SET due_time = NULL WHERE id = ?', { replacements: [first.id] });
    expect(await byDue()).toEqual([first.id, second.id]);
    await expectFilled();
  });

  it("migration 083 goes down (its columns gone from both link lists, 031's and 082's triggers keep the rest) and up again (filled, then kept)", async () => {
    const qi = sequelize().getQueryInterface();
    const columns = async (table: string) => (await query<{ c: string }>(
      'SELECT COLUMN_NAME AS c FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION', [table],
    )).map((r) => r.c);
    const op = await f.operator();
    const tag = expectSuccess(await api.post('/api/ticket/tag', { name: unique('Tag 083') }), 'Successfully created new tag!').id;
    const first = await f.ticket({ assignedto: [op.id], tag: [tag], subject: 'Z first' });
    await m094.down(qi);
    await m084.down(qi);
    await m083.down(qi);
    const before = ['listed', 'status_id', 'updated_at', ...m031.ASSIGNEE_ORDER_COLUMNS];
    expect(await columns('ticket_assignee_list')).toEqual(['user_id', 'ticket_id', ...before]);
    expect(await columns('ticket_tag_list')).toEqual(['tag_id', 'ticket_id', ...before]);
    // Made, and a subject changed, while the copies are gone; 031's and 082's triggers keep the rest.
    const second = await f.ticket({ assignedto: [op.id], tag: [tag], subject: 'M second' });
    await sequelize().query('UPDATE tickets SET subject = ?, updated_at = ? WHERE id = ?', { replacements: ['A first', 1_600_000_000, first.id] });
    const [{ n }] = await query<{ n: number }>('SELECT COUNT(*) AS n FROM ticket_tag_list WHERE ticket_id = ? AND updated_at = 1600000000', [first.id]);
    expect(Number(n)).toBe(1);
    await m083.up(qi);
    await m084.up(qi);
    await m094.up(qi);
    expect(await columns('ticket_assignee_list')).toEqual(['user_id', 'ticket_id', ...before, 'number', 'subject', 'resolved_time', 'department_id', 'brand_id', 'channel_id', 'customer_id', 'organisation_id']);
    await expectLinkListed(m030.ASSIGNEE_LIST);
    await expectLinkListed(m082.TAG_LIST);
    const bySubject = async (q: Record<string, unknown>) => ids(expectList(await api.get(BASE, { ...q, order_column: 'subject', order_direction: 'asc' })));
    expect([await bySubject({ assigned: op.id }), await bySubject({ tag })]).toEqual([[first.id, second.id], [first.id, second.id]]);
    expectSuccess(await api.put(`${BASE}/${second.id}`, { subject: '0 second' }), 'Successfully updated the ticket!');
    expect([await bySubject({ assigned: op.id }), await bySubject({ tag })]).toEqual([[second.id, first.id], [second.id, first.id]]);
    await expectLinkListed(m030.ASSIGNEE_LIST);
    await expectLinkListed(m082.TAG_LIST);
  });

  it("migration 084 goes down (the trash's rows back to 0, 083's triggers) and up again (2 for the trash, then kept)", async () => {
    const qi = sequelize().getQueryInterface();
    const op = await f.operator();
    const tag = expectSuccess(await api.post('/api/ticket/tag', { name: unique('Tag 084') }), 'Successfully created new tag!').id;
    const [kept, trashed, later] = [await f.ticket({ assignedto: [op.id], tag: [tag] }), await f.ticket({ assignedto: [op.id], tag: [tag] }), await f.ticket({ assignedto: [op.id], tag: [tag] })];
    expect((await api.del(`${BASE}/${trashed.id}`)).status).toBe(200);
    const states = async () => (await query<{ l: string; t: number; s: number }>(
      "SELECT 'assigned' AS l, ticket_id AS t, listed AS s FROM ticket_assignee_list WHERE ticket_id IN (?) UNION ALL SELECT 'tag', ticket_id, listed FROM ticket_tag_list WHERE ticket_id IN (?) ORDER BY 1, 2",
      [[kept.id, trashed.id, later.id], [kept.id, trashed.id, later.id]],
    )).map((r) => [r.l, Number(r.t), Number(r.s)]);
    const of = (s: [number, number, number]) => ['assigned', 'tag'].flatMap((l) => [[l, kept.id, s[0]], [l, trashed.id, s[1]], [l, later.id, s[2]]]);
    expect(await states()).toEqual(of([1, 2, 1]));
    await m094.down(qi);
    await m084.down(qi);
    expect(await states()).toEqual(of([1, 0, 1]));
    // Trashed while 083's triggers keep the lists: 0, as both the trashed and the merged were.
    expect((await api.del(`${BASE}/${later.id}`)).status).toBe(200);
    expect(await states()).toEqual(of([1, 0, 0]));
    await m084.up(qi);
    await m094.up(qi);
    expect(await states()).toEqual(of([1, 2, 2]));
    await expectLinkListed(m030.ASSIGNEE_LIST);
    await expectLinkListed(m082.TAG_LIST);
    // Then kept: out of the trash, merged into another, the other trashed.
    await Ticket.update({ deleted_at: null }, { where: { id: later.id } });
    expect(await states()).toEqual(of([1, 2, 1]));
    expectSuccess(await api.post(`${BASE}/${kept.id}/merge`, { ids: [later.id] }), 'Successfully updated the ticket!');
    expect(await states()).toEqual(of([1, 2, 0]));
    expect((await api.del(`${BASE}/${kept.id}`)).status).toBe(200);
    expect(await states()).toEqual(of([2, 2, 0]));
    // The trash of the operator and of the tag, from their lists.
    for (const q of [{ assigned: op.id }, { tag }]) {
      const { statements, result } = await capture(() => api.get(BASE, { ...q, trashed: 1, order_column: 'id', order_direction: 'asc' }));
      expect({ q, ids: ids(expectList(result)), count: result.body.count }).toEqual({ q, ids: [kept.id, trashed.id], count: 2 });
      expect(statements.some((st) => /FROM ticket_(assignee|tag)_list a FORCE INDEX/.test(st.sql))).toBe(true);
    }
    await expectLinkListed(m030.ASSIGNEE_LIST);
    await expectLinkListed(m082.TAG_LIST);
  });

  it('migration 029 goes down (table and triggers gone) and up again (counts filled from the assignments, then kept)', async () => {
    const qi = sequelize().getQueryInterface();
    const own = async () => (await query<{ t: string }>("SELECT TRIGGER_NAME AS t FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND (TRIGGER_NAME LIKE 'ticket\\_assignees\\_counts\\_%' OR TRIGGER_NAME LIKE 'tickets\\_assignee\\_counts\\_%')")).length;
    const op = await f.operator();
    await f.ticket({ assignedto: [op.id] });
    await m029.down(qi);
    expect(await own()).toBe(0);
    expect(await query("SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'ticket_assignee_counts'")).toEqual([]);
    // Assigned while the counters are gone: counted by the fill.
    const t = await f.ticket({ assignedto: [op.id], status: ctx.statuses[1] });
    await m029.up(qi);
    expect(await own()).toBe(5);
    expect(await expectFilled()).toBeGreaterThan(0);
    expect((await api.get(BASE, { assigned: op.id })).body.count).toBe(2);
    expectSuccess(await api.put(`${BASE}/${t.id}`, { status: ctx.statuses[0] }), 'Successfully updated the ticket!');
    expect((await api.get(BASE, { assigned: op.id, status: ctx.statuses[0] })).body.count).toBe(2);
    await expectFilled();
  });
});
