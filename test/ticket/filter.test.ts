import { CustomField, Department, Group, TicketFilter, TicketFilterCondition, TicketFilterGroup, TicketStatus, TicketTag, User, UserGroup } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { countTicketsMatching } from '../../src/ticket/filter';
import * as m045 from '../../migrations/045_filter_groups_all';
import { useApi, unique } from '../helpers/app';
import { raceAfterHeld } from '../helpers/races';
import { countWarm } from '../helpers/queries';
import { expectDeleted, expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';

const api = useApi();
const BASE = '/api/ticket/filter';
const LIST_KEYS = ['id', 'name', 'user_id', 'all_groups', 'condition_group_type', 'created_at', 'updated_at', 'ticket_count'];
const SHOW_KEYS = [...LIST_KEYS, 'groups', 'conditions'];

const created = (res: any) => expectSuccess(res, 'Successfully created new filter!');
const updated = (res: any) => expectSuccess(res, 'Successfully updated the filter!');
const ids = (data: any[]) => data.map((d) => d.id);
const makeOperator = async (groups: Group[] = []) => {
  const op = await User.create({ type: 'operator', email: `${unique('op')}@example.com`, firstname: 'Op', lastname: 'Erator' });
  if (groups.length) await UserGroup.bulkCreate(groups.map((g) => ({ user_id: op.id, group_id: g.id })));
  return op;
};
const makeGroup = () => Group.create({ type: 'operator', name: unique('group') });
const rule = (item: string, operator: string, value: unknown, extra: Record<string, unknown> = {}) => ({ item, operator, value, ...extra });

describe('the installed filter', () => {
  it('"All Tickets" is shared with every group, any condition group, none set', async () => {
    const data = expectList(await api.get(BASE, { limit: 1000 }));
    const all = data.find((f) => f.name === 'All Tickets');
    expect(Object.keys(all).sort()).toEqual([...LIST_KEYS].sort());
    expect(all).toMatchObject({ user_id: null, all_groups: 1, condition_group_type: 1, ticket_count: null });
    const shown = expectSuccess(await api.get(`${BASE}/${all.id}`));
    expect(Object.keys(shown).sort()).toEqual([...SHOW_KEYS].sort());
    expect(shown).toMatchObject({ ...all, groups: [], conditions: [] });
  });
});

describe('POST /api/ticket/filter', () => {
  it('creates a shared filter with the defaults', async () => {
    const name = unique('Open');
    const data = created(await api.post(BASE, { name }));
    expect(Object.keys(data).sort()).toEqual([...SHOW_KEYS].sort());
    expect(data).toMatchObject({ name, user_id: null, all_groups: 1, condition_group_type: 0, ticket_count: null, groups: [], conditions: [] });
    expect(expectSuccess(await api.get(`${BASE}/${data.id}`))).toEqual(data);
  });

  it('stores owner, groups and conditions in their groups', async () => {
    const op = await makeOperator();
    const group = await makeGroup();
    const dept = await Department.create({ name: unique('Dept') });
    const field = await CustomField.create({ kind: 'ticket', name: unique('tf'), type: 8 });
    const data = created(await api.post(BASE, {
      name: unique('Mine'), user_id: op.id, groups: [group.id], condition_group_type: 1,
      conditions: [
        { type: 1, rules: [rule('status', 'equals', 2), rule('department', 'not_equals', dept.id), rule('assigned', 'equals', -1)] },
        { rules: [rule('subject', 'contains', ' refund '), rule('locked', 'equals', 'true'), rule('created_at', 'after', 1700000000),
          rule('hours_since_last_reply', 'greater', '24'), rule('customfield', 'contains', 'VIP', { field_id: field.id })] },
      ],
    }));
    expect(data).toMatchObject({ user_id: op.id, all_groups: 0, condition_group_type: 1 });
    expect(data.groups).toEqual([{
      id: group.id, name: group.name, description: null, colour: null, administrator: 0, created_at: group.created_at, updated_at: group.updated_at,
      pivot: { filter_id: data.id, group_id: group.id },
    }]);
    expect(data.conditions).toEqual([
      { type: 1, rules: [
        { item: 'status', operator: 'equals', value: 2 }, { item: 'department', operator: 'not_equals', value: dept.id },
        { item: 'assigned', operator: 'equals', value: -1 },
      ] },
      { type: 0, rules: [
        { item: 'subject', operator: 'contains', value: 'refund' }, { item: 'locked', operator: 'equals', value: 1 },
        { item: 'created_at', operator: 'after', value: 1700000000 }, { item: 'hours_since_last_reply', operator: 'greater', value: 24 },
        { item: 'customfield', field_id: field.id, operator: 'contains', value: 'VIP' },
      ] },
    ]);
    expect(await TicketFilterCondition.count({ where: { filter_id: data.id } })).toBe(8);
    // The list leaves groups and conditions out, as the spec's fields.
    const listed = expectList(await api.get(BASE, { limit: 1000 })).find((f) => f.id === data.id);
    expect(Object.keys(listed).sort()).toEqual([...LIST_KEYS].sort());
  });

  it('takes a JSON body', async () => {
    const group = await makeGroup();
    const data = created(await api.postJson(BASE, { name: unique('Json'), all_groups: false, groups: [group.id], conditions: [{ type: 0, rules: [{ item: 'priority', operator: 'EQUALS', value: 3 }] }] }));
    expect(data).toMatchObject({ all_groups: 0, conditions: [{ type: 0, rules: [{ item: 'priority', operator: 'equals', value: 3 }] }] });
  });

  it.each([
    [{}, 'The name field is required.'],
    [{ name: 'x', user_id: 999999 }, 'The selected user id is invalid.'],
    [{ name: 'x', groups: [999999] }, 'The selected groups.0 is invalid.'],
    [{ name: 'x', condition_group_type: 2 }, 'The selected condition group type is invalid.'],
    [{ name: 'x', all_groups: 'everyone' }, 'The all groups field must be true or false.'],
    [{ name: 'x', conditions: 'status=1' }, 'The conditions must be an array.'],
    [{ name: 'x', conditions: [{ type: 0 }] }, 'The conditions.0.rules field is required.'],
    [{ name: 'x', conditions: [{ type: 3, rules: [rule('status', 'equals', 1)] }] }, 'The selected conditions.0.type is invalid.'],
    [{ name: 'x', conditions: [{ rules: [rule('colour', 'equals', 1)] }] }, 'The selected conditions.0.rules.0.item is invalid.'],
    [{ name: 'x', conditions: [{ rules: [{ operator: 'equals', value: 1 }] }] }, 'The conditions.0.rules.0.item field is required.'],
    [{ name: 'x', conditions: [{ rules: [rule('status', 'contains', 1)] }] }, 'The selected conditions.0.rules.0.operator is invalid: status takes equals, not_equals.'],
    [{ name: 'x', conditions: [{ rules: [rule('subject', 'greater', 'a')] }] }, 'The selected conditions.0.rules.0.operator is invalid: subject takes equals, not_equals, contains, not_contains, begins_with, ends_with.'],
    [{ name: 'x', conditions: [{ rules: [rule('status', 'equals', '')] }] }, 'The conditions.0.rules.0.value field is required.'],
    [{ name: 'x', conditions: [{ rules: [rule('status', 'equals', 'open')] }] }, 'The selected conditions.0.rules.0.value is invalid.'],
    [{ name: 'x', conditions: [{ rules: [rule('status', 'equals', -1)] }] }, 'The selected conditions.0.rules.0.value is invalid.'],
    [{ name: 'x', conditions: [{ rules: [rule('department', 'equals', 999999)] }] }, 'The selected conditions.0.rules.0.value is invalid.'],
    [{ name: 'x', conditions: [{ rules: [rule('status', 'equals', 999999)] }] }, 'The selected conditions.0.rules.0.value is invalid.'],
    [{ name: 'x', conditions: [{ rules: [rule('priority', 'equals', 999999)] }] }, 'The selected conditions.0.rules.0.value is invalid.'],
    [{ name: 'x', conditions: [{ rules: [rule('tag', 'equals', 999999)] }] }, 'The selected conditions.0.rules.0.value is invalid.'],
    [{ name: 'x', conditions: [{ rules: [rule('channel', 'equals', 999999)] }] }, 'The selected conditions.0.rules.0.value is invalid.'],
    [{ name: 'x', conditions: [{ rules: [rule('status', 'equals', 1), rule('internal', 'equals', 2)] }] }, 'The conditions.0.rules.1.value field must be true or false.'],
    [{ name: 'x', conditions: [{ rules: [rule('created_at', 'before', 'yesterday')] }] }, 'The conditions.0.rules.0.value must be a UNIX timestamp.'],
    [{ name: 'x', conditions: [{ rules: [rule('customfield', 'equals', 'a')] }] }, 'The conditions.0.rules.0.field id field is required when item is customfield.'],
    [{ name: 'x', conditions: [{ rules: [rule('customfield', 'equals', 'a', { field_id: 999999 })] }] }, 'The selected conditions.0.rules.0.field id is invalid.'],
    [{ name: 'x', conditions: [{ rules: [rule('subject', 'contains', 'x'.repeat(256))] }] }, 'The conditions.0.rules.0.value may not be greater than 255 characters.'],
  ] as Array<[Record<string, unknown>, string]>)('422 %j → %s', async (form, message) => {
    const before = await TicketFilter.count();
    expectError(await api.post(BASE, form), 422, message);
    expect(await TicketFilter.count()).toBe(before);
  });

  it('refuses a user (not an operator) as owner, a user group, and a field of another kind', async () => {
    const customer = await User.create({ type: 'user', brand_id: 1, email: `${unique('c')}@example.com` });
    const userGroup = await Group.create({ type: 'user', name: unique('ug') });
    const userField = await CustomField.create({ kind: 'user', name: unique('uf'), type: 8 });
    expectError(await api.post(BASE, { name: 'x', user_id: customer.id }), 422, 'The selected user id is invalid.');
    expectError(await api.post(BASE, { name: 'x', groups: [userGroup.id] }), 422, 'The selected groups.0 is invalid.');
    expectError(await api.post(BASE, { name: 'x', conditions: [{ rules: [rule('customfield', 'equals', 'a', { field_id: userField.id })] }] }), 422, 'The selected conditions.0.rules.0.field id is invalid.');
    expectError(await api.post(BASE, { name: 'x', conditions: [{ rules: [rule('assigned', 'equals', customer.id)] }] }), 422, 'The selected conditions.0.rules.0.value is invalid.');
  });
});

describe('visibility by operator', () => {
  let groupA: Group;
  let groupB: Group;
  let alice: User;
  let bob: User;
  let carol: User;
  const f: Record<string, TicketFilter> = {};
  beforeAll(async () => {
    [groupA, groupB] = [await makeGroup(), await makeGroup()];
    alice = await makeOperator([groupA]);
    bob = await makeOperator([groupB]);
    carol = await makeOperator([groupA, groupB]);
    f.shared = await TicketFilter.create({ name: unique('shared'), all_groups: 1 });
    f.aliceOwn = await TicketFilter.create({ name: unique('alice'), user_id: alice.id, all_groups: 1 });
    f.groupA = await TicketFilter.create({ name: unique('A'), all_groups: 0 });
    f.groupB = await TicketFilter.create({ name: unique('B'), all_groups: 0 });
    f.nobody = await TicketFilter.create({ name: unique('none'), all_groups: 0 });
    await TicketFilterGroup.bulkCreate([{ filter_id: f.groupA.id, group_id: groupA.id }, { filter_id: f.groupB.id, group_id: groupB.id }]);
  });
  const mine = () => Object.values(f).map((x) => x.id);
  const visible = async (operator: number) => {
    const res = await api.get(BASE, { operator, limit: 1000 });
    const data = expectList(res);
    expect(res.body.count).toBe(data.length);
    return ids(data).filter((id) => mine().includes(id));
  };

  it('lists what each operator sees: own, shared with all, shared with one of their groups', async () => {
    expect(await visible(alice.id)).toEqual([f.shared.id, f.aliceOwn.id, f.groupA.id]);
    expect(await visible(bob.id)).toEqual([f.shared.id, f.groupB.id]);
    expect(await visible(carol.id)).toEqual([f.shared.id, f.groupA.id, f.groupB.id]);
    // Without an operator: every filter.
    expect(ids(expectList(await api.get(BASE, { limit: 1000 })))).toEqual(expect.arrayContaining(mine()));
  });

  it('a private filter stays private whatever its groups', async () => {
    await TicketFilterGroup.create({ filter_id: f.aliceOwn.id, group_id: groupB.id });
    expect(await visible(bob.id)).not.toContain(f.aliceOwn.id);
    await TicketFilterGroup.destroy({ where: { filter_id: f.aliceOwn.id } });
  });

  it('an operator that is an unknown id, or a user, is refused on the list and on show (not an operator who sees nothing)', async () => {
    const customer = await User.create({ type: 'user', brand_id: 1, email: `${unique('c')}@example.com` });
    for (const operator of [999999, customer.id]) {
      expectError(await api.get(BASE, { operator }), 422, 'The selected operator is invalid.');
      expectError(await api.get(`${BASE}/${f.shared.id}`, { operator }), 422, 'The selected operator is invalid.');
    }
    expectError(await api.get(BASE, { operator: 'alice' }), 422, 'The operator must be an integer.');
    // A filter that does not exist is still a 404 first.
    expectNotFound(await api.get(`${BASE}/999999`, { operator: customer.id }), 'filter');
  });

  it('show with an operator: 404 for a filter that operator cannot see', async () => {
    expect(expectSuccess(await api.get(`${BASE}/${f.groupA.id}`, { operator: alice.id })).id).toBe(f.groupA.id);
    expectNotFound(await api.get(`${BASE}/${f.groupA.id}`, { operator: bob.id }), 'filter');
    expectNotFound(await api.get(`${BASE}/${f.aliceOwn.id}`, { operator: carol.id }), 'filter');
    expect(expectSuccess(await api.get(`${BASE}/${f.nobody.id}`)).id).toBe(f.nobody.id);
  });

  it('ticket_count: null without an operator, a count with one (the tickets tests count real tickets)', async () => {
    const listed = expectList(await api.get(BASE, { operator: alice.id, limit: 1000 }));
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.every((x) => Number.isInteger(x.ticket_count))).toBe(true);
    expect(expectList(await api.get(BASE, { limit: 1000 })).every((x) => x.ticket_count === null)).toBe(true);
    const shown = expectSuccess(await api.get(`${BASE}/${f.shared.id}`, { operator: alice.id })).ticket_count;
    expect(Number.isInteger(shown)).toBe(true);
    await expect(countTicketsMatching(f.shared, alice.id)).resolves.toBe(shown);
  });

  it('is one subquery: the same number of statements for limit=1 and limit=50', async () => {
    const measure = async (limit: number) => {
      const { result, queries } = await countWarm(async () => api.get(BASE, { operator: carol.id, limit }));
      expectList(result);
      return queries.filter((q) => !/api_tokens|ip_bans/.test(q));
    };
    await measure(1);
    const one = await measure(1);
    const fifty = await measure(50);
    expect(fifty.length).toBe(one.length);
    // The operator, count, page; ticket_count: the settings, the conditions, what the operator sees, one SELECT of every count.
    expect(fifty.length).toBeLessThanOrEqual(7);
    expect(fifty.some((q) => /ticket_filter_groups/.test(q) && /user_groups/.test(q))).toBe(true);
  });
});

describe('PUT /api/ticket/filter/{id}', () => {
  it('updates what is sent; groups decide all_groups unless it is sent', async () => {
    const group = await makeGroup();
    const filter = created(await api.post(BASE, { name: unique('F'), conditions: [{ rules: [rule('status', 'equals', 1)] }] }));
    const limited = updated(await api.put(`${BASE}/${filter.id}`, { groups: [group.id] }));
    expect(limited).toMatchObject({ name: filter.name, all_groups: 0, conditions: filter.conditions });
    expect(limited.groups.map((g: any) => g.id)).toEqual([group.id]);
    const widened = updated(await api.put(`${BASE}/${filter.id}`, { groups: '' }));
    expect(widened).toMatchObject({ all_groups: 1, groups: [] });
    const both = updated(await api.put(`${BASE}/${filter.id}`, { groups: [group.id], all_groups: 1, condition_group_type: 1 }));
    expect(both).toMatchObject({ all_groups: 1, condition_group_type: 1 });
    expect(both.groups).toHaveLength(1);
  });

  it('a shared filter without groups is seen by every operator, whatever all_groups says (as canned responses), on create and update', async () => {
    const loner = await makeOperator();
    const group = await makeGroup();
    const sees = async (id: number) => ids(expectList(await api.get(BASE, { operator: loner.id, limit: 1000 }))).includes(id);
    // Create: all_groups 0 with no groups, or empty ones.
    for (const form of [{ all_groups: 0 }, { all_groups: 'false', groups: '' }]) {
      const filter = created(await api.post(BASE, { name: unique('F'), ...form }));
      expect(filter).toMatchObject({ all_groups: 1, groups: [] });
      expect(await sees(filter.id)).toBe(true);
    }
    // Update: all_groups 0 alone on a filter without groups, and with the groups emptied.
    const open = created(await api.post(BASE, { name: unique('F') }));
    expect(updated(await api.put(`${BASE}/${open.id}`, { all_groups: 0 }))).toMatchObject({ all_groups: 1, groups: [] });
    const limited = created(await api.post(BASE, { name: unique('F'), groups: [group.id], all_groups: 1 }));
    expect(updated(await api.put(`${BASE}/${limited.id}`, { all_groups: 0 })).all_groups).toBe(0);
    expect(await sees(limited.id)).toBe(false);
    expect(updated(await api.put(`${BASE}/${limited.id}`, { all_groups: 0, groups: '' }))).toMatchObject({ all_groups: 1, groups: [] });
    expect(await sees(limited.id)).toBe(true);
    expect(await sees(open.id)).toBe(true);
  });

  it('migration 045: a shared filter saved without groups and all_groups 0 (seen by no operator) is seen by every operator', async () => {
    const loner = await makeOperator();
    const group = await makeGroup();
    const sees = async (id: number) => ids(expectList(await api.get(BASE, { operator: loner.id, limit: 1000 }))).includes(id);
    const [hidden, limited, mine] = [
      created(await api.post(BASE, { name: unique('F') })),
      created(await api.post(BASE, { name: unique('F'), groups: [group.id] })),
      created(await api.post(BASE, { name: unique('F'), user_id: loner.id })),
    ];
    // As written before the rule: all_groups 0, no groups.
    await TicketFilter.update({ all_groups: 0 }, { where: { id: [hidden.id, mine.id] } });
    expect(await sees(hidden.id)).toBe(false);
    await m045.up(sequelize().getQueryInterface());
    expect(await sees(hidden.id)).toBe(true);
    expect((await TicketFilter.findByPk(hidden.id))!.all_groups).toBe(1);
    // A filter with groups, or an operator's own, is left as it was.
    expect((await TicketFilter.findByPk(limited.id))!.all_groups).toBe(0);
    expect(await sees(limited.id)).toBe(false);
    expect((await TicketFilter.findByPk(mine.id))!.all_groups).toBe(0);
  });

  it('replaces the conditions when sent, clears them with an empty value', async () => {
    const filter = created(await api.post(BASE, { name: unique('F'), conditions: [{ rules: [rule('status', 'equals', 1)] }, { rules: [rule('priority', 'equals', 2)] }] }));
    const tag = await TicketTag.create({ name: unique('tag') });
    const replaced = updated(await api.put(`${BASE}/${filter.id}`, { conditions: [{ type: 1, rules: [rule('tag', 'not_equals', tag.id)] }] }));
    expect(replaced.conditions).toEqual([{ type: 1, rules: [{ item: 'tag', operator: 'not_equals', value: tag.id }] }]);
    expect(updated(await api.put(`${BASE}/${filter.id}`, { name: 'kept conditions' })).conditions).toEqual(replaced.conditions);
    expect(updated(await api.put(`${BASE}/${filter.id}`, { conditions: '' })).conditions).toEqual([]);
    expect(await TicketFilterCondition.count({ where: { filter_id: filter.id } })).toBe(0);
  });

  it('makes a filter private and shared again', async () => {
    const op = await makeOperator();
    const filter = created(await api.post(BASE, { name: unique('F') }));
    expect(updated(await api.put(`${BASE}/${filter.id}`, { user_id: op.id })).user_id).toBe(op.id);
    expect(updated(await api.put(`${BASE}/${filter.id}`, { user_id: 0 })).user_id).toBeNull();
    expectError(await api.put(`${BASE}/${filter.id}`, { user_id: 999999 }), 422, 'The selected user id is invalid.');
  });

  it('refuses bad conditions without changing anything, and 404 first', async () => {
    const filter = created(await api.post(BASE, { name: unique('F'), conditions: [{ rules: [rule('status', 'equals', 1)] }] }));
    expectError(await api.put(`${BASE}/${filter.id}`, { name: 'changed', conditions: [{ rules: [rule('status', 'before', 1)] }] }), 422, 'The selected conditions.0.rules.0.operator is invalid: status takes equals, not_equals.');
    expect(expectSuccess(await api.get(`${BASE}/${filter.id}`))).toEqual(filter);
    expectNotFound(await api.put(`${BASE}/999999`, { name: '' }), 'filter');
  });

  it('deleting the owner deletes the private filter', async () => {
    const op = await makeOperator();
    const own = created(await api.post(BASE, { name: unique('F'), user_id: op.id }));
    await op.destroy();
    expectNotFound(await api.get(`${BASE}/${own.id}`), 'filter');
  });

  it('a status, priority, tag, department or ticket custom field a condition names is not deleted: the filter would hold an id it refuses back, or widen', async () => {
    const kinds = [
      { item: 'status', path: '/api/ticket/status', label: 'status', body: () => ({ name: unique('Waiting') }) },
      { item: 'priority', path: '/api/ticket/priority', label: 'priority', body: () => ({ name: unique('Urgent') }) },
      { item: 'tag', path: '/api/ticket/tag', label: 'tag', body: () => ({ name: unique('vip') }) },
      { item: 'department', path: '/api/ticket/department', label: 'department', body: () => ({ name: unique('Billing') }) },
      { item: 'customfield', path: '/api/ticket/customfield', label: 'custom field', body: () => ({ name: unique('Order'), type: 8 }) },
    ];
    for (const { item, path, label, body } of kinds) {
      const record = expectSuccess(await api.post(path, body()), `Successfully created new ${label}!`);
      const named = item === 'customfield' ? rule(item, 'equals', 'x', { field_id: record.id }) : rule(item, 'not_equals', record.id);
      const filter = created(await api.post(BASE, { name: unique('F'), conditions: [{ rules: [named] }] }));
      expectError(await api.del(`${path}/${record.id}`), 422, `The ${label} cannot be deleted because ticket filters use it: change their conditions first.`);
      expectSuccess(await api.get(`${path}/${record.id}`));
      // The filter as it is can be sent back.
      const shown = expectSuccess(await api.get(`${BASE}/${filter.id}`));
      expect(shown.conditions).toEqual(filter.conditions);
      updated(await api.put(`${BASE}/${filter.id}`, { name: shown.name, conditions: shown.conditions }));
      // Once no condition names it, it goes.
      updated(await api.put(`${BASE}/${filter.id}`, { conditions: '' }));
      expectDeleted(await api.del(`${path}/${record.id}`), label);
    }
  });
});

describe('DELETE /api/ticket/filter/{id}', () => {
  it('deletes a filter with its groups and conditions', async () => {
    const group = await makeGroup();
    const filter = created(await api.post(BASE, { name: unique('F'), groups: [group.id], conditions: [{ rules: [rule('status', 'equals', 1)] }] }));
    expectDeleted(await api.del(`${BASE}/${filter.id}`), 'filter');
    expect(await TicketFilterGroup.count({ where: { filter_id: filter.id } })).toBe(0);
    expect(await TicketFilterCondition.count({ where: { filter_id: filter.id } })).toBe(0);
    expectNotFound(await api.get(`${BASE}/${filter.id}`), 'filter');
    expectNotFound(await api.del(`${BASE}/${filter.id}`), 'filter');
  });
});

describe('a filter and the deletion of a record it names, at once', () => {
  const filterOn = (statusId: number) => api.post(BASE, { name: unique('Raced'), conditions: [{ rules: [{ item: 'status', operator: 'equals', value: statusId }] }] });

  it('the deletion first: the filter waits for it and is refused', async () => {
    const status = expectSuccess(await api.post('/api/ticket/status', { name: unique('Doomed') }), 'Successfully created new status!');
    const created = await raceAfterHeld(
      (t) => sequelize().query('DELETE FROM ticket_statuses WHERE id = ?', { replacements: [status.id], transaction: t }),
      () => filterOn(status.id).then((res) => res),
      'LOCK IN SHARE MODE', 'the filter to wait for the deletion',
    );
    expectError(created, 422, 'The selected conditions.0.rules.0.value is invalid.');
    expect(await TicketFilterCondition.count({ where: { item: 'status', value: String(status.id) } })).toBe(0);
  });

  it('the filter first: the deletion waits for it and is refused', async () => {
    const status = expectSuccess(await api.post('/api/ticket/status', { name: unique('Kept') }), 'Successfully created new status!');
    const deleted = await raceAfterHeld(
      async (t) => {
        // What the filter's create reads of the status it names, in its transaction, before it writes the filter.
        await TicketStatus.findAll({ where: { id: status.id }, transaction: t, lock: t.LOCK.SHARE });
        const filter = await TicketFilter.create({ name: unique('First') }, { transaction: t });
        await TicketFilterCondition.create({ filter_id: filter.id, group_no: 0, group_type: 0, position: 0, item: 'status', operator: 'equals', value: String(status.id) }, { transaction: t });
      },
      () => api.del(`/api/ticket/status/${status.id}`).then((res) => res),
      'FOR UPDATE', 'the deletion to wait for the filter',
    );
    expectError(deleted, 422, 'The status cannot be deleted because ticket filters use it: change their conditions first.');
  });

  it('a filter on a ticket custom field first: the deletion of the field waits for it and is refused', async () => {
    const field = expectSuccess(await api.post('/api/ticket/customfield', { name: unique('Kept'), type: 8 }), 'Successfully created new custom field!');
    let filterId = 0;
    const deleted = await raceAfterHeld(
      async (t) => {
        await CustomField.findAll({ where: { id: field.id }, transaction: t, lock: t.LOCK.SHARE });
        const filter = await TicketFilter.create({ name: unique('First') }, { transaction: t });
        filterId = filter.id;
        await TicketFilterCondition.create({ filter_id: filter.id, group_no: 0, group_type: 0, position: 0, item: 'customfield', operator: 'equals', value: 'x', field_id: field.id }, { transaction: t });
      },
      () => api.del(`/api/ticket/customfield/${field.id}`).then((res) => res),
      'FOR UPDATE', 'the deletion to wait for the filter',
    );
    expectError(deleted, 422, 'The custom field cannot be deleted because ticket filters use it: change their conditions first.');
    expect(await TicketFilterCondition.count({ where: { filter_id: filterId } })).toBe(1);
  });
});
