import { Group, Permission, Role, RoleGroup, RolePermission, Translation } from '../../src/db/models';
import { useApi, unique } from '../helpers/app';
import { countWarm } from '../helpers/queries';
import { expectDeleted, expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';

const api = useApi();
const BASE = '/api/user/role';
const ROLE_KEYS = ['id', 'name', 'slug', 'description', 'created_at', 'updated_at', 'permissions', 'groups', 'translations'];

let permissions: Permission[];
let operatorGroup: Group;
let userGroup: Group;
beforeAll(async () => {
  permissions = await Permission.findAll({ order: [['id', 'ASC']] });
  operatorGroup = (await Group.findOne({ where: { type: 'operator' }, order: [['id', 'ASC']] }))!;
  userGroup = (await Group.findOne({ where: { type: 'user' }, order: [['id', 'ASC']] }))!;
});

const permissionJson = (p: Permission) => ({
  id: p.id, inherit_id: p.inherit_id, module_id: p.module_id, name: p.name,
  slug: { view: p.can_view, create: p.can_create, update: p.can_update, delete: p.can_delete },
  description: p.description, created_at: p.created_at, updated_at: p.updated_at,
});

async function createRole(body: Record<string, unknown> = {}): Promise<any> {
  return expectSuccess(await api.postJson(BASE, { name: unique('Role'), ...body }), 'Successfully created new role!');
}

describe('POST /api/user/role', () => {
  it('creates a role with a slug', async () => {
    const name = unique('Support Agents');
    const data = expectSuccess(await api.post(BASE, { name }), 'Successfully created new role!');
    expect(Object.keys(data).sort()).toEqual([...ROLE_KEYS].sort());
    expect(data).toMatchObject({ name, slug: name.toLowerCase().replace(/[^a-z0-9]+/g, '-'), description: null, permissions: [], translations: [] });
    expect(Number.isInteger(data.created_at)).toBe(true);
  });

  it('grants the permissions marked 1, with their pivot, and links the operator groups', async () => {
    const [p1, p2, p3] = permissions;
    const data = expectSuccess(await api.postJson(BASE, {
      name: unique('Leads'), description: 'Team leads', group: [operatorGroup.id], permission: { [p1.id]: 1, [p2.id]: 0, [p3.id]: '1' },
    }), 'Successfully created new role!');
    expect(data.description).toBe('Team leads');
    expect(data.permissions).toEqual([p1, p3].map((p) => ({ ...permissionJson(p), pivot: { role_id: data.id, permission_id: p.id } })));
    expect((await RoleGroup.findAll({ where: { role_id: data.id } })).map((g) => g.group_id)).toEqual([operatorGroup.id]);
    // Read back as written (beyond the spec), as an operator's groups are shown.
    expect(data.groups).toEqual([{
      id: operatorGroup.id, name: operatorGroup.name, description: operatorGroup.description ?? null, colour: operatorGroup.colour ?? null,
      administrator: operatorGroup.administrator, created_at: operatorGroup.created_at, updated_at: operatorGroup.updated_at,
      pivot: { role_id: data.id, group_id: operatorGroup.id },
    }]);
    expect(expectSuccess(await api.get(`${BASE}/${data.id}`)).groups.map((g: any) => g.id)).toEqual([operatorGroup.id]);
  });

  it('takes group[] form-encoded', async () => {
    const data = expectSuccess(await api.post(BASE, { name: unique('Form'), group: [operatorGroup.id] }), 'Successfully created new role!');
    expect((await RoleGroup.findAll({ where: { role_id: data.id } })).map((g) => g.group_id)).toEqual([operatorGroup.id]);
  });

  it('takes permission[<id>]=1 form-encoded', async () => {
    const [, p2, , p4] = permissions;
    const data = expectSuccess(await api.post(BASE, { name: unique('Form'), permission: { [p2.id]: 1, [p4.id]: 1 } }), 'Successfully created new role!');
    expect(data.permissions.map((p: any) => p.id)).toEqual([p2.id, p4.id]);
  });

  it('makes the slug unique and readable', async () => {
    const name = unique('Équipe Café');
    const a = await createRole({ name });
    const b = await createRole({ name });
    const c = await createRole({ name: `${name}!` });
    expect(a.slug).toBe(name.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '-'));
    expect(b.slug).toBe(`${a.slug}-2`);
    expect(c.slug).toBe(`${a.slug}-3`);
    expect((await createRole({ name: '!!!' })).slug).toMatch(/^role(-\d+)?$/);
  });

  it('gives roles of one name created at once a slug each: a slug taken meanwhile is skipped, no request fails', async () => {
    const name = unique('Night Shift');
    const created = await Promise.all(Array.from({ length: 6 }, () => api.postJson(BASE, { name })));
    const slugs = created.map((res) => expectSuccess(res, 'Successfully created new role!').slug as string);
    const base = name.toLowerCase().replace(/[^a-z0-9]+/g, '-');
    expect([...slugs].sort()).toEqual([base, ...[2, 3, 4, 5, 6].map((n) => `${base}-${n}`)].sort());
  });

  it('accepts translations of name and description', async () => {
    const data = expectSuccess(await api.post(BASE, { name: 'Manager', 'name:fr': 'Gestionnaire', 'description:de': 'Leiter' }), 'Successfully created new role!');
    expect(data.translations).toEqual([
      { role_id: data.id, name: null, description: 'Leiter', locale: 'de' },
      { role_id: data.id, name: 'Gestionnaire', description: null, locale: 'fr' },
    ]);
    const fr = expectSuccess(await api.get(`${BASE}/${data.id}`, { lang: 'fr' }));
    expect(fr.name).toBe('Gestionnaire');
    expect(fr.translations).toBeUndefined();
  });

  it.each([
    [{}, 'The name field is required.'],
    [{ name: '' }, 'The name field is required.'],
    [{ name: 'x'.repeat(256) }, 'The name may not be greater than 255 characters.'],
    [{ name: 'x', group: [999999] }, 'The selected group.0 is invalid.'],
    [{ name: 'x', group: ['a'] }, 'The group.0 must be an integer.'],
    [{ name: 'x', 'slug:fr': 'x' }, 'The slug:fr field is not translatable.'],
  ] as Array<[Record<string, unknown>, string]>)('422 %j', async (body, message) => {
    expectError(await api.post(BASE, body), 422, message);
  });

  it('422 for a user group, an unknown permission or a value that is not a flag', async () => {
    expectError(await api.postJson(BASE, { name: 'x', group: [operatorGroup.id, userGroup.id] }), 422, 'The selected group.1 is invalid.');
    expectError(await api.postJson(BASE, { name: 'x', permission: { [permissions[0].id]: 1, 999999: 1 } }), 422, 'The selected permission.999999 is invalid.');
    expectError(await api.postJson(BASE, { name: 'x', permission: { [permissions[0].id]: 'yes' } }), 422, `The permission.${permissions[0].id} field must be true or false.`);
    expectError(await api.postJson(BASE, { name: 'x', permission: [1, 1] }), 422, 'The permission must be an array keyed by permission id (permission[<id>]=1).');
    expect(await Role.count({ where: { name: 'x' } })).toBe(0);
  });
});

describe('GET /api/user/role/{id}', () => {
  it('shows a role', async () => {
    const created = await createRole({ permission: { [permissions[1].id]: 1 } });
    expect(expectSuccess(await api.get(`${BASE}/${created.id}`))).toEqual(created);
  });

  it('404', async () => {
    expectNotFound(await api.get(`${BASE}/999999`), 'role');
  });
});

describe('PUT /api/user/role/{id}', () => {
  it('changes the given fields; a new name gives a new slug', async () => {
    const created = await createRole({ description: 'd', permission: { [permissions[0].id]: 1 } });
    const name = unique('Renamed Role');
    const data = expectSuccess(await api.put(`${BASE}/${created.id}`, { name }), 'Successfully updated the role!');
    expect(data).toMatchObject({ id: created.id, name, slug: name.toLowerCase().replace(' ', '-'), description: 'd' });
    expect(data.permissions.map((p: any) => p.id)).toEqual([permissions[0].id]);
    const same = expectSuccess(await api.put(`${BASE}/${created.id}`, { description: 'e' }), 'Successfully updated the role!');
    expect(same.slug).toBe(data.slug);
  });

  it('replaces the permissions and the groups when given', async () => {
    const created = await createRole({ group: [operatorGroup.id], permission: { [permissions[0].id]: 1, [permissions[1].id]: 1 } });
    const data = expectSuccess(await api.putJson(`${BASE}/${created.id}`, { permission: { [permissions[1].id]: 0, [permissions[2].id]: 1 } }), 'Successfully updated the role!');
    expect(data.permissions.map((p: any) => p.id)).toEqual([permissions[2].id]);
    expect(await RoleGroup.count({ where: { role_id: created.id } })).toBe(1);
    expect(data.groups.map((g: any) => g.id)).toEqual([operatorGroup.id]);
    expect(expectSuccess(await api.put(`${BASE}/${created.id}`, { group: '' }), 'Successfully updated the role!').groups).toEqual([]);
    expect(await RoleGroup.count({ where: { role_id: created.id } })).toBe(0);
    expectSuccess(await api.put(`${BASE}/${created.id}`, { permission: '' }), 'Successfully updated the role!');
    expect(await RolePermission.count({ where: { role_id: created.id } })).toBe(0);
  });

  it('an update carrying only name:fr deletes the de translation', async () => {
    const created = await createRole({ name: 'Agent', 'name:de': 'Mitarbeiter' });
    const data = expectSuccess(await api.put(`${BASE}/${created.id}`, { 'name:fr': 'Agent FR' }), 'Successfully updated the role!');
    expect(data.translations).toEqual([{ role_id: created.id, name: 'Agent FR', description: null, locale: 'fr' }]);
    expect(expectSuccess(await api.get(`${BASE}/${created.id}`, { lang: 'fr' })).name).toBe('Agent FR');
    expect(await Translation.count({ where: { record_type: 'role', record_id: created.id, locale: 'de' } })).toBe(0);
  });

  it('404 and 422', async () => {
    expectNotFound(await api.put(`${BASE}/999999`, { name: 'x' }), 'role');
    const created = await createRole();
    expectError(await api.put(`${BASE}/${created.id}`, { name: '' }), 422, 'The name field is required.');
    expectError(await api.put(`${BASE}/${created.id}`, { group: [userGroup.id] }), 422, 'The selected group.0 is invalid.');
    expectError(await api.putJson(`${BASE}/${created.id}`, { permission: { 999999: 1 } }), 422, 'The selected permission.999999 is invalid.');
  });
});

describe('DELETE /api/user/role/{id}', () => {
  it('deletes the role, its links and translations', async () => {
    const created = await createRole({ 'name:fr': 'Rôle', group: [operatorGroup.id], permission: { [permissions[0].id]: 1 } });
    const res = await api.del(`${BASE}/${created.id}`);
    expectDeleted(res, 'role');
    expect(await Role.findByPk(created.id)).toBeNull();
    expect(await RolePermission.count({ where: { role_id: created.id } })).toBe(0);
    expect(await RoleGroup.count({ where: { role_id: created.id } })).toBe(0);
    expect(await Translation.count({ where: { record_type: 'role', record_id: created.id } })).toBe(0);
    expectNotFound(await api.del(`${BASE}/${created.id}`), 'role');
  });
});

describe('GET /api/user/role', () => {
  it('lists roles with paging and sorting', async () => {
    await createRole();
    await createRole();
    const all = await api.get(BASE, { limit: 1000 });
    const data = expectList(all);
    expect(all.body.count).toBe(await Role.count());
    expect(data.map((r) => r.id)).toEqual([...data.map((r) => r.id)].sort((a, b) => a - b));
    const page = await api.get(BASE, { start: 2, limit: 1 });
    expect(expectList(page).map((r) => r.id)).toEqual([data[1].id]);
    expect(page.body.count).toBe(all.body.count);
    const bySlug = expectList(await api.get(BASE, { order_column: 'slug', order_direction: 'desc', limit: 1000 })).map((r) => r.slug);
    expect(bySlug).toEqual([...bySlug].sort().reverse());
    expectError(await api.get(BASE, { order_column: 'password' }), 422, 'The selected order column is invalid.');
    expectError(await api.get(BASE, { limit: 0 }), 422, 'The limit must be at least 1.');
  });

  it('runs the same number of queries for limit=1 and limit=50', async () => {
    for (let i = 0; i < 10; i++) {
      await createRole({ 'name:fr': `r${i}`, group: [operatorGroup.id], permission: Object.fromEntries(permissions.slice(0, 3 + i).map((p) => [p.id, 1])) });
    }
    const measure = async (query: Record<string, unknown>) => {
      const { result, queries } = await countWarm(async () => api.get(BASE, query));
      expectList(result);
      return { res: result, queries: queries.filter((q) => !/api_tokens|ip_bans/.test(q)) };
    };
    for (const query of [{ order_direction: 'desc' }, { order_direction: 'desc', lang: 'fr' }]) {
      await api.get(BASE, query);
      const one = await measure({ ...query, limit: 1 });
      const fifty = await measure({ ...query, limit: 50 });
      expect(one.res.body.data).toHaveLength(1);
      expect(fifty.res.body.data.length).toBeGreaterThanOrEqual(10);
      expect(fifty.queries.length).toBe(one.queries.length);
      expect(fifty.queries.length).toBeLessThanOrEqual(7);
    }
  });
});
