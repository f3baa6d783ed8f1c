/**
 * The ticket list: every filter of the spec, FULLTEXT search, saved filters with an operator, the
 * filters' ticket_count, PAGING and DATES; and the fixed number of statements of the ticket,
 * message, attachment and filter lists whatever the page size.
 */
import {
  Brand, CustomField, CustomFieldOption, Department, DepartmentBrand, DepartmentEmail, DepartmentGroup, Group, OperatorDepartment, Organisation, TicketPriority,
  TicketTag, User, UserEmail, UserGroup,
} from '../../src/db/models';
import { QueryTypes } from 'sequelize';
import { sequelize } from '../../src/db/sequelize';
import { countTicketsMatching } from '../../src/ticket/filter';
import { createTicket } from '../../src/ticket/tickets/service';
import { visibleSet } from '../../src/ticket/tickets/operatorVisibility';
import { Ticket, TicketFilter } from '../../src/db/models';
import { useApi, newEmail, nowSec, unique } from '../helpers/app';
import { expectError, expectList, expectSuccess } from '../helpers/envelope';
import { measureList } from '../helpers/queries';
import { capture } from '../../bench/capture';
import { b64, ids, ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
const BASE = '/api/ticket/ticket';
let ctx: TicketContext;
const f = ticketFactories(api, () => ctx);

/** This file's brand: every list below is narrowed to it. */
let brand: Brand;
let parent: Department;
let child: Department;
let grandchild: Department;
let other: Department;
/** A word no other record holds, and no prefix of another (random letters). */
const word = () => Array.from({ length: 12 }, () => 'abcdefghijklmnopqrstuvwxyz'[Math.floor(Math.random() * 26)]).join('');

const list = async (query: Record<string, unknown>) => ids(expectList(await api.get(BASE, { brand: brand.id, limit: 200, ...query })));

async function dept(parentId: number | null = null): Promise<Department> {
  const d = await Department.create({ name: unique('Dept'), parent_id: parentId });
  await DepartmentBrand.create({ department_id: d.id, brand_id: brand.id });
  await DepartmentEmail.create({ department_id: d.id, brand_id: brand.id, address: newEmail('d') });
  return d;
}
const userOfBrand = (values: Partial<User> = {}) => f.user({ brand_id: brand.id, ...values });
const ticketIn = async (department: Department, extra: Record<string, unknown> = {}) =>
  f.ticket({ brand: brand.id, department: department.id, user: extra.user ?? (await userOfBrand()).id, ...extra });

/** The statements a ticket list runs on the tickets, their counters and the link lists (bound names left out), not a saved filter's own. */
const listStatements = (statements: Array<{ sql: string }>) => statements.map((st) => st.sql.replace(/:b\d+/g, ':b'))
  .filter((sql) => /tickets|_counts|ticket_(tag|assignee)_list/.test(sql) && !/ticket_filter/.test(sql));

/** Runs `work` with the operator's view's set form taken up to `1 / share` of the tickets (operatorVisibility.ts). */
async function withVisibleShare(share: number, work: () => Promise<void>): Promise<void> {
  const kept = visibleSet.share;
  visibleSet.share = share;
  try {
    await work();
  } finally {
    visibleSet.share = kept;
  }
}

/** An operator of `parent` directly and of `grandchild` through an operator group (not of `child`, between them). */
async function operatorOfParentAndGrandchild(): Promise<User> {
  const viaGroup = await Group.create({ type: 'operator', name: unique('Agents') });
  await DepartmentGroup.create({ department_id: grandchild.id, group_id: viaGroup.id });
  const seer = await f.operator();
  await UserGroup.create({ user_id: seer.id, group_id: viaGroup.id });
  await OperatorDepartment.create({ user_id: seer.id, department_id: parent.id });
  return seer;
}

beforeAll(async () => {
  ctx = await ticketContext();
  brand = await Brand.create({ name: unique('ListBrand') });
  parent = await dept();
  child = await dept(parent.id);
  grandchild = await dept(child.id);
  other = await dept();
});

describe('filters', () => {
  it('department includes the departments below it; brand narrows; several ids (mixed)', async () => {
    const [a, b, c, d] = [await ticketIn(parent), await ticketIn(child), await ticketIn(grandchild), await ticketIn(other)];
    expect(await list({ department: parent.id })).toEqual([a.id, b.id, c.id]);
    expect(await list({ department: child.id })).toEqual([b.id, c.id]);
    expect(await list({ department: `${grandchild.id},${other.id}` })).toEqual([c.id, d.id]);
    expect(await list({ department: [grandchild.id, other.id] })).toEqual([c.id, d.id]);
    expect((await list({})).length).toBeGreaterThanOrEqual(4);
    expectError(await api.get(BASE, { department: 'x' }), 422, 'The selected department is invalid.');
  });

  it('department: the departments below it as they are now (the tree a process keeps follows every change of it)', async () => {
    const top = await dept();
    const moved = await dept();
    const [t1, t2] = [await ticketIn(top), await ticketIn(moved)];
    expect(await list({ department: top.id })).toEqual([t1.id]);
    await moved.update({ parent_id: top.id });
    expect(await list({ department: top.id })).toEqual([t1.id, t2.id]);
    const added = await dept(moved.id);
    const t3 = await ticketIn(added);
    expect(await list({ department: top.id })).toEqual([t1.id, t2.id, t3.id]);
    await moved.update({ parent_id: null });
    expect(await list({ department: top.id })).toEqual([t1.id]);
    expect(await list({ department: moved.id })).toEqual([t2.id, t3.id]);
    // A department that does not exist holds no ticket: an empty page, a count of 0.
    const none = await api.get(BASE, { brand: brand.id, department: 2_000_000_000 });
    expect({ page: expectList(none), count: none.body.count }).toEqual({ page: [], count: 0 });
  });

  it('status, priority, user, channel', async () => {
    const user = await userOfBrand();
    const high = (await (await import('../../src/db/models')).TicketPriority.findOne({ where: { name: 'High' } }))!;
    const a = await ticketIn(other, { user: user.id, status: ctx.otherStatus });
    const b = await ticketIn(other, { user: user.id, priority: high.id });
    expect(await list({ user: user.id, status: ctx.otherStatus })).toEqual([a.id]);
    expect(await list({ user: user.id, priority: high.id })).toEqual([b.id]);
    expect(await list({ user: user.id, status: `${ctx.otherStatus},${ctx.openStatus}` })).toEqual([a.id, b.id]);
    // A ticket the mailbox worker opened (the service, channel email).
    const byMail = await sequelize().transaction((t) => createTicket({
      brandId: brand.id, departmentId: other.id, userId: user.id, subject: 'By mail', text: 'Sent by mail.', channel: 'email',
    }, t));
    const email = (await (await import('../../src/db/models')).Channel.findOne({ where: { name: 'Email' } }))!;
    expect(byMail.ticket.channel_id).toBe(email.id);
    expect(byMail.message.channel_id).toBe(email.id);
    expect(await list({ user: user.id, channel: email.id })).toEqual([byMail.ticket.id]);
    expect(byMail.ticket).toMatchObject({ status_id: ctx.openStatus, priority_id: ctx.priorityId });
  });

  it('tag, watching, assigned (with -1 for unassigned), internal, locked', async () => {
    const tag = await TicketTag.create({ name: unique('tag') });
    const [op1, op2] = [await f.operator(), await f.operator()];
    const user = await userOfBrand();
    const a = await ticketIn(other, { user: user.id, tag: [tag.id], assignedto: [op1.id] });
    const b = await ticketIn(other, { user: user.id, watching: [op2.id], assignedto: [op2.id] });
    const c = await ticketIn(other, { user: user.id });
    expect(await list({ user: user.id, tag: tag.id })).toEqual([a.id]);
    expect(await list({ user: user.id, watching: op2.id })).toEqual([b.id]);
    expect(await list({ user: user.id, assigned: op1.id })).toEqual([a.id]);
    expect(await list({ user: user.id, assigned: `${op1.id},${op2.id}` })).toEqual([a.id, b.id]);
    expect(await list({ user: user.id, assigned: -1 })).toEqual([c.id]);
    expect(await list({ user: user.id, assigned: `-1,${op2.id}` })).toEqual([b.id, c.id]);
    const internal = await ticketIn(other, { user: op1.id, internal: 1 });
    expect(await list({ user: op1.id, internal: 1 })).toEqual([internal.id]);
    expect(await list({ user: user.id, internal: 0 })).toEqual([a.id, b.id, c.id]);
    await api.put(`${BASE}/${a.id}`, { locked: 1 });
    expect(await list({ user: user.id, locked: 1 })).toEqual([a.id]);
  });

  it('organisation and user_email (also an additional address)', async () => {
    const org = await Organisation.create({ brand_id: brand.id, name: unique('Org') });
    const member = await userOfBrand({ organisation_id: org.id });
    const loner = await userOfBrand();
    const extra = newEmail('alt');
    await UserEmail.create({ user_id: loner.id, email: extra });
    const a = await ticketIn(other, { user: member.id });
    const b = await ticketIn(other, { user: loner.id });
    expect(await list({ organisation: org.id })).toEqual([a.id]);
    expect(await list({ user_email: member.email })).toEqual([a.id]);
    expect(await list({ user_email: extra })).toEqual([b.id]);
    expect(await list({ user_email: loner.email })).toEqual([b.id]);
  });

  it('customfield: text contains, option ids', async () => {
    const text = await CustomField.create({ kind: 'ticket', name: unique('Serial'), type: 8 });
    const options = await CustomField.create({ kind: 'ticket', name: unique('Product'), type: 5 });
    const [o1, o2] = await CustomFieldOption.bulkCreate([{ field_id: options.id, value: 'Printer' }, { field_id: options.id, value: 'Scanner' }]);
    const user = await userOfBrand();
    const a = await ticketIn(other, { user: user.id, customfield: { [text.id]: 'SN-12345', [options.id]: o1.id } });
    const b = await ticketIn(other, { user: user.id, customfield: { [text.id]: 'SN-99', [options.id]: o2.id } });
    expect(await list({ user: user.id, customfield: { [text.id]: '123' } })).toEqual([a.id]);
    expect(await list({ user: user.id, customfield: { [options.id]: o2.id } })).toEqual([b.id]);
    expectError(await api.get(BASE, { customfield: { 999999: 'x' } }), 422, 'The selected customfield.999999 is invalid.');
    // An option field takes the id of one of its own options, as a write does.
    const another = await CustomField.create({ kind: 'ticket', name: unique('Model'), type: 5 });
    const [foreign] = await CustomFieldOption.bulkCreate([{ field_id: another.id, value: 'X1' }]);
    for (const bad of ['abc', String(foreign.id), '999999999']) {
      expectError(await api.get(BASE, { customfield: { [options.id]: bad } }), 422, `The customfield.${options.id} must be the id of one of the field's options.`);
    }
  });

  it('search: the number, words of the subject and of the messages (FULLTEXT)', async () => {
    const [w1, w2] = [word(), word()];
    const user = await userOfBrand();
    const a = await ticketIn(other, { user: user.id, subject: `Printer ${w1} jammed` });
    const b = await ticketIn(other, { user: user.id, text: `The ${w2} does not start.` });
    const c = await ticketIn(other, { user: user.id });
    await f.message(c, { text: `Also the ${w1} again` });
    expect(await list({ search: w1 })).toEqual([a.id, c.id]);
    expect(await list({ search: w2 })).toEqual([b.id]);
    expect(await list({ search: `${w1} jammed` })).toEqual([a.id]);
    // The start of a word finds it too.
    expect(await list({ search: w2.slice(0, -2) })).toEqual([b.id]);
    expect(await list({ search: b.number })).toEqual([b.id]);
    // Drafts are not searched; words too short to index find nothing.
    await f.message(a, { text: `draft ${word()}zz`, is_draft: 1 });
    expect(await list({ search: 'ab' })).toEqual([]);
  });

  it("search: field terms only are the list's filters (the same tickets, count and statements), however they name their values", async () => {
    const assignee = await f.operator({ email: newEmail('Searched.Op') });
    const customer = await userOfBrand({ email: newEmail('Searched.Customer') });
    const tag = await TicketTag.create({ name: unique('Searched tag') });
    const day = Date.UTC(2023, 4, 10) / 1000;
    const [a, b, c] = [
      await ticketIn(child, { user: customer.id, tag: [tag.id], created_at: day + 100 }),
      await ticketIn(grandchild, { user: customer.id, assignedto: [assignee.id], created_at: day + 86400 + 5 }),
      await ticketIn(parent, { user: customer.id, status: ctx.otherStatus, tag: [tag.id], created_at: day - 1 }),
    ];
    const statusName = (await sequelize().query<{ name: string }>('SELECT name FROM ticket_statuses WHERE id = ?', { replacements: [ctx.otherStatus], type: QueryTypes.SELECT }))[0].name;
    const cases: Array<[string, Record<string, unknown>, number[]]> = [
      [`department:${child.id} status:${ctx.openStatus}`, { department: child.id, status: ctx.openStatus }, [a.id, b.id]],
      [`department:"${child.name}" assigned:none`, { department: child.id, assigned: -1 }, [a.id]],
      [`user:${customer.email.toUpperCase()} status:"${statusName}"`, { user: customer.id, status: ctx.otherStatus }, [c.id]],
      [`assigned:${assignee.email} tag:"${tag.name}"`, { assigned: assignee.id, tag: tag.id }, []],
      [`tag:${tag.id} user:${customer.id}`, { tag: tag.id, user: customer.id }, [a.id, c.id]],
      [`user:${customer.id} created:2023-05-10`, { user: customer.id, created_at_min: day, created_at_max: day + 86399 }, [a.id]],
      [`created>=2023-05-10 created<=2023-05-11 user:${customer.id}`, { user: customer.id, created_at_min: day, created_at_max: day + 2 * 86400 - 1 }, [a.id, b.id]],
      [`user:${customer.id} created<${day}`, { user: customer.id, created_at_max: day - 1 }, [c.id]],
    ];
    for (const [search, params, expected] of cases) {
      for (const extra of [{}, { order_column: 'updated_at', order_direction: 'desc' }, { start: 1, limit: 1 }]) {
        const searched = await capture(() => api.get(BASE, { brand: brand.id, search, ...extra }));
        const asList = await capture(() => api.get(BASE, { brand: brand.id, ...params, ...extra }));
        expect({ search, extra, ids: ids(expectList(searched.result)), count: searched.result.body.count })
          .toEqual({ search, extra, ids: ids(expectList(asList.result)), count: asList.result.body.count });
        expect(listStatements(asList.statements).length).toBeGreaterThan(1);
        expect({ search, extra, statements: listStatements(searched.statements) }).toEqual({ search, extra, statements: listStatements(asList.statements) });
      }
      // This test's tickets (the other tests have theirs in the same departments).
      const found = (await list({ search })).filter((id: number) => [a.id, b.id, c.id].includes(id));
      expect({ search, found }).toEqual({ search, found: expected });
    }
    // A status and a department: counted by the counters, not a COUNT over the tickets.
    const { statements } = await capture(() => api.get(BASE, { search: `status:${ctx.openStatus} department:${child.id}` }));
    expect(statements.some((st) => /COUNT\(\*\)/.test(st.sql))).toBe(false);
    expect(statements.some((st) => /ticket_list_counts/.test(st.sql))).toBe(true);

    // Every term holds, beside the list's own filters too; a name or address of nothing, or no such second, finds nothing.
    const none = async (query: Record<string, unknown>) => {
      const res = await api.get(BASE, { brand: brand.id, ...query });
      return { query, ids: ids(expectList(res)), count: res.body.count };
    };
    for (const query of [
      { search: `status:${ctx.otherStatus}`, user: customer.id, status: ctx.openStatus },
      { search: `status:${ctx.otherStatus} status:${ctx.openStatus}`, user: customer.id },
      { search: `created<2023-05-10 created>2023-05-10`, user: customer.id },
      { search: 'status:"no such status"' },
      { search: `assigned:${newEmail('nobody')}` },
      { search: 'department:0' },
      { search: 'tag:4294967296' },
    ]) {
      expect(await none(query)).toEqual({ query, ids: [], count: 0 });
    }
    // Not filters alone: an exclusion, OR, words; the search's condition still answers.
    expect(await list({ search: `user:${customer.id} -status:${ctx.otherStatus}` })).toEqual([a.id, b.id]);
    expect(await list({ search: `tag:${tag.id} OR assigned:${assignee.id}` })).toEqual([a.id, b.id, c.id]);
    expect(await list({ search: `user:${customer.id} created>=2023-05-10`, created_at_max: day + 86399 })).toEqual([a.id]);
  });

  it('number', async () => {
    const a = await ticketIn(other);
    expect(await list({ number: a.number })).toEqual([a.id]);
    expect(await list({ number: 'nope' })).toEqual([]);
  });

  it('DATES and PAGING', async () => {
    const user = await userOfBrand();
    const t0 = nowSec() - 10000;
    const a = await ticketIn(other, { user: user.id, created_at: t0 });
    const b = await ticketIn(other, { user: user.id, created_at: t0 + 100 });
    const c = await ticketIn(other, { user: user.id, created_at: t0 + 200 });
    expect(await list({ user: user.id, created_at_min: t0 + 100 })).toEqual([b.id, c.id]);
    expect(await list({ user: user.id, created_at_max: t0 + 100 })).toEqual([a.id, b.id]);
    const page = await api.get(BASE, { user: user.id, start: 2, limit: 1, order_column: 'created_at', order_direction: 'desc' });
    expect(ids(expectList(page))).toEqual([b.id]);
    expect(page.body.count).toBe(3);
    expect(await list({ user: user.id, order_column: 'number' })).toEqual([a, b, c].sort((x, y) => x.number.localeCompare(y.number)).map((t) => t.id));
    expectError(await api.get(BASE, { order_column: 'token' }), 422, 'The selected order column is invalid.');
  });
});

describe('saved filters (filter, filter_operator) and ticket_count', () => {
  let op: User;
  let outsider: User;
  let group: Group;
  let user: User;
  let tickets: any[];
  beforeAll(async () => {
    group = await Group.create({ type: 'operator', name: unique('Agents') });
    op = await f.operator();
    await UserGroup.create({ user_id: op.id, group_id: group.id });
    await OperatorDepartment.create({ user_id: op.id, department_id: child.id });
    outsider = await f.operator();
    user = await userOfBrand();
    tickets = [
      await ticketIn(child, { user: user.id, subject: 'Refund please' }),
      await ticketIn(child, { user: user.id, subject: 'Invoice question', status: ctx.otherStatus }),
      await ticketIn(other, { user: user.id, subject: 'Refund elsewhere' }),
      await ticketIn(child, { user: user.id, subject: 'Refund resolved', status: ctx.resolvedStatus }),
    ];
  });

  const makeFilter = async (body: Record<string, unknown>) => expectSuccess(await api.post('/api/ticket/filter', { name: unique('Filter'), ...body }), 'Successfully created new filter!');

  it('a shared filter applies its conditions and ignores the other filters', async () => {
    const filter = await makeFilter({ conditions: [{ rules: [{ item: 'subject', operator: 'begins_with', value: 'Refund' }, { item: 'user', operator: 'equals', value: user.id }] }] });
    expect(await list({ filter: filter.id })).toEqual([tickets[0].id, tickets[2].id, tickets[3].id]);
    // Other filters are ignored when `filter` is set.
    expect(await list({ filter: filter.id, status: 999999, search: 'nothing' })).toEqual([tickets[0].id, tickets[2].id, tickets[3].id]);
    // As an operator: only the tickets that operator sees (the operator's department).
    expect(await list({ filter: filter.id, filter_operator: op.id })).toEqual([tickets[0].id, tickets[3].id]);
    expectError(await api.get(BASE, { filter: 999999 }), 422, 'The selected filter is invalid.');
    expectError(await api.get(BASE, { filter: filter.id, filter_operator: user.id }), 422, 'The selected filter operator is invalid.');
  });

  it('a filter of conditions the list filters by is that list: its count from the counters, whatever its other parameters', async () => {
    const assignee = await f.operator();
    // A customer of this test's own (the other tests count the tickets of `user`).
    const customer = await userOfBrand();
    const [open, openAssigned, otherStatus] = [
      await ticketIn(parent, { user: customer.id, subject: 'Counted open' }),
      await ticketIn(parent, { user: customer.id, subject: 'Counted assigned', assignedto: [assignee.id] }),
      await ticketIn(parent, { user: customer.id, subject: 'Counted other', status: ctx.otherStatus }),
    ];
    const rule = (item: string, value: unknown) => ({ item, operator: 'equals', value });
    const cases: Array<[Array<Record<string, unknown>>, Record<string, unknown>, number]> = [
      [[rule('status', ctx.openStatus), rule('department', parent.id), rule('brand', brand.id)], { status: ctx.openStatus, department: parent.id, brand: brand.id }, 2],
      [[rule('user', customer.id), rule('department', parent.id), rule('assigned', -1)], { user: customer.id, department: parent.id, assigned: -1 }, 2],
      [[rule('assigned', assignee.id), rule('internal', 0), rule('locked', 0)], { assigned: assignee.id, internal: 0, locked: 0 }, 1],
    ];
    for (const [rules, params, mine] of cases) {
      const filter = await makeFilter({ conditions: [{ rules }] });
      for (const extra of [{}, { order_column: 'subject', order_direction: 'desc' }, { start: 2, limit: 1 }]) {
        // The process's hints of this list first (its filters' share, a walk stopped at its bound:
        // listPage.ts), so that both requests plan with the same: the first of the two tried a walk
        // the second then knew to skip, when the worker's database made the walk stop.
        await api.get(BASE, { ...params, ...extra });
        // The list's own filters beside `filter` are ignored; paging and order apply.
        const saved = await capture(() => api.get(BASE, { filter: filter.id, status: 999999, search: 'nothing', ...extra }));
        const asList = await capture(() => api.get(BASE, { ...params, ...extra }));
        expect({ rules, extra, ids: ids(expectList(saved.result)), count: saved.result.body.count })
          .toEqual({ rules, extra, ids: ids(expectList(asList.result)), count: asList.result.body.count });
        // The list's own statements (its counters, index hints and page), after the filter's.
        expect(listStatements(asList.statements).length).toBeGreaterThan(1);
        expect({ rules, extra, statements: listStatements(saved.statements) }).toEqual({ rules, extra, statements: listStatements(asList.statements) });
      }
      if (rules.length === 3 && rules[0].item === 'status') {
        // A status, a department and a brand: the counters answer the count, no COUNT over the tickets.
        const { statements } = await capture(() => api.get(BASE, { filter: filter.id }));
        expect(statements.some((st) => /^SELECT COUNT\(\*\) AS n FROM `tickets`/.test(st.sql))).toBe(false);
        expect(statements.some((st) => /FROM ticket_list_counts/.test(st.sql))).toBe(true);
      }
      expect(ids(expectList(await api.get(BASE, { filter: filter.id, limit: 1000 }))).filter((id: number) => [open.id, openAssigned.id, otherStatus.id].includes(id))).toHaveLength(mine);
    }
    // Two statuses any of which holds: not a list filter of one value, still the filter's tickets.
    const either = await makeFilter({ conditions: [{ type: 1, rules: [rule('status', ctx.openStatus), rule('status', ctx.otherStatus)] }, { rules: [rule('user', customer.id)] }] });
    expect(ids(expectList(await api.get(BASE, { filter: either.id, limit: 1000 }))).filter((id: number) => [open.id, openAssigned.id, otherStatus.id].includes(id)))
      .toEqual([open.id, openAssigned.id, otherStatus.id]);
  });

  it("ticket_count of a filter of counted conditions is a sum of the list's counters for an operator who sees every ticket", async () => {
    const filter = await makeFilter({ conditions: [{ rules: [{ item: 'department', operator: 'equals', value: parent.id }, { item: 'brand', operator: 'equals', value: brand.id }] }] });
    await ticketIn(grandchild);
    await ticketIn(parent, { status: ctx.resolvedStatus });
    const [{ n }] = await sequelize().query<{ n: number }>(
      `SELECT COUNT(*) AS n FROM tickets WHERE department_id IN (?) AND brand_id = ? AND deleted_at IS NULL AND merged_into_id IS NULL AND status_id <> ?`,
      { replacements: [[parent.id, child.id, grandchild.id], brand.id, ctx.resolvedStatus], type: QueryTypes.SELECT },
    );
    expect(Number(n)).toBeGreaterThan(0);
    const admin = await f.operator();
    await UserGroup.create({ user_id: admin.id, group_id: (await Group.findOne({ where: { type: 'operator', administrator: 1 } }))!.id });
    // An operator of every department sees every ticket too.
    const everywhere = await f.operator();
    for (const d of await Department.findAll()) await OperatorDepartment.create({ user_id: everywhere.id, department_id: d.id });
    for (const operator of [admin, everywhere]) {
      const { result, statements } = await capture(() => api.get(`/api/ticket/filter/${filter.id}`, { operator: operator.id }));
      expect(expectSuccess(result).ticket_count).toBe(Number(n));
      expect(statements.some((st) => /SELECT COALESCE\(SUM\(n\), 0\) FROM ticket_list_counts WHERE state = 0 AND/.test(st.sql))).toBe(true);
      expect(statements.some((st) => /SELECT COUNT\(\*\) FROM tickets/.test(st.sql))).toBe(false);
    }
    // An operator of one department: the tickets counted (the department's below it are not theirs).
    expect(expectSuccess(await api.get(`/api/ticket/filter/${filter.id}`, { operator: op.id })).ticket_count).toBe(Number((await sequelize().query<{ n: number }>(
      `SELECT COUNT(*) AS n FROM tickets WHERE department_id = ? AND brand_id = ? AND deleted_at IS NULL AND merged_into_id IS NULL AND status_id <> ?`,
      { replacements: [child.id, brand.id, ctx.resolvedStatus], type: QueryTypes.SELECT },
    ))[0].n));
  });

  it('any-group conditions, and a private filter needs its operator', async () => {
    const filter = await makeFilter({
      user_id: op.id, condition_group_type: 1,
      conditions: [
        { rules: [{ item: 'status', operator: 'equals', value: ctx.otherStatus }, { item: 'user', operator: 'equals', value: user.id }] },
        { rules: [{ item: 'subject', operator: 'contains', value: 'elsewhere' }, { item: 'user', operator: 'equals', value: user.id }] },
      ],
    });
    expectError(await api.get(BASE, { filter: filter.id }), 422, 'The filter operator field is required when the filter is private or shared with some operator groups.');
    expectError(await api.get(BASE, { filter: filter.id, filter_operator: outsider.id }), 422, 'The selected filter is invalid.');
    expect(await list({ filter: filter.id, filter_operator: op.id })).toEqual([tickets[1].id]);
    const mine = expectSuccess(await api.get(`/api/ticket/filter/${filter.id}`, { operator: op.id }));
    // ticket 1 (visible), not ticket 2 (another department): 1.
    expect(mine.ticket_count).toBe(1);
  });

  it('ticket_count: open, untrashed, unmerged tickets the operator sees', async () => {
    const filter = await makeFilter({ groups: [group.id], conditions: [{ rules: [{ item: 'user', operator: 'equals', value: user.id }] }] });
    const count = async (operatorId: number) => {
      const listed = expectList(await api.get('/api/ticket/filter', { operator: operatorId, limit: 1000 }));
      return listed.find((x: any) => x.id === filter.id)?.ticket_count;
    };
    // Tickets 0 and 1 (ticket 3 is resolved, ticket 2 in a department the operator does not see).
    expect(await count(op.id)).toBe(2);
    await expect(countTicketsMatching((await TicketFilter.findByPk(filter.id))!, op.id)).resolves.toBe(2);
    // The outsider does not see the filter (shared with a group they are not in), nor can list by it.
    expect(await count(outsider.id)).toBeUndefined();
    expectError(await api.get(BASE, { filter: filter.id, filter_operator: outsider.id }), 422, 'The selected filter is invalid.');
    const listed = await list({ filter: filter.id, filter_operator: op.id });
    expect(listed).toEqual(expect.arrayContaining([tickets[0].id, tickets[1].id]));
    expect(listed).not.toContain(tickets[2].id);
    const extra = await ticketIn(child, { user: user.id });
    expect(await count(op.id)).toBe(3);
    await api.del(`${BASE}/${extra.id}`);
    expect(await count(op.id)).toBe(2);
    // An administrator sees every department.
    const admin = await f.operator();
    await UserGroup.create({ user_id: admin.id, group_id: (await Group.findOne({ where: { type: 'operator', administrator: 1 } }))!.id });
    await UserGroup.create({ user_id: admin.id, group_id: group.id });
    expect(await count(admin.id)).toBe(3);
  });

  it.each([
    ['as the set of their ids', 1, true],
    ['as a test of each ticket', Number.MAX_SAFE_INTEGER, false],
  ])('an operator sees their departments\' tickets (directly or through a group), those assigned to them and their own; an administrator every one (%s)', async (_form, share, asSet) => {
    // The share picks the condition's form (operatorVisibility.ts); both must list the same tickets.
    await withVisibleShare(share, async () => {
      const s = word();
      const filter = await makeFilter({ conditions: [{ rules: [{ item: 'subject', operator: 'begins_with', value: s }] }] });
      const seer = await operatorOfParentAndGrandchild();
      const made = {
        parent: await ticketIn(parent, { subject: `${s} parent` }),
        // A department below the operator's own is not the operator's.
        child: await ticketIn(child, { subject: `${s} child` }),
        group: await ticketIn(grandchild, { subject: `${s} through a group` }),
        assigned: await ticketIn(other, { subject: `${s} assigned`, assignedto: [seer.id] }),
        own: await ticketIn(other, { subject: `${s} own` }),
        neither: await ticketIn(other, { subject: `${s} neither` }),
      };
      await sequelize().query('UPDATE tickets SET user_id = ? WHERE id = ?', { replacements: [seer.id, made.own.id] });
      const seen = [made.parent.id, made.group.id, made.assigned.id, made.own.id];
      const { result, statements } = await capture(() => api.get(BASE, { filter: filter.id, filter_operator: seer.id }));
      expect(ids(expectList(result))).toEqual(seen);
      const count = statements.find((st) => st.sql.startsWith('SELECT COUNT(*) AS n FROM `tickets`'))!;
      expect(count.sql.includes(') AS seen)')).toBe(asSet);
      expect(expectSuccess(await api.get(`/api/ticket/filter/${filter.id}`, { operator: seer.id })).ticket_count).toBe(seen.length);
      // An operator with nothing of their own sees nothing; an administrator sees every ticket.
      const newcomer = await f.operator();
      expect(await list({ filter: filter.id, filter_operator: newcomer.id })).toEqual([]);
      const admin = await f.operator();
      await UserGroup.create({ user_id: admin.id, group_id: (await Group.findOne({ where: { type: 'operator', administrator: 1 } }))!.id });
      const all = Object.values(made).map((t) => t.id);
      expect(await list({ filter: filter.id, filter_operator: admin.id })).toEqual(all);
      expect(expectSuccess(await api.get(`/api/ticket/filter/${filter.id}`, { operator: admin.id })).ticket_count).toBe(all.length);
    });
  });

  /** The filter's own condition: a priority of the test's own, or an option of a field of its own (its counters by department: migration 076). */
  const ownCondition = async (kind: string): Promise<{ rule: Record<string, unknown>; ticket: Record<string, unknown> }> => {
    if (kind === 'a priority') {
      const priority = await TicketPriority.create({ name: unique('Counted priority'), order: 1000 });
      return { rule: { item: 'priority', operator: 'equals', value: priority.id }, ticket: { priority: priority.id } };
    }
    const made = expectSuccess(await api.post('/api/ticket/customfield', { name: unique('Counted option'), type: 7, options: [{ value: 'One' }, { value: 'Two' }] }),
      'Successfully created new custom field!');
    const [option] = expectList(await api.get(`/api/ticket/customfield/${made.id}/option`, { order_column: 'order' })).map((o) => o.id as number);
    return { rule: { item: 'customfield', field_id: made.id, operator: 'equals', value: String(option) }, ticket: { customfield: { [made.id]: option } } };
  };

  it.each([
    ['the counters of their departments and a count of their own and assigned tickets elsewhere', 'a priority', 1, true],
    ['a count of what they see', 'a priority', Number.MAX_SAFE_INTEGER, false],
    ['the counters of their departments and a count of their own and assigned tickets elsewhere', 'an option', 1, true],
    ['a count of what they see', 'an option', Number.MAX_SAFE_INTEGER, false],
  ])('a filter of counted conditions for an operator who sees part of the tickets (its ticket_count and its list): %s, each ticket once (%s)', async (_form, kind, share, fromCounters) => {
    await withVisibleShare(share, async () => {
      // A condition of this test's own: the filter's tickets are these.
      const own = await ownCondition(kind);
      const filter = await makeFilter({ conditions: [{ rules: [own.rule, { item: 'status', operator: 'equals', value: ctx.openStatus }] }] });
      const seer = await operatorOfParentAndGrandchild();
      const make = (department: Department, extra: Record<string, unknown> = {}) => ticketIn(department, { ...own.ticket, ...extra });
      const seen = [
        await make(parent), await make(grandchild), await make(other, { assignedto: [seer.id] }),
        // In their department and assigned to them; their own and assigned to them: once each.
        await make(parent, { assignedto: [seer.id] }), await make(other, { assignedto: [seer.id] }),
        await make(other),
      ];
      await sequelize().query('UPDATE tickets SET user_id = ? WHERE id IN (?)', { replacements: [seer.id, [seen[4].id, seen[5].id]] });
      const unseen = [
        await make(child), await make(other),
        await make(other, { assignedto: [seer.id], status: ctx.otherStatus }), await make(parent, { status: ctx.resolvedStatus }),
        await make(other, { assignedto: [seer.id] }),
      ];
      await api.del(`${BASE}/${unseen[4].id}`);
      const counters = (statements: Array<{ sql: string }>) => statements
        .some((st) => new RegExp(`FROM ticket_${kind === 'a priority' ? 'list' : 'option'}_counts WHERE state = .* AND department_id IN \\(`).test(st.sql) && /department_id NOT IN \(/.test(st.sql));
      /** A filter's ticket_count and its list as the operator (ids in order, count), each counted apart or not as the form says. */
      const seenBy = async (query: Record<string, unknown> = {}, of = filter) => {
        const shown = await capture(() => api.get(`/api/ticket/filter/${of.id}`, { operator: seer.id }));
        const listed = await capture(() => api.get(BASE, { filter: of.id, filter_operator: seer.id, limit: 100, ...query }));
        expect({ query, counters: [counters(shown.statements), counters(listed.statements)] }).toEqual({ query, counters: [fromCounters, fromCounters] });
        return { ticketCount: expectSuccess(shown.result).ticket_count, ids: ids(expectList(listed.result)), count: listed.result.body.count };
      };
      const sorted = (tickets: Array<{ id: number }>) => tickets.map((t) => t.id).sort((a, b) => a - b);
      expect(await seenBy()).toEqual({ ticketCount: seen.length, ids: sorted(seen), count: seen.length });
      // PAGING: `start` counts from 1.
      expect(await seenBy({ start: 2, limit: 2, order_direction: 'desc' })).toEqual({ ticketCount: seen.length, ids: sorted(seen).reverse().slice(1, 3), count: seen.length });
      // Unassigned (`assigned` -1, a counted filter too), of any status: the list holds the resolved one, ticket_count not.
      const unassigned = await makeFilter({ conditions: [{ rules: [own.rule, { item: 'assigned', operator: 'equals', value: -1 }] }] });
      const free = [seen[0], seen[1], seen[5], unseen[3]];
      expect(await seenBy({}, unassigned)).toEqual({ ticketCount: free.length - 1, ids: sorted(free), count: free.length });
      // Their own tickets ("assigned to me"): all of them seen, so the list of the filters for every
      // ticket (the same statements), counted from the assignee's counters.
      const mine = await makeFilter({ conditions: [{ rules: [{ item: 'assigned', operator: 'equals', value: seer.id }] }] });
      const assigned = [seen[2], seen[3], seen[4], unseen[2]];
      const asMine = await capture(() => api.get(BASE, { filter: mine.id, filter_operator: seer.id, limit: 100 }));
      const asList = await capture(() => api.get(BASE, { assigned: seer.id, limit: 100 }));
      expect({ ids: ids(expectList(asMine.result)), count: asMine.result.body.count }).toEqual({ ids: sorted(assigned), count: assigned.length });
      // (After the statement that reads what the operator sees.)
      expect(listStatements(asMine.statements.filter((st) => !/ AS administrator,/.test(st.sql)))).toEqual(listStatements(asList.statements));
      const shownMine = await capture(() => api.get(`/api/ticket/filter/${mine.id}`, { operator: seer.id }));
      expect(expectSuccess(shownMine.result).ticket_count).toBe(assigned.length);
      // Its count is not narrowed by what the operator sees (their departments, the set of what they see).
      const countOfMine = shownMine.statements.filter((st) => / AS c0/.test(st.sql));
      expect(countOfMine).toHaveLength(1);
      expect(countOfMine.filter((st) => /department_id (NOT )?IN|AS seen\)/.test(st.sql))).toEqual([]);
      expect(countOfMine[0].sql).toMatch(/FROM ticket_assignee_counts WHERE state = 0 AND/);
      // Moved out of their departments: still counted while assigned to them, not when it is neither.
      await api.put(`${BASE}/${seen[3].id}`, { department: other.id });
      expect(await seenBy()).toEqual({ ticketCount: seen.length, ids: sorted(seen), count: seen.length });
      await api.put(`${BASE}/${seen[0].id}`, { department: child.id });
      expect(await seenBy()).toEqual({ ticketCount: seen.length - 1, ids: sorted(seen.slice(1)), count: seen.length - 1 });
    });
  });

  it('a department condition holds the departments below it (as `department` does); dates are strictly before or after', async () => {
    const [a, b, c, d] = [await ticketIn(parent), await ticketIn(child), await ticketIn(grandchild), await ticketIn(other)];
    const mine = [a.id, b.id, c.id, d.id];
    // The newest first: the filter lists every brand's tickets (its conditions are all it applies).
    const of = async (rules: Array<Record<string, unknown>>) => (await list({ filter: (await makeFilter({ conditions: [{ rules }] })).id, order_direction: 'desc' }))
      .filter((id: number) => mine.includes(id)).sort((x: number, y: number) => x - y);
    expect(await of([{ item: 'department', operator: 'equals', value: parent.id }])).toEqual([a.id, b.id, c.id]);
    expect(await of([{ item: 'department', operator: 'equals', value: child.id }])).toEqual([b.id, c.id]);
    expect(await of([{ item: 'department', operator: 'not_equals', value: child.id }])).toEqual([a.id, d.id]);
    const at = (await Ticket.findByPk(b.id))!.created_at;
    await sequelize().query('UPDATE tickets SET created_at = ? WHERE id IN (?)', { replacements: [at, mine] });
    await sequelize().query('UPDATE tickets SET created_at = ? WHERE id = ?', { replacements: [at + 1, d.id] });
    await sequelize().query('UPDATE tickets SET created_at = ? WHERE id = ?', { replacements: [at - 1, a.id] });
    expect(await of([{ item: 'created_at', operator: 'after', value: at }])).toEqual([d.id]);
    expect(await of([{ item: 'created_at', operator: 'before', value: at }])).toEqual([a.id]);
  });

  it('a user_email condition ignores case for every operator (addresses are stored lower-cased)', async () => {
    const [local, domain] = user.email.split('@');
    const capital = `${local[0].toUpperCase()}${local.slice(1)}`;
    // With the user's own condition beside it: the user's tickets, or none.
    const emailFilter = (operator: string, value: string) => makeFilter({
      conditions: [{ rules: [{ item: 'user_email', operator, value }, { item: 'user', operator: 'equals', value: user.id }] }],
    });
    const theirs = await list({ filter: (await emailFilter('equals', user.email)).id });
    expect(theirs).toEqual(expect.arrayContaining(tickets.map((t) => t.id)));
    for (const [operator, value] of [
      ['equals', `${capital}@${domain.toUpperCase()}`], ['contains', local.toUpperCase()], ['begins_with', `${capital}@`], ['ends_with', `@${domain.toUpperCase()}`],
    ]) {
      const filter = await emailFilter(operator, value);
      expect([operator, await list({ filter: filter.id })]).toEqual([operator, theirs]);
      // ticket_count: tickets 0 and 1 (ticket 2 is in a department op does not see, ticket 3 resolved).
      expect([operator, expectSuccess(await api.get(`/api/ticket/filter/${filter.id}`, { operator: op.id })).ticket_count]).toEqual([operator, 2]);
    }
    for (const operator of ['not_equals', 'not_contains']) {
      expect([operator, await list({ filter: (await emailFilter(operator, user.email.toUpperCase())).id })]).toEqual([operator, []]);
    }
  });

  it('each condition item translates to SQL that runs', async () => {
    const field = await CustomField.create({ kind: 'ticket', name: unique('Field'), type: 8 });
    const plan = await (await import('../../src/db/models')).SlaPlan.create({ name: unique('Plan') });
    const tag = await TicketTag.create({ name: unique('tag') });
    const rules = [
      ['status', 'not_equals', ctx.resolvedStatus], ['priority', 'equals', ctx.priorityId], ['tag', 'not_equals', tag.id], ['channel', 'equals', tickets[0].channel_id],
      ['department', 'equals', child.id], ['brand', 'equals', brand.id], ['sla_plan', 'not_equals', plan.id], ['user', 'equals', user.id],
      ['assigned', 'equals', -1], ['watching', 'not_equals', op.id], ['number', 'not_contains', 'zzz'],
      ['subject', 'ends_with', 'please'], ['message', 'contains', 'broken'], ['user_email', 'equals', user.email], ['user_name', 'begins_with', 'Uma'],
      ['cc', 'not_equals', 'x@example.com'], ['locked', 'equals', 0], ['merged', 'equals', 0], ['internal', 'equals', 0],
      ['has_attachments', 'equals', 0], ['created_at', 'after', 1], ['updated_at', 'before', 4000000000], ['last_reply_time', 'after', 1],
      ['hours_since_created', 'less', 100], ['hours_since_updated', 'less', 100], ['hours_since_last_reply', 'less', 100],
    ].map(([item, operator, value]) => ({ item, operator, value }));
    const filter = await makeFilter({
      conditions: [{ rules: [...rules, { item: 'customfield', field_id: field.id, operator: 'not_contains', value: 'x' }] }],
    });
    expect(await list({ filter: filter.id })).toEqual([tickets[0].id]);
  });
});

describe('lists run a fixed number of statements whatever the page size', () => {
  const RECORDS = 52;
  let user: User;
  let ticket: any;
  beforeAll(async () => {
    user = await userOfBrand();
    const tags = await TicketTag.bulkCreate([{ name: unique('qtag') }, { name: unique('qtag') }]);
    const field = await CustomField.create({ kind: 'ticket', name: unique('Query field'), type: 8 });
    const [op1, op2] = [await f.operator(), await f.operator()];
    const plan = await (await import('../../src/db/models')).SlaPlan.create({ name: unique('Plan') });
    for (let i = 0; i < RECORDS; i++) {
      await ticketIn(i % 2 ? child : other, {
        user: user.id, tag: ids(tags), assignedto: [op1.id], watching: [op2.id], customfield: { [field.id]: `v${i}` }, cc: ['c@example.com'],
        sla_plan: plan.id,
      });
    }
    ticket = await ticketIn(other, { user: user.id });
    for (let i = 0; i < RECORDS; i++) await f.message(ticket, { attachment: [{ filename: `f${i}.txt`, contents: b64(`file ${i}`) }] });
  });

  const same = async (path: string, query: Record<string, unknown>) => {
    await api.get(path, query); // warm-up
    const one = await measureList(api, path, { ...query, limit: 1 });
    const fifty = await measureList(api, path, { ...query, limit: 50 });
    expect(expectList(one.res)).toHaveLength(1);
    expect(expectList(fifty.res)).toHaveLength(50);
    expect(fifty.queries.length).toBe(one.queries.length);
    return fifty.queries.length;
  };

  it.each(['plain', 'search', 'department'])('tickets: %s', async (kind) => {
    const query: Record<string, unknown> = { user: user.id };
    if (kind === 'search') query.search = 'broken';
    if (kind === 'department') query.department = `${parent.id},${other.id}`;
    expect(await same(BASE, query)).toBeLessThanOrEqual(30);
  });

  it('messages and attachments', async () => {
    // Newest first: every message of both pages has an attachment.
    expect(await same('/api/ticket/message', { ticket_id: ticket.id, order_direction: 'desc' })).toBeLessThanOrEqual(7);
    expect(await same('/api/ticket/attachment', { ticket_id: ticket.id })).toBeLessThanOrEqual(5);
  });

  it('filters with ticket_count', async () => {
    const op = await f.operator();
    for (let i = 0; i < RECORDS; i++) {
      expectSuccess(await api.post('/api/ticket/filter', {
        name: unique('QFilter'), user_id: op.id, conditions: [{ rules: [{ item: 'subject', operator: 'contains', value: `x${i}` }] }],
      }), 'Successfully created new filter!');
    }
    await same('/api/ticket/filter', { operator: op.id });
  });
});
