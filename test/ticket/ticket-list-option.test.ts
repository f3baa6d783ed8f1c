/**
 * One option of a ticket field (`customfield[<field>]=<option>`, alone or with `status`; migration
 * 072, src/ticket/tickets/listPage.ts): `count` sums the option's counters, exact through every way
 * a ticket's value changes and a ticket is created, changes status, goes to the trash and back, is
 * merged and deleted, and through an option's and a field's delete; never a COUNT of its tickets.
 * The page is the option's tickets in the list's order, past the middle read from the far end; the
 * migration goes down and up.
 */
import { capture } from '../../bench/capture';
import * as m072 from '../../migrations/072_ticket_option_counts';
import * as m073 from '../../migrations/073_unowned_custom_field_values';
import * as m076 from '../../migrations/076_ticket_option_counts_by_filter';
import { Group, Ticket, UserGroup } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { useApi, unique } from '../helpers/app';
import { expectError, expectList, expectSuccess } from '../helpers/envelope';
import { ids, numericRows, query, ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
const BASE = '/api/ticket/ticket';
let ctx: TicketContext;
const f = ticketFactories(api, () => ctx);

beforeAll(async () => { ctx = await ticketContext(); });

/** A ticket field of `type` with `n` options: its id and its options' ids. */
async function field(type: number, n: number): Promise<{ id: number; options: number[] }> {
  const made = expectSuccess(await api.post('/api/ticket/customfield', {
    name: unique(`Option counts ${type}`), type, options: Array.from({ length: n }, (_, i) => ({ value: `Option ${i}` })),
  }), 'Successfully created new custom field!');
  const options = expectList(await api.get(`/api/ticket/customfield/${made.id}/option`, { order_column: 'order' })).map((o) => o.id as number);
  return { id: made.id, options };
}

/** The option's tickets, the plain way (FIND_IN_SET over the field's values), of the ticket columns' values `of`, in the list's order. */
const actual = async (fieldId: number, option: number, trashed: boolean, of: Record<string, number>, order: string) => (await query<{ id: number }>(
  `SELECT id FROM tickets WHERE id IN (SELECT owner_id FROM custom_field_values WHERE field_id = ? AND FIND_IN_SET(?, value) > 0)
     AND merged_into_id IS NULL AND deleted_at IS ${trashed ? 'NOT ' : ''}NULL ${Object.keys(of).map((c) => `AND ${c} = ?`).join(' ')} ORDER BY ${order}`,
  [fieldId, String(option), ...Object.values(of)],
)).map((r) => Number(r.id));

const ORDERS: Array<[string, string, string]> = [['id', 'asc', 'id ASC'], ['id', 'desc', 'id DESC'], ['updated_at', 'desc', 'updated_at DESC, id DESC']];

/** A department besides the installed one (tickets of two departments), made once. */
let otherDepartment: number | undefined;
const secondDepartment = async () => otherDepartment ??= expectSuccess(await api.post('/api/ticket/department', {
  name: unique('Option counts'), brand: [ctx.brandId],
}), 'Successfully created new department!').id as number;

/**
 * The counted filters checked beside an option (migration 076): list parameters and the ticket
 * columns they test (`assigned=-1`: no assignee).
 */
const besides = (): Array<[Record<string, unknown>, Record<string, number>]> => [
  [{}, {}],
  [{ status: ctx.statuses[0] }, { status_id: ctx.statuses[0] }],
  [{ priority: ctx.priorityId }, { priority_id: ctx.priorityId }],
  [{ department: otherDepartment }, { department_id: otherDepartment! }],
  [{ assigned: -1, status: ctx.statuses[1] }, { assigned: 0, status_id: ctx.statuses[1] }],
  [{ locked: 0, department: ctx.departmentId, brand: ctx.brandId }, { locked: 0, department_id: ctx.departmentId, brand_id: ctx.brandId }],
];

/** Every option's count and pages, beside counted filters and none, listed and trashed; pages of two past the middle. */
async function check(fields: Array<{ id: number; options: number[] }>) {
  let seen = 0;
  for (const { id, options } of fields) {
    for (const option of options) {
      for (const trashed of [false, true]) {
        for (const [beside, of] of besides()) {
          for (const [order_column, order_direction, order] of ORDERS) {
            const q = { customfield: { [id]: option }, limit: 100, order_column, order_direction, ...beside, ...(trashed ? { trashed: 1 } : {}) };
            const { statements, result } = await capture(() => api.get(BASE, q));
            const want = await actual(id, option, trashed, of, order);
            seen += want.length;
            // Each filter beside the option narrows it somewhere (the check can tell them apart).
            if (want.length && want.length < (await actual(id, option, trashed, {}, order)).length) narrowed.add(JSON.stringify(beside));
            expect({ q, count: result.body.count, ids: ids(expectList(result)) }).toEqual({ q, count: want.length, ids: want });
            // The count from the counters, no COUNT.
            const own = statements.filter((s) => /FROM ticket_option_counts|FROM ticket_list_counts|COUNT\(/.test(s.sql));
            expect({ q, counters: own.some((s) => /FROM ticket_option_counts/.test(s.sql)), counts: own.filter((s) => /COUNT\(/.test(s.sql)).length })
              .toEqual({ q, counters: true, counts: 0 });
            for (const start of [Math.floor(want.length / 2) + 1, want.length].filter((x) => x >= 1)) {
              const deep = await api.get(BASE, { ...q, start, limit: 2 });
              expect({ q, start, ids: ids(expectList(deep)) }).toEqual({ q, start, ids: want.slice(start - 1, start + 1) });
            }
          }
        }
      }
    }
  }
  expect(seen).toBeGreaterThan(0);
}

/** The filters beside an option that narrowed one of its lists in check (each must, somewhere, for the check to tell it apart). */
const narrowed = new Set<string>();

const KEY = ['field_id', 'option_id', 'state', ...m076.WIDE, 'slot'].join(', ');

/** The counters against the option ids and tickets themselves, for these fields. */
async function expectFilled(fieldIds: number[]): Promise<number> {
  const counted = await query<Record<string, number>>(
    `SELECT ${KEY}, SUM(n) AS n FROM ticket_option_counts WHERE field_id IN (?) GROUP BY ${KEY} HAVING SUM(n) <> 0 ORDER BY ${KEY}`, [fieldIds],
  );
  const fromRows = await query<Record<string, number>>(`SELECT * FROM (${m072.countsSql(m076.WIDE)}) c WHERE field_id IN (?) ORDER BY ${KEY}`, [fieldIds]);
  expect(numericRows(counted)).toEqual(numericRows(fromRows));
  expect(await query('SELECT * FROM ticket_option_counts WHERE n < 0')).toEqual([]);
  return fromRows.length;
}

describe('one option of a ticket field, counted by migration 072', () => {
  it('is counted exactly and listed in order, through value, status, trash, merge and delete changes', async () => {
    const checklist = await field(2, 3);
    const radio = await field(7, 2);
    const fields = [checklist, radio];
    const [a, b] = [await f.user(), await f.user()];
    // Tickets of two priorities and departments, some assigned: each counted filter beside an option narrows it.
    const [{ id: otherPriority }] = await query<{ id: number }>('SELECT id FROM ticket_priorities WHERE id <> ? ORDER BY id LIMIT 1', [ctx.priorityId]);
    const departments = [ctx.departmentId, await secondDepartment()];
    const operator = await f.operator();
    const made = [];
    for (let i = 0; i < 8; i++) {
      const picked = checklist.options.filter((_, j) => (i >> j) % 2 === 1);
      made.push(await f.ticket({
        user: [a.id, b.id][i % 2], status: ctx.statuses[i % 2], priority: i % 3 === 0 ? Number(otherPriority) : ctx.priorityId,
        department: departments[(i >> 1) % 2], ...(i % 4 === 1 ? { assignedto: [operator.id] } : {}),
        customfield: { ...(picked.length ? { [checklist.id]: picked } : {}), [radio.id]: radio.options[i % 2] },
      }));
    }
    for (const [i, t] of made.entries()) {
      await sequelize().query('UPDATE tickets SET updated_at = ? WHERE id = ?', { replacements: [1_700_000_000 + ((i * 5) % 8) * 60, t.id] });
    }
    await check(fields);
    expect([...narrowed].sort()).toEqual(besides().slice(1).map(([beside]) => JSON.stringify(beside)).sort());
    expect(await expectFilled(fields.map((x) => x.id))).toBeGreaterThan(0);

    // Through the API: values changed and cleared, a status changed, two to the trash.
    expectSuccess(await api.put(`${BASE}/${made[1].id}`, { customfield: { [checklist.id]: [checklist.options[1], checklist.options[2]] } }), 'Successfully updated the ticket!');
    expectSuccess(await api.put(`${BASE}/${made[3].id}`, { customfield: { [checklist.id]: [] }, status: ctx.statuses[0] }), 'Successfully updated the ticket!');
    expectSuccess(await api.put(`${BASE}/${made[4].id}`, { status: ctx.statuses[1], priority: Number(otherPriority), department: departments[0] }), 'Successfully updated the ticket!');
    expectSuccess(await api.put(`${BASE}/${made[1].id}`, { assignedto: [] }), 'Successfully updated the ticket!');
    expectSuccess(await api.put(`${BASE}/${made[7].id}`, { assignedto: [operator.id], locked: 1 }), 'Successfully updated the ticket!');
    expect((await api.del(`${BASE}/${made[5].id}`)).status).toBe(200);
    expect((await api.del(`${BASE}/${made[6].id}`)).status).toBe(200);
    await check(fields);
    await expectFilled(fields.map((x) => x.id));

    // Out of the trash through the API and by hand; a status and a value changed in SQL.
    expectSuccess(await api.post(`${BASE}/${made[5].id}/restore`), 'Successfully restored the ticket!');
    await Ticket.update({ deleted_at: null }, { where: { id: made[6].id } });
    await sequelize().query('UPDATE tickets SET status_id = ? WHERE id = ?', { replacements: [ctx.statuses[0], made[7].id] });
    await sequelize().query('UPDATE custom_field_values SET value = ? WHERE field_id = ? AND owner_id = ?', { replacements: [String(radio.options[0]), radio.id, made[7].id] });
    // Merged (the merged ticket leaves its options' counts) and deleted for good.
    expectSuccess(await api.post(`${BASE}/${made[0].id}/merge`, { ids: [made[1].id] }), 'Successfully updated the ticket!');
    await sequelize().query('DELETE FROM tickets WHERE id = ?', { replacements: [made[2].id] });
    await check(fields);
    await expectFilled(fields.map((x) => x.id));

    // A customer's delete takes their tickets, then their values; an option's delete prunes the values.
    expect((await api.del(`/api/user/user/${b.id}`)).status).toBe(200);
    expectSuccess(await api.put(`/api/ticket/customfield/${checklist.id}`, {
      options: [{ id: checklist.options[0], value: 'Option 0' }, { id: checklist.options[2], value: 'Option 2' }],
    }), 'Successfully updated the custom field!');
    await check([{ id: checklist.id, options: [checklist.options[0], checklist.options[2]] }, radio]);
    await expectFilled(fields.map((x) => x.id));

    // A field's delete takes its option ids, so its counts go to 0, and then its counters' rows (migration 073).
    await sequelize().query('DELETE FROM custom_fields WHERE id = ?', { replacements: [radio.id] });
    expect(await expectFilled([radio.id])).toBe(0);
    expect(await query('SELECT * FROM ticket_option_counts WHERE field_id = ?', [radio.id])).toEqual([]);

    // Another filter beside the option: a COUNT of the matches, still exact.
    for (const user of [a.id, a.id, (await f.user()).id]) await f.ticket({ user, customfield: { [checklist.id]: [checklist.options[0]] } });
    for (const q of [{ customfield: { [checklist.id]: checklist.options[0] }, user: a.id }]) {
      const { statements, result } = await capture(() => api.get(BASE, { ...q, limit: 100 }));
      const want = await actual(checklist.id, checklist.options[0], false, {}, 'id');
      const [{ n }] = await query<{ n: number }>(
        `SELECT COUNT(*) AS n FROM tickets WHERE user_id = ? AND deleted_at IS NULL AND merged_into_id IS NULL AND id IN (?)`, [a.id, [0, ...want]],
      );
      expect({ q, count: expectList(result) && result.body.count }).toEqual({ q, count: Number(n) });
      expect(Number(n)).toBeLessThan(want.length);
      expect(Number(n)).toBeGreaterThan(0);
      expect(statements.some((s) => /FROM ticket_option_counts/.test(s.sql))).toBe(false);
    }
  });

  it('migrations 076 and 072 go down (table and triggers gone, 076 and 073 first) and up again (counts filled from the values, then kept)', async () => {
    const qi = sequelize().getQueryInterface();
    const own = async () => (await query<{ t: string }>(
      "SELECT TRIGGER_NAME AS t FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME LIKE '%\\_option\\_counts\\_%'",
    )).length;
    const radio = await field(7, 2);
    await f.ticket({ status: ctx.statuses[0], customfield: { [radio.id]: radio.options[0] } });
    // 073's trigger removes the counters' rows of a deleted field: down before 072, up after it.
    await m076.down(qi);
    await m073.down(qi);
    await m072.down(qi);
    expect(await own()).toBe(0);
    expect(await query("SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'ticket_option_counts'")).toEqual([]);
    // Created while the counters are gone: counted by the fill.
    const t = await f.ticket({ status: ctx.statuses[1], customfield: { [radio.id]: radio.options[0] } });
    await m072.up(qi);
    await m073.up(qi);
    await m076.up(qi);
    expect(await own()).toBe(5);
    expect(await expectFilled([radio.id])).toBeGreaterThan(0);
    expect((await api.get(BASE, { customfield: { [radio.id]: radio.options[0] } })).body.count).toBe(2);
    expectSuccess(await api.put(`${BASE}/${t.id}`, { status: ctx.statuses[0] }), 'Successfully updated the ticket!');
    expect((await api.get(BASE, { customfield: { [radio.id]: radio.options[0] }, status: ctx.statuses[0] })).body.count).toBe(2);
    await expectFilled([radio.id]);
  });
});

describe('a saved filter naming an option (a customfield condition equal to an option id)', () => {
  const rule = (item: string, value: unknown, more: Record<string, unknown> = {}) => ({ item, operator: 'equals', value: String(value), ...more });
  const makeFilter = async (conditions: unknown[], type = 0) => expectSuccess(await api.post('/api/ticket/filter', {
    name: unique('Option filter'), condition_group_type: type, conditions,
  }), 'Successfully created new filter!');
  /** Tickets of the field holding any of `options` (FIND_IN_SET), listed, of the status or not resolved, in id order. */
  const holding = async (fieldId: number, options: number[], where: string, replacements: unknown[] = []) => (await query<{ id: number }>(
    `SELECT id FROM tickets WHERE id IN (SELECT owner_id FROM custom_field_values WHERE field_id = ? AND (${options.map(() => 'FIND_IN_SET(?, value) > 0').join(' OR ')}))
       AND merged_into_id IS NULL AND deleted_at IS NULL AND ${where} ORDER BY id`,
    [fieldId, ...options.map(String), ...replacements],
  )).map((r) => Number(r.id));

  it('is the list of that option: its count and ticket_count from the counters, its page the list\'s; an option deleted since matches nothing', async () => {
    const checklist = await field(2, 3);
    const admin = await f.operator();
    await UserGroup.create({ user_id: admin.id, group_id: (await Group.findOne({ where: { type: 'operator', administrator: 1 } }))!.id });
    const statuses = [ctx.openStatus, ctx.otherStatus, ctx.resolvedStatus];
    for (let i = 0; i < 9; i++) {
      const picked = checklist.options.filter((_, j) => ((i + 1) >> j) % 2 === 1);
      await f.ticket({ status: statuses[i % 3], customfield: picked.length ? { [checklist.id]: picked } : {} });
    }
    for (const option of checklist.options) {
      for (const status of [undefined, ctx.otherStatus]) {
        const filter = await makeFilter([{ rules: [rule('customfield', option, { field_id: checklist.id }), ...(status ? [rule('status', status)] : [])] }]);
        const saved = await capture(() => api.get(BASE, { filter: filter.id, limit: 100 }));
        const want = await holding(checklist.id, [option], status ? 'status_id = ?' : '1 = 1', status ? [status] : []);
        expect(want.length).toBeGreaterThan(0);
        expect({ option, status, count: saved.result.body.count, ids: ids(expectList(saved.result)) }).toEqual({ option, status, count: want.length, ids: want });
        const own = saved.statements.filter((s) => /FROM ticket_option_counts|COUNT\(/.test(s.sql));
        expect({ option, status, counters: own.some((s) => /FROM ticket_option_counts/.test(s.sql)), counts: own.filter((s) => /COUNT\(/.test(s.sql)).length })
          .toEqual({ option, status, counters: true, counts: 0 });
        // ticket_count: the open (not resolved) ones, from the option's counters.
        const shown = await capture(() => api.get(`/api/ticket/filter/${filter.id}`, { operator: admin.id }));
        const open = await holding(checklist.id, [option], `status_id <> ?${status ? ' AND status_id = ?' : ''}`, [ctx.resolvedStatus, ...(status ? [status] : [])]);
        expect({ option, status, ticketCount: expectSuccess(shown.result).ticket_count }).toEqual({ option, status, ticketCount: open.length });
        expect(shown.statements.some((s) => /FROM ticket_option_counts/.test(s.sql))).toBe(true);
        expect(shown.statements.some((s) => /COUNT\(\*\) FROM tickets/.test(s.sql))).toBe(false);
      }
    }

    // An option deleted since: the filter matches nothing (the list's own `customfield` refuses it).
    const gone = checklist.options[1];
    const ofGone = await makeFilter([{ rules: [rule('customfield', gone, { field_id: checklist.id })] }]);
    expect((await api.get(BASE, { filter: ofGone.id })).body.count).toBeGreaterThan(0);
    expectSuccess(await api.put(`/api/ticket/customfield/${checklist.id}`, {
      options: [{ id: checklist.options[0], value: 'Option 0' }, { id: checklist.options[2], value: 'Option 2' }],
    }), 'Successfully updated the custom field!');
    const afterDelete = await api.get(BASE, { filter: ofGone.id });
    expect({ count: afterDelete.body.count, ids: ids(expectList(afterDelete)) }).toEqual({ count: 0, ids: [] });
    expect(expectSuccess(await api.get(`/api/ticket/filter/${ofGone.id}`, { operator: admin.id })).ticket_count).toBe(0);
    expectError(await api.get(BASE, { customfield: { [checklist.id]: gone } }), 422, `The customfield.${checklist.id} must be the id of one of the field's options.`);
  });

  it('runs no statement of its own once kept (the filter, its conditions, the option), and a change of any of them applies to the next request', async () => {
    const radio = await field(7, 2);
    const [o0, o1] = radio.options;
    for (const option of [o0, o0, o1]) await f.ticket({ customfield: { [radio.id]: option } });
    const filter = await makeFilter([{ rules: [rule('customfield', o0, { field_id: radio.id })] }]);
    const listed = async (q: Record<string, unknown>) => {
      await api.get(BASE, q);
      const { statements, result } = await capture(() => api.get(BASE, { ...q, limit: 100 }));
      return { statements: statements.map((s) => s.sql.replace(/:b\d+/g, ':b')), ids: ids(expectList(result)), count: result.body.count as number };
    };
    const definitionReads = (sql: string[]) => sql.filter((x) => /FROM `?(ticket_filters|ticket_filter_conditions|custom_field_options|custom_fields)`?\b/.test(x));
    const own = await listed({ customfield: { [radio.id]: o0 } });
    const saved = await listed({ filter: filter.id });
    const want0 = await holding(radio.id, [o0], '1 = 1');
    expect(want0.length).toBe(2);
    expect(own).toMatchObject({ ids: want0, count: 2 });
    expect(saved).toMatchObject({ ids: want0, count: 2 });
    // Warm, the saved filter is its option's list, statement for statement.
    expect(definitionReads(own.statements)).toEqual([]);
    expect(definitionReads(saved.statements)).toEqual([]);
    expect(saved.statements).toEqual(own.statements);

    // Its condition changed through the API: the next request lists the other option.
    expectSuccess(await api.put(`/api/ticket/filter/${filter.id}`, { conditions: [{ rules: [rule('customfield', o1, { field_id: radio.id })] }] }), 'Successfully updated the filter!');
    expect(await listed({ filter: filter.id })).toMatchObject({ ids: await holding(radio.id, [o1], '1 = 1'), count: 1 });
    // An option added to the field: the list's own `customfield` takes it at once (none of its tickets yet).
    expectSuccess(await api.put(`/api/ticket/customfield/${radio.id}`, {
      options: [{ id: o0, value: 'Option 0' }, { id: o1, value: 'Option 1' }, { value: 'Option 2' }],
    }), 'Successfully updated the custom field!');
    const added = expectList(await api.get(`/api/ticket/customfield/${radio.id}/option`, { order_column: 'order' })).map((o) => o.id as number)[2];
    expect(await listed({ customfield: { [radio.id]: added } })).toMatchObject({ ids: [], count: 0 });
    // A private filter goes with its operator: the next request does not find it.
    const owner = await f.operator();
    await UserGroup.create({ user_id: owner.id, group_id: (await Group.findOne({ where: { type: 'operator', administrator: 1 } }))!.id });
    const mine = expectSuccess(await api.post('/api/ticket/filter', {
      name: unique('Private option filter'), user_id: owner.id, conditions: [{ rules: [rule('customfield', o0, { field_id: radio.id })] }],
    }), 'Successfully created new filter!');
    expect(await listed({ filter: mine.id, filter_operator: owner.id })).toMatchObject({ ids: want0, count: 2 });
    expect((await api.del(`/api/user/operator/${owner.id}`)).status).toBe(200);
    expectError(await api.get(BASE, { filter: mine.id }), 422, 'The selected filter is invalid.');
    // A deleted filter: likewise, and an id that names no filter is not kept (read again each time).
    expect((await api.del(`/api/ticket/filter/${filter.id}`)).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const gone = await capture(() => api.get(BASE, { filter: filter.id }));
      expectError(gone.result, 422, 'The selected filter is invalid.');
      expect(definitionReads(gone.statements.map((x) => x.sql)).length).toBeGreaterThan(0);
    }
  });

  it('other conditions beside options: the same tickets as FIND_IN_SET over the values; a text equals the whole value', async () => {
    const checklist = await field(2, 3);
    const text = expectSuccess(await api.post('/api/ticket/customfield', { name: unique('Option text'), type: 8 }), 'Successfully created new custom field!');
    const [o0, o1, o2] = checklist.options;
    const made = [];
    for (const [picked, value, priority] of [[[o0], 'red,blue', ctx.priorityId], [[o0, o1], 'red', ctx.priorityId], [[o1, o2], String(o0), 0], [[], 'red, blue', 0]] as const) {
      made.push(await f.ticket({ customfield: { ...(picked.length ? { [checklist.id]: picked } : {}), [text.id]: value }, ...(priority ? { priority } : {}) }));
    }
    const mine = made.map((t) => t.id as number);
    // The newest page in id order, read backwards: mine are the newest tickets, and a filter that
    // matches most (`not_equals`) may match more than a page of what other files of the worker made.
    const listed = async (filter: { id: number }) => ids(expectList(await api.get(BASE, { filter: filter.id, limit: 1000, order_direction: 'desc' })))
      .filter((id: number) => mine.includes(id)).reverse();
    const within = async (want: number[]) => want.filter((id) => mine.includes(id));
    // An option and a priority; either of two options; not an option.
    const withPriority = await makeFilter([{ rules: [rule('customfield', o0, { field_id: checklist.id }), rule('priority', ctx.priorityId)] }]);
    expect(await listed(withPriority)).toEqual(await within(await holding(checklist.id, [o0], 'priority_id = ?', [ctx.priorityId])));
    expect(await listed(withPriority)).toEqual([mine[0], mine[1]]);
    const either = await makeFilter([{ type: 1, rules: [rule('customfield', o0, { field_id: checklist.id }), rule('customfield', o2, { field_id: checklist.id })] }]);
    expect(await listed(either)).toEqual(await within(await holding(checklist.id, [o0, o2], '1 = 1')));
    expect(await listed(either)).toEqual([mine[0], mine[1], mine[2]]);
    const without = await makeFilter([{ rules: [{ ...rule('customfield', o1, { field_id: checklist.id }), operator: 'not_equals' }] }]);
    expect(await listed(without)).toEqual([mine[0], mine[3]]);
    // A text field: equals compares the whole value (`red` is not `red,blue`); a value of one id is found by that id.
    const cases: Array<[string, string, number[]]> = [
      ['equals', 'red', [mine[1]]], ['equals', 'red,blue', [mine[0]]], ['equals', 'red, blue', [mine[3]]], ['equals', String(o0), [mine[2]]],
      ['equals', `0${o0}`, []], ['not_equals', 'red', [mine[0], mine[2], mine[3]]],
    ];
    for (const [operator, value, want] of cases) {
      const filter = await makeFilter([{ rules: [{ item: 'customfield', field_id: text.id, operator, value }] }]);
      expect({ operator, value, ids: await listed(filter) }).toEqual({ operator, value, ids: want });
    }
  });
});
