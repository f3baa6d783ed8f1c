/**
 * One tag's tickets (`tag=<id>`, alone or with the list's counted filters; migration 081,
 * src/ticket/tickets/listPage.ts): `count` sums the tag's counters, exact through every way a tag
 * is added and removed, a tagged ticket changes status, priority, department or assignment, goes
 * to the trash and back, is merged and deleted, and through the tag's own delete; never a COUNT of
 * the tag's tickets. The page is the tag's tickets in the list's order, in two statements, past
 * the middle read from the far end; beside other counted filters, a walk of the tag's list or the
 * narrowest filter's index; a saved filter of a tag is that list; several tags are counted from
 * their list and paged by a merge of each one's rows; the migrations go down and up.
 */
import { capture } from '../../bench/capture';
import { linkedCountsSql } from '../../migrations/072_ticket_option_counts';
import { WIDE } from '../../migrations/076_ticket_option_counts_by_filter';
import * as m081 from '../../migrations/081_ticket_tag_counts';
import * as m082 from '../../migrations/082_ticket_tag_list';
import * as m083 from '../../migrations/083_link_list_orders';
import * as m084 from '../../migrations/084_link_list_trash';
import * as m094 from '../../migrations/094_link_list_organisations';
import { Ticket } from '../../src/db/models';
import { departmentsBelow } from '../../src/ticket/tickets/departmentsBelow';
import { sequelize } from '../../src/db/sequelize';
import { unique, useApi } from '../helpers/app';
import { expectList, expectSuccess } from '../helpers/envelope';
import { expectAfterPages, expectLinkListed, ids, numericRows, query, scrambleOrders, ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
const BASE = '/api/ticket/ticket';
let ctx: TicketContext;
const f = ticketFactories(api, () => ctx);

beforeAll(async () => { ctx = await ticketContext(); });

const newTag = async (): Promise<number> => expectSuccess(await api.post('/api/ticket/tag', { name: unique('Tag count') }), 'Successfully created new tag!').id;

/** The tag's tickets, the plain way, in the list's order (`also`: a column's value beside the tag). */
const actual = async (tag: number, trashed: boolean, also: [string, number] | undefined, order: string) => (await query<{ id: number }>(
  `SELECT id FROM tickets WHERE id IN (SELECT ticket_id FROM ticket_tag_links WHERE tag_id = ?) AND merged_into_id IS NULL
     AND deleted_at IS ${trashed ? 'NOT ' : ''}NULL ${also ? `AND ${also[0]} = ?` : ''} ORDER BY ${order}`,
  [tag, ...(also ? [also[1]] : [])],
)).map((r) => Number(r.id));

/** Every order of the tag's list (migrations 082 and 083), the directions taking turns, and the id order both ways. */
const ORDERS: Array<[string, string, string]> = [['id', 'desc', 'id DESC'], ...m083.LINK_ORDER_COLUMNS.map((c, i): [string, string, string] => {
  const d = i % 2 ? 'desc' : 'asc';
  return [c, d, c === 'id' ? `id ${d.toUpperCase()}` : `${c} ${d.toUpperCase()}, id ${d.toUpperCase()}`];
})];

/** The trash's orders checked: every fourth (a range of the list too, migration 084). */
const TRASH_ORDERS = ORDERS.filter((_, i) => i % 4 === 0);

/**
 * Whether the first page (100) of a tag's listed tickets beside another counted filter walks the
 * tag's list: unless the filter's own listed tickets are fewer than the entries the walk reads
 * (the page's share of the tag's tickets: reach × tagged / count, from the nearer end).
 */
async function walksList(tag: number, [name, column, value]: [string, string, number], count: number, reach = Math.min(count, 100)): Promise<boolean> {
  const values = name === 'department' ? await departmentsBelow([value]) : [value];
  const [{ tagged }] = await query<{ tagged: number }>(`SELECT COUNT(*) AS tagged FROM tickets WHERE ${LISTED} AND id IN (SELECT ticket_id FROM ticket_tag_links WHERE tag_id = ?)`, [tag]);
  const [{ matches }] = await query<{ matches: number }>(`SELECT COUNT(*) AS matches FROM tickets WHERE ${LISTED} AND ${column} IN (?)`, [values]);
  return Number(matches) >= (reach * Number(tagged)) / Math.max(count, 1);
}
const LISTED = 'deleted_at IS NULL AND merged_into_id IS NULL';

/** Every tag's count and pages, alone, by status, priority or department, listed and trashed; pages of two past the middle. */
async function check(tags: number[]) {
  const beside: Array<[string, string, number] | undefined> = [
    undefined, ...ctx.statuses.slice(0, 2).map((id) => ['status', 'status_id', id] as [string, string, number]),
    ['priority', 'priority_id', ctx.priorityId], ['department', 'department_id', ctx.departmentId],
  ];
  for (const tag of tags) {
    for (const trashed of [false, true]) {
      for (const also of beside) {
        for (const [order_column, order_direction, order] of trashed ? TRASH_ORDERS : ORDERS) {
          const q = { tag, limit: 100, order_column, order_direction, ...(also ? { [also[0]]: also[2] } : {}), ...(trashed ? { trashed: 1 } : {}) };
          const { statements, result } = await capture(() => api.get(BASE, q));
          const want = await actual(tag, trashed, also && [also[1], also[2]], order);
          expect({ q, count: result.body.count, ids: ids(expectList(result)) }).toEqual({ q, count: want.length, ids: want });
          // The count from the counters, no COUNT: the list's two statements. The page of the tag
          // (and a status), listed, in any order: a range of the list (migrations 082 and 083).
          const own = statements.filter((s) => /FROM ticket_tag_counts|FROM ticket_list_counts|FROM `tickets`|FROM ticket_tag_list|COUNT\(/.test(s.sql));
          const byList = !also || also[0] === 'status' || (!trashed && await walksList(tag, also, want.length));
          expect({
            q, counters: own.some((s) => /FROM ticket_tag_counts/.test(s.sql)), counts: own.filter((s) => /COUNT\(/.test(s.sql)).length, own: own.length,
            byList: own.some((s) => /FROM ticket_tag_list a FORCE INDEX/.test(s.sql)),
          }).toEqual({ q, counters: true, counts: 0, own: 2, byList });
          for (const start of [Math.floor(want.length / 2) + 1, want.length].filter((x) => x >= 1)) {
            const deep = await api.get(BASE, { ...q, start, limit: 2 });
            expect({ q, start, ids: ids(expectList(deep)) }).toEqual({ q, start, ids: want.slice(start - 1, start + 1) });
          }
          // After an id (the first tag's; beside another filter in every third order): the list
          // walked from that ticket on, as the first page (a page of two: its reach).
          if (!trashed && tag === tags[0] && (!also || ORDERS.findIndex((o) => o[2] === order) % 3 === 0)) {
            const walks = !also || also[0] === 'status' || await walksList(tag, also, want.length, 2);
            await expectAfterPages(api, BASE, q, want, order, (sql) => sql.some((st) => /FROM ticket_tag_list a FORCE INDEX/.test(st)) === walks);
          }
        }
      }
    }
  }
}

/** The counters against the links themselves, row by row; the number of rows. */
async function expectFilled(): Promise<number> {
  const columns = ['tag_id', 'state', ...WIDE, 'slot'];
  const counted = await query<Record<string, number>>(`SELECT ${columns.join(', ')}, n FROM ticket_tag_counts WHERE n <> 0 ORDER BY ${columns.join(', ')}`);
  const fromRows = await query<Record<string, number>>(`${linkedCountsSql(m081.TAG_COUNTS, WIDE)} ORDER BY ${columns.join(', ')}`);
  expect(numericRows(counted)).toEqual(numericRows(fromRows));
  expect(await query('SELECT * FROM ticket_tag_counts WHERE n < 0')).toEqual([]);
  await expectLinkListed(m082.TAG_LIST);
  return fromRows.length;
}

describe("one tag's tickets, counted by migration 081", () => {
  it('are counted exactly and listed in order, through tagging, status changes, trash, merge and deletes', async () => {
    const [a, b, c] = [await newTag(), await newTag(), await newTag()];
    const made = [];
    for (let i = 0; i < 9; i++) made.push(await f.ticket({ tag: [[a], [a, b], [c]][i % 3], status: ctx.statuses[i % 2] }));
    for (const [i, t] of made.entries()) {
      // Times in another order than the ids, some due and replied to, some not (NULLs first ascending).
      await sequelize().query('UPDATE tickets SET updated_at = ?, due_time = ?, last_reply_time = ? WHERE id = ?', {
        replacements: [1_700_000_000 + ((i * 5) % 9) * 60, i % 3 ? 1_700_100_000 + ((i * 7) % 9) * 60 : null, i % 4 ? 1_700_200_000 + ((i * 2) % 9) * 60 : null, t.id],
      });
    }
    await scrambleOrders(made.map((t) => t.id), [(await f.user()).id, (await f.user()).id], [ctx.departmentId, (await f.department()).id]);
    const tags = [a, b, c];
    await check(tags);
    // Through the API: tags replaced, a status, a priority, a department and an assignment changed, two tickets to the trash.
    const [department, operator] = [await f.department(), await f.operator()];
    expectSuccess(await api.put(`${BASE}/${made[0].id}`, { tag: [b, c] }), 'Successfully updated the ticket!');
    expectSuccess(await api.put(`${BASE}/${made[3].id}`, { tag: [c], status: ctx.statuses[0] }), 'Successfully updated the ticket!');
    expectSuccess(await api.put(`${BASE}/${made[4].id}`, { status: ctx.statuses[0], department: department.id }), 'Successfully updated the ticket!');
    const [{ id: otherPriority }] = await query<{ id: number }>('SELECT id FROM ticket_priorities WHERE id <> ? ORDER BY id LIMIT 1', [ctx.priorityId]);
    await sequelize().query('UPDATE tickets SET priority_id = ? WHERE id = ?', { replacements: [otherPriority, made[1].id] });
    expectSuccess(await api.put(`${BASE}/${made[6].id}`, { assignedto: [operator.id] }), 'Successfully updated the ticket!');
    expect((await api.del(`${BASE}/${made[5].id}`)).status).toBe(200);
    expect((await api.del(`${BASE}/${made[7].id}`)).status).toBe(200);
    await check(tags);
    // By hand: a ticket out of the trash, a status changed and a link moved to another tag in SQL.
    await Ticket.update({ deleted_at: null }, { where: { id: made[5].id } });
    await sequelize().query('UPDATE tickets SET status_id = ? WHERE id = ?', { replacements: [ctx.statuses[1], made[6].id] });
    await sequelize().query('UPDATE ticket_tag_links SET tag_id = ? WHERE ticket_id = ? AND tag_id = ?', { replacements: [b, made[6].id, a] });
    // Merged (the merged ticket leaves its tags' counts; its tags join the target's) and deleted for good.
    expectSuccess(await api.post(`${BASE}/${made[1].id}/merge`, { ids: [made[2].id] }), 'Successfully updated the ticket!');
    await sequelize().query('DELETE FROM tickets WHERE id = ?', { replacements: [made[8].id] });
    await check(tags);
    expect(await expectFilled()).toBeGreaterThan(0);
    // A tag's delete cascades to its links: its counters go with it, and its list is empty.
    expect((await api.del(`/api/ticket/tag/${c}`)).status).toBe(200);
    expect(await query('SELECT * FROM ticket_tag_counts WHERE tag_id = ?', [c])).toEqual([]);
    await check([a, b, c]);
    await expectFilled();
    // A saved filter of the tag (shared with everyone) is the tag's list: its counters.
    const saved = expectSuccess(await api.postJson('/api/ticket/filter', {
      name: unique('Tagged'), all_groups: true, conditions: [{ type: 0, rules: [{ item: 'tag', operator: 'equals', value: a }] }],
    }), 'Successfully created new filter!');
    const { statements: bySaved, result: savedList } = await capture(() => api.get(BASE, { filter: saved.id, limit: 100 }));
    expect(expectList(savedList) && savedList.body.count).toBe((await actual(a, false, undefined, 'id')).length);
    expect(bySaved.some((s) => /FROM ticket_tag_counts/.test(s.sql))).toBe(true);
    // Two tags (and a status): their links in the tags' list, index only, a ticket of both once. A
    // filter the counters do not hold beside the tag: a COUNT of the matches. Exact either way.
    const [twoTicketTags] = await query<{ id: number; status_id: number }>(
      'SELECT t.id, t.status_id FROM tickets t WHERE (SELECT COUNT(*) FROM ticket_tag_links l WHERE l.ticket_id = t.id AND l.tag_id IN (?)) = 2 AND deleted_at IS NULL AND merged_into_id IS NULL', [[a, b]],
    );
    expect(twoTicketTags).toBeDefined();
    // Several tags: when the largest holds most of their entries, its counters and the others'
    // entries not the largest one's (g: eight tickets; d: one of g's, e: one not g's; alone and
    // together), whichever comes first in the request; otherwise the distinct tickets of their
    // entries (a and b).
    const [d, e, g] = [await newTag(), await newTag(), await newTag()];
    for (let i = 0; i < 8; i++) await f.ticket({ tag: i ? [g] : [g, d] });
    await f.ticket({ tag: [e] });
    const several = 'LEFT JOIN ticket_tag_list b FORCE INDEX (ticket_tag_list_id)';
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ tag: `${a},${b}` }, several],
      [{ tag: `${b},${a}` }, several],
      [{ tag: `${g},${d}` }, several],
      [{ tag: `${e},${g}` }, several],
      [{ tag: `${d},${g},${e}` }, several],
      [{ tag: `${a},${b}`, status: twoTicketTags.status_id }, several],
      [{ tag: `${b},${a}`, status: twoTicketTags.status_id }, several],
      // The customer scrambleOrders gave the ticket.
      [{ tag: b, user: (await Ticket.findByPk(made[0].id))!.user_id }, 'COUNT(*)'],
    ];
    for (const [q, counter] of cases) {
      const { statements, result } = await capture(() => api.get(BASE, { ...q, limit: 100 }));
      const [{ n }] = await query<{ n: number }>(
        `SELECT COUNT(*) AS n FROM tickets WHERE id IN (SELECT ticket_id FROM ticket_tag_links WHERE tag_id IN (?))
           AND deleted_at IS NULL AND merged_into_id IS NULL${'user' in q ? ' AND user_id = ?' : ''}${'status' in q ? ' AND status_id = ?' : ''}`,
        [String(q.tag).split(',').map(Number), ...('user' in q ? [q.user] : []), ...('status' in q ? [q.status] : [])],
      );
      expect({ q, count: expectList(result) && result.body.count }).toEqual({ q, count: Number(n) });
      expect(Number(n)).toBeGreaterThan(0);
      expect({ q, counters: statements.some((s) => /FROM ticket_tag_counts/.test(s.sql)), counter: statements.some((s) => s.sql.includes(counter)) })
        .toEqual({ q, counters: counter === several, counter: true });
      if ('user' in q || ![`${a},${b}`, `${d},${g},${e}`].includes(String(q.tag))) continue;
      // The pages of two tags and three, in every order: each tag's first rows of its list merged (UNION).
      for (const [order_column, order_direction, order] of ORDERS) {
        const want = (await query<{ id: number }>(
          `SELECT id FROM tickets WHERE id IN (SELECT ticket_id FROM ticket_tag_links WHERE tag_id IN (?)) AND ${LISTED}${'status' in q ? ' AND status_id = ?' : ''} ORDER BY ${order}`,
          [String(q.tag).split(',').map(Number), ...('status' in q ? [q.status] : [])],
        )).map((r) => Number(r.id));
        const listed = await capture(() => api.get(BASE, { ...q, order_column, order_direction, limit: 100 }));
        expect({ q, order, ids: ids(expectList(listed.result)) }).toEqual({ q, order, ids: want });
        expect({ q, order, merged: listed.statements.some((st) => /FROM ticket_tag_list a FORCE INDEX \(\w+\)\s+WHERE a.tag_id = :key1/.test(st.sql)) })
          .toEqual({ q, order, merged: true });
        for (const start of [2, want.length]) {
          const deep = await api.get(BASE, { ...q, order_column, order_direction, start, limit: 2 });
          expect({ q, order, start, ids: ids(expectList(deep)) }).toEqual({ q, order, start, ids: want.slice(start - 1, start + 1) });
        }
        // After an id: each tag's rows of the list past that ticket, merged.
        await expectAfterPages(api, BASE, { ...q, order_column, order_direction }, want, order,
          (sql) => sql.some((st) => /FROM ticket_tag_list a FORCE INDEX \(\w+\)\s+WHERE a.tag_id = :key1/.test(st)));
      }
    }
  });

  it("beside other counted filters: the tag's list walked, each ticket tested, or the narrowest filter's index when it holds fewer tickets", async () => {
    const tag = await newTag();
    const parent = await f.department();
    const child = await f.department({ parent_id: parent.id });
    const operator = await f.operator();
    const made = [];
    for (let i = 0; i < 8; i++) {
      made.push(await f.ticket({ tag: [tag], status: ctx.statuses[i % 2], ...(i === 3 ? { department: child.id } : {}), ...(i === 5 ? { assignedto: [operator.id] } : {}) }));
    }
    for (const [i, t] of made.entries()) {
      await sequelize().query('UPDATE tickets SET updated_at = ? WHERE id = ?', { replacements: [1_700_000_000 + ((i * 3) % 8) * 60, t.id] });
    }
    // Untagged tickets of the priority, unassigned: those filters hold more tickets than the tag, whatever ran before.
    for (let i = 0; i < 10; i++) await f.ticket({ status: ctx.statuses[i % 2] });
    const inParent = [parent.id, child.id];
    const inContext = await departmentsBelow([ctx.departmentId]);
    /** The tag's list walked, the other filters tested on its own rows (its copies: migration 083), or on each entry's ticket. */
    const onList = (column: string) => new RegExp(`FROM ticket_tag_list a FORCE INDEX \\(ticket_tag_list_\\w+\\)\\s+WHERE a\\.tag_id = :key AND a\\.listed = :listed( AND a\\.status_id IN \\(:statuses\\))? AND \\(*1 = 1 AND \\(+${column} `);
    const onTicket = /FROM ticket_tag_list a FORCE INDEX \(ticket_tag_list_\w+\)\s+WHERE [^]* AND a\.ticket_id IN \(SELECT `Ticket`\.`id`/;
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      // The department (with the one below it) holds one ticket, fewer than the walk reads: its index.
      [{ department: parent.id }, `department_id IN (${inParent})`, /FORCE INDEX \(tickets_list_department_id\)/],
      [{ department: parent.id, status: ctx.statuses[1] }, `department_id IN (${inParent}) AND status_id = ${ctx.statuses[1]}`, /FORCE INDEX \(tickets_list_department_id\)/],
      // A priority, a department with a brand, and the unassigned hold more tickets than the tag:
      // the tag's list, walked; the unassigned (no copy in the list) tested on the ticket.
      [{ priority: ctx.priorityId, status: ctx.statuses[0] }, `priority_id = ${ctx.priorityId} AND status_id = ${ctx.statuses[0]}`, onList('priority_id')],
      [{ department: ctx.departmentId, brand: ctx.brandId }, `department_id IN (${inContext}) AND brand_id = ${ctx.brandId}`, onList('department_id')],
      [{ assigned: -1 }, 'id NOT IN (SELECT ticket_id FROM ticket_assignees)', onTicket],
      [{ assigned: -1, priority: ctx.priorityId }, `id NOT IN (SELECT ticket_id FROM ticket_assignees) AND priority_id = ${ctx.priorityId}`, onTicket],
    ];
    for (const [beside, sql, way] of cases) {
      for (const [order_column, order_direction, order] of [['updated_at', 'desc', 'updated_at DESC, id DESC'], ['id', 'asc', 'id ASC'], ['subject', 'asc', 'subject ASC, id ASC']]) {
        const q = { tag, ...beside, order_column, order_direction, limit: 100 };
        const want = (await query<{ id: number }>(
          `SELECT id FROM tickets WHERE ${LISTED} AND id IN (SELECT ticket_id FROM ticket_tag_links WHERE tag_id = ?) AND ${sql} ORDER BY ${order}`, [tag],
        )).map((r) => Number(r.id));
        expect(want.length).toBeGreaterThan(0);
        const { statements, result } = await capture(() => api.get(BASE, q));
        expect({ q, count: result.body.count, ids: ids(expectList(result)) }).toEqual({ q, count: want.length, ids: want });
        const own = statements.filter((st) => /FROM ticket_tag_counts|FROM `tickets`|FROM ticket_tag_list|COUNT\(/.test(st.sql));
        expect({ q, own: own.length, counts: own.filter((st) => /COUNT\(/.test(st.sql)).length, way: own.some((st) => way.test(st.sql)) })
          .toEqual({ q, own: 2, counts: 0, way: true });
        for (const start of [Math.floor(want.length / 2) + 1, want.length]) {
          const deep = await api.get(BASE, { ...q, start, limit: 2 });
          expect({ q, start, ids: ids(expectList(deep)) }).toEqual({ q, start, ids: want.slice(start - 1, start + 1) });
        }
      }
    }
  });

  it('migration 082 goes down (table and triggers gone) and up again (the list filled from the links, then kept)', async () => {
    const qi = sequelize().getQueryInterface();
    const tag = await newTag();
    await f.ticket({ tag: [tag] });
    // 083, 084 and 094 add to 082's table: down all four, and up all four.
    await m094.down(qi);
    await m084.down(qi);
    await m083.down(qi);
    await m082.down(qi);
    expect(await query("SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'ticket_tag_list'")).toEqual([]);
    expect(await query("SELECT 1 FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME LIKE '%tag%\\_list\\_%'")).toEqual([]);
    const t = await f.ticket({ tag: [tag] });
    await m082.up(qi);
    await m083.up(qi);
    await m084.up(qi);
    await m094.up(qi);
    await expectLinkListed(m082.TAG_LIST);
    expectSuccess(await api.put(`${BASE}/${t.id}`, { status: ctx.statuses[1] }), 'Successfully updated the ticket!');
    await expectLinkListed(m082.TAG_LIST);
    const page = await api.get(BASE, { tag, order_column: 'updated_at', order_direction: 'desc' });
    expect(expectList(page).length).toBe(2);
  });

  it('migration 081 goes down (table and triggers gone) and up again (counts filled from the links, then kept)', async () => {
    const qi = sequelize().getQueryInterface();
    const own = async () => (await query<{ t: string }>(
      "SELECT TRIGGER_NAME AS t FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME LIKE '%tag%\\_counts\\_%'",
    )).length;
    const tag = await newTag();
    await f.ticket({ tag: [tag], status: ctx.statuses[0] });
    await m081.down(qi);
    expect(await own()).toBe(0);
    expect(await query("SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'ticket_tag_counts'")).toEqual([]);
    // Tagged while the counters are gone: counted by the fill.
    const t = await f.ticket({ tag: [tag], status: ctx.statuses[1] });
    await m081.up(qi);
    expect(await own()).toBe(6);
    expect(await expectFilled()).toBeGreaterThan(0);
    expect((await api.get(BASE, { tag })).body.count).toBe(2);
    expectSuccess(await api.put(`${BASE}/${t.id}`, { status: ctx.statuses[0] }), 'Successfully updated the ticket!');
    expect((await api.get(BASE, { tag, status: ctx.statuses[0] })).body.count).toBe(2);
    await expectFilled();
  });
});
