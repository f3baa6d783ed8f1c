/**
 * Organisations: /api/user/organisation — create, show, list (search, brand_id, DATES, PAGING),
 * update and delete (beyond the spec), `access_level[<user id>]`, and `domain[]`.
 */
import { Group, Organisation, OrganisationDomain, User } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { useApi, unique, newEmail, nowSec } from '../helpers/app';
import { expectDeleted, expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';

const api = useApi();
const BASE = '/api/user/organisation';
const USERS = '/api/user/user';

// ---- helpers ------------------------------------------------------------------------------------

const newDomain = () => `${unique('dom')}.example.org`.toLowerCase();

const ORGANISATION_KEYS = [
  'id', 'brand_id', 'owner_id', 'name', 'country', 'language_code', 'timezone', 'notes', 'created_at', 'updated_at', 'users', 'customfields', 'domains',
].sort();
const MEMBER_KEYS = [
  'id', 'firstname', 'lastname', 'email', 'email_verified', 'organisation_id', 'organisation_access_level', 'country', 'language_code',
  'timezone', 'avatar', 'twofa_enabled', 'twofa_secret', 'twofa_token', 'twitter_id', 'twitter_handle', 'facebook_id', 'created_at',
  'updated_at', 'formatted_name',
].sort();

async function createOrganisation(form: Record<string, unknown> = {}): Promise<any> {
  return expectSuccess(await api.post(BASE, { name: unique('Org'), ...form }), 'Successfully created new organisation!');
}
async function updateOrganisation(id: number, form: Record<string, unknown>): Promise<any> {
  return expectSuccess(await api.put(`${BASE}/${id}`, form), 'Successfully updated the organisation!');
}
const showOrganisation = async (id: number) => expectSuccess(await api.get(`${BASE}/${id}`));
const listOrganisations = async (query: Record<string, unknown>) => {
  const res = await api.get(BASE, { limit: 1000, ...query });
  return { data: expectList(res), count: res.body.count as number };
};
async function createUser(form: Record<string, unknown> = {}): Promise<any> {
  return expectSuccess(await api.post(USERS, { email: newEmail('o'), ...form }), 'Successfully created new user!');
}
const showUser = async (id: number) => expectSuccess(await api.get(`${USERS}/${id}`));
async function createOperator(): Promise<any> {
  const group = await Group.findOne({ where: { type: 'operator' }, order: [['id', 'ASC']] });
  return expectSuccess(await api.post('/api/user/operator', { firstname: 'Op', lastname: unique('Erator'), email: newEmail('op'), groups: [group!.id] }), 'Successfully created new operator!');
}
const ids = (rows: Array<{ id: number }>) => rows.map((r) => r.id).sort((a, b) => a - b);
/** [user id, access level] of an organisation's users. */
const members = (org: any) => org.users.map((u: any) => [u.id, u.organisation_access_level]).sort((a: number[], b: number[]) => a[0] - b[0]);

function expectOrganisationTypes(o: any) {
  expect(Object.keys(o).sort()).toEqual(ORGANISATION_KEYS);
  for (const k of ['id', 'brand_id', 'created_at', 'updated_at']) expect(Number.isInteger(o[k])).toBe(true);
  expect(o.owner_id === null || Number.isInteger(o.owner_id)).toBe(true);
  for (const k of ['users', 'customfields', 'domains']) expect(Array.isArray(o[k])).toBe(true);
  for (const u of o.users) {
    expect(Object.keys(u).sort()).toEqual(MEMBER_KEYS);
    expect([0, 1]).toContain(u.email_verified);
    expect([0, 1]).toContain(u.twofa_enabled);
    expect(u).not.toHaveProperty('password');
  }
}

let otherBrandId: number;
beforeAll(async () => {
  otherBrandId = expectSuccess(await api.post('/api/core/brand', { name: unique('Brand') }), 'Successfully created new brand!').id;
});

// ---- create -------------------------------------------------------------------------------------

describe('POST /api/user/organisation', () => {
  it('creates an organisation with only a name, in the default brand', async () => {
    const before = nowSec();
    const name = unique('Acme');
    const o = await createOrganisation({ name });
    expectOrganisationTypes(o);
    expect(o).toMatchObject({
      brand_id: 1, owner_id: null, name, country: null, language_code: null, timezone: null, notes: null, users: [], customfields: [], domains: [],
    });
    expect(o.created_at).toBeGreaterThanOrEqual(before);
    expect(o.created_at).toBeLessThanOrEqual(nowSec());
  });

  it('creates an organisation with every field', async () => {
    const domain = newDomain();
    const o = await createOrganisation({
      brand_id: otherBrandId, country: 'it', language_code: 'FR', timezone: 'Europe/Rome', notes: 'Only for operators.\nSecond line.', domain: [domain.toUpperCase()],
    });
    expect(o).toMatchObject({ brand_id: otherBrandId, country: 'IT', language_code: 'fr', timezone: 'Europe/Rome', notes: 'Only for operators.\nSecond line.', domains: [domain] });
    expect((await OrganisationDomain.findAll({ where: { organisation_id: o.id } })).map((d) => d.domain)).toEqual([domain]);
  });

  it.each([
    ['a missing name', () => ({ name: undefined }), 'The name field is required.'],
    ['an empty name', () => ({ name: ' ' }), 'The name field is required.'],
    ['an unknown brand_id', () => ({ brand_id: 999999 }), 'The selected brand id is invalid.'],
    ['an unknown language_code', () => ({ language_code: 'zz' }), 'The selected language code is invalid.'],
    ['an unknown timezone', () => ({ timezone: 'Atlantis/Capital' }), 'The selected timezone is invalid.'],
    ['a malformed domain', () => ({ domain: ['not a domain'] }), /^The domain\.0 /],
    ['an unknown custom field', () => ({ customfield: { 999999: 'x' } }), 'The selected customfield.999999 is invalid.'],
  ] as Array<[string, () => Record<string, unknown>, string | RegExp]>)('refuses %s and creates nothing', async (_name, extra, message) => {
    const name = unique('Refused');
    const form = Object.fromEntries(Object.entries({ name, ...extra() }).filter(([, v]) => v !== undefined));
    expectError(await api.post(BASE, form), 422, message);
    expect(await Organisation.count({ where: { name } })).toBe(0);
  });
});

// ---- show ---------------------------------------------------------------------------------------

describe('GET /api/user/organisation/{id}', () => {
  it('shows the organisation with its users, custom fields and domains', async () => {
    const owner = await createUser({ firstname: 'Olga', lastname: 'Owner', organisation: unique('Shown') });
    const member = await createUser({ organisation_id: owner.organisation_id });
    const o = await showOrganisation(owner.organisation_id);
    expectOrganisationTypes(o);
    expect(o).toMatchObject({ id: owner.organisation_id, owner_id: owner.id, brand_id: 1 });
    expect(members(o)).toEqual([[owner.id, 0], [member.id, 1]]);
    const shownOwner = await showUser(owner.id);
    expect(o.users.find((u: any) => u.id === owner.id)).toEqual(Object.fromEntries(MEMBER_KEYS.map((k) => [k, shownOwner[k]])));
    expect(o.users.find((u: any) => u.id === owner.id).formatted_name).toBe('Olga Owner');
  });

  it('does not list operators among its users', async () => {
    const org = await createOrganisation();
    // Operators have no organisation through the API: put one there directly.
    const operator = await createOperator();
    await sequelize().query('UPDATE users SET organisation_id = ?, organisation_access_level = 1 WHERE id = ?', { replacements: [org.id, operator.id] });
    const user = await createUser({ organisation_id: org.id });
    expect(members(await showOrganisation(org.id))).toEqual([[user.id, 1]]);
  });

  it.each(['999999999', 'abc', '0'])('answers 404 for the id %s', async (id) => {
    expectNotFound(await api.get(`${BASE}/${id}`), 'organisation');
  });
});

// ---- access_level -------------------------------------------------------------------------------

describe('access_level[<user id>]', () => {
  it('works for users whatever their id (small ids included)', async () => {
    // A form parser reads `x[5]=0` as an array element when 5 is a small index: the key must still
    // count as a user id. The smallest user of the brand (ids start at 1 in a fresh database).
    const smallest = await User.findOne({ where: { type: 'user', brand_id: 1 }, order: [['id', 'ASC']] });
    const user = smallest ?? (await User.findByPk((await createUser()).id))!;
    const o = await createOrganisation({ access_level: { [user.id]: 1 } });
    expect(members(o)).toEqual([[user.id, 1]]);
  });

  describe('(users with ids above 200)', () => {
    // The other tests do not depend on the size of user ids: new users get ids above 200.
    beforeAll(async () => {
      const max = (await User.max('id')) as number | null;
      if ((max ?? 0) < 200) await User.create({ id: 200, type: 'user', brand_id: 1, email: newEmail('placeholder') });
    });

    it('puts users in the new organisation at the given levels', async () => {
      const [a, b] = [await createUser(), await createUser()];
      const o = await createOrganisation({ access_level: { [a.id]: 0, [b.id]: 1 } });
      expect(members(o)).toEqual([[a.id, 0], [b.id, 1]]);
      expect(await showUser(a.id)).toMatchObject({ organisation_id: o.id, organisation_access_level: 0 });
      expect(await showUser(b.id)).toMatchObject({ organisation_id: o.id, organisation_access_level: 1 });
    });

    it('moves users from another organisation and changes levels on update', async () => {
      const first = await createOrganisation();
      const u = await createUser({ organisation_id: first.id });
      const second = await createOrganisation();
      const updated = await updateOrganisation(second.id, { access_level: { [u.id]: 0 } });
      expect(members(updated)).toEqual([[u.id, 0]]);
      expect(members(await showOrganisation(first.id))).toEqual([]);
      expect(members(await updateOrganisation(second.id, { access_level: { [u.id]: 1 } }))).toEqual([[u.id, 1]]);
    });

    it('refuses a user of another brand, creating nothing', async () => {
      const mine = await createUser();
      const theirs = await createUser({ brand_id: otherBrandId });
      const name = unique('Mixed');
      expectError(await api.post(BASE, { name, access_level: { [mine.id]: 0, [theirs.id]: 1 } }), 422, `The selected access level.${theirs.id} is invalid.`);
      expect(await Organisation.count({ where: { name } })).toBe(0);
      expect(await showUser(mine.id)).toMatchObject({ organisation_id: null, organisation_access_level: null });
    });

    it('refuses an operator or an unknown id', async () => {
      const operator = await createOperator();
      expectError(await api.post(BASE, { name: unique('Op org'), access_level: { [operator.id]: 0 } }), 422, `The selected access level.${operator.id} is invalid.`);
      expectError(await api.post(BASE, { name: unique('Ghost org'), access_level: { 999999999: 0 } }), 422, 'The selected access level.999999999 is invalid.');
    });

    it('refuses a key that is no user id, like role permissions, and changes nothing', async () => {
      const o = await createOrganisation();
      for (const key of ['abc', '-1', '1.5']) {
        expectError(await api.put(`${BASE}/${o.id}`, { notes: 'Changed', access_level: { [key]: 1 } }), 422, `The selected access level.${key} is invalid.`);
      }
      expect((await showOrganisation(o.id)).notes).toBeNull();
      expectError(await api.post(BASE, { name: unique('Key'), access_level: { abc: 0 } }), 422, 'The selected access level.abc is invalid.');
    });

    it('refuses a level other than 0 or 1', async () => {
      const u = await createUser();
      const name = unique('Level');
      expectError(await api.post(BASE, { name, access_level: { [u.id]: 2 } }), 422, /^The access level\.\d+ field must be true or false\.$/);
      expect(await Organisation.count({ where: { name } })).toBe(0);
    });
  });
});

// ---- domains ------------------------------------------------------------------------------------

describe('domain[]', () => {
  it('stores the domains and returns them in `domains`', async () => {
    const [d1, d2] = [newDomain(), newDomain()];
    const o = await createOrganisation({ domain: [d1, d2] });
    expect([...o.domains].sort()).toEqual([d1, d2].sort());
    expect([...(await showOrganisation(o.id)).domains].sort()).toEqual([d1, d2].sort());
  });

  it('replaces the domains on update', async () => {
    const [d1, d2] = [newDomain(), newDomain()];
    const o = await createOrganisation({ domain: [d1] });
    expect((await updateOrganisation(o.id, { domain: [d2] })).domains).toEqual([d2]);
    // The old domain is free for another organisation of the brand.
    expect((await createOrganisation({ domain: [d1] })).domains).toEqual([d1]);
  });

  it('clears the domains with an empty value (`domain=`), as a ticket\'s `tag=` clears its tags', async () => {
    const d1 = newDomain();
    const o = await createOrganisation({ domain: [d1] });
    expect(await updateOrganisation(o.id, { domain: '' })).toMatchObject({ domains: [] });
    expect((await showOrganisation(o.id)).domains).toEqual([]);
    expect(await OrganisationDomain.count({ where: { organisation_id: o.id } })).toBe(0);
    // The domain is free again; an empty value on create is no domain.
    expect((await createOrganisation({ domain: '' })).domains).toEqual([]);
    expect((await createOrganisation({ domain: [d1] })).domains).toEqual([d1]);
  });

  it('refuses a domain claimed by another organisation of the brand', async () => {
    const [taken, free] = [newDomain(), newDomain()];
    const owner = await createOrganisation({ domain: [taken] });
    const name = unique('Claimer');
    expectError(await api.post(BASE, { name, domain: [free, taken.toUpperCase()] }), 422, 'The domain.1 has already been taken.');
    expect(await Organisation.count({ where: { name } })).toBe(0);
    const other = await createOrganisation({ domain: [free] });
    expectError(await api.put(`${BASE}/${other.id}`, { domain: [taken], name: 'Renamed' }), 422, 'The domain.0 has already been taken.');
    expect(await showOrganisation(other.id)).toMatchObject({ name: other.name, domains: [free] });
    // The organisation may keep its own domain.
    expect((await updateOrganisation(owner.id, { domain: [taken] })).domains).toEqual([taken]);
  });

  it('creates organisations with domains concurrently', async () => {
    // Requests of different clients arrive at the same time: none may fail for the others.
    const names = Array.from({ length: 8 }, () => unique('Concurrent'));
    const results = await Promise.all(names.map((name) => api.post(BASE, { name, domain: [newDomain()] })));
    expect(results.map((r) => [r.status, r.body.message])).toEqual(names.map(() => [200, 'Successfully created new organisation!']));
    expect(await Organisation.count({ where: { name: names } })).toBe(names.length);
  });

  it('allows the same domain in another brand', async () => {
    const d = newDomain();
    await createOrganisation({ domain: [d] });
    expect((await createOrganisation({ domain: [d], brand_id: otherBrandId })).domains).toEqual([d]);
  });
});

// ---- list ---------------------------------------------------------------------------------------

describe('GET /api/user/organisation', () => {
  const tag = unique('Lst').toLowerCase();
  let a: any;
  let b: any;
  let c: any;

  beforeAll(async () => {
    a = await createOrganisation({ name: `Alpha ${tag}` });
    b = await createOrganisation({ name: `Beta ${tag}`, domain: [newDomain()] });
    c = await createOrganisation({ name: `Gamma ${tag}`, brand_id: otherBrandId });
    await createUser({ organisation_id: b.id });
  });

  it('lists organisations with their users and the total in count', async () => {
    const { data, count } = await listOrganisations({ search: tag });
    expect(ids(data)).toEqual(ids([a, b, c]));
    expect(count).toBe(3);
    data.forEach(expectOrganisationTypes);
    expect(data.find((o) => o.id === b.id)).toEqual(await showOrganisation(b.id));
    const page = await api.get(BASE, { search: tag, limit: 1 });
    expect(expectList(page)).toHaveLength(1);
    expect(page.body.count).toBe(3);
  });

  it('filters by search on the name', async () => {
    expect(ids((await listOrganisations({ search: `beta ${tag}` })).data)).toEqual([b.id]);
    expect(ids((await listOrganisations({ search: `A ${tag}` })).data)).toEqual(ids([a, b, c]));
    expect(await listOrganisations({ search: `${tag}_` })).toEqual({ data: [], count: 0 });
  });

  it('filters by brand_id', async () => {
    expect(ids((await listOrganisations({ search: tag, brand_id: otherBrandId })).data)).toEqual([c.id]);
    expect(ids((await listOrganisations({ search: tag, brand_id: 1 })).data)).toEqual(ids([a, b]));
    expectError(await api.get(BASE, { brand_id: 'one' }), 422, 'The brand id must be an integer.');
  });

  it('pages and orders', async () => {
    expect((await listOrganisations({ search: tag, order_column: 'name', order_direction: 'desc' })).data.map((o) => o.id)).toEqual([c.id, b.id, a.id]);
    const res = await api.get(BASE, { search: tag, start: 2, limit: 1 });
    expect(expectList(res).map((o) => o.id)).toEqual([b.id]);
    expect(res.body.count).toBe(3);
    expectError(await api.get(BASE, { order_column: 'notes' }), 422, 'The selected order column is invalid.');
  });

  describe('DATES', () => {
    beforeAll(async () => {
      const set = (id: number, created: number, updated: number) =>
        sequelize().query('UPDATE organisations SET created_at = ?, updated_at = ? WHERE id = ?', { replacements: [created, updated, id] });
      await set(a.id, 1_300_000_000, 1_350_000_000);
      await set(b.id, 1_300_000_010, 1_350_000_010);
    });

    it.each([
      [{ created_at_min: 1_300_000_010 }, ['b', 'c']],
      [{ created_at_max: 1_300_000_000 }, ['a']],
      [{ created_at_min: 1_300_000_000, created_at_max: 1_300_000_010 }, ['a', 'b']],
      [{ updated_at_min: 1_350_000_011 }, ['c']],
      [{ updated_at_max: 1_350_000_010 }, ['a', 'b']],
      [{ updated_at_min: 1_350_000_001, updated_at_max: 1_350_000_010 }, ['b']],
    ] as Array<[Record<string, number>, string[]]>)('%j', async (query, expected) => {
      const byName: Record<string, any> = { a, b, c };
      const { data, count } = await listOrganisations({ search: tag, ...query });
      expect(ids(data)).toEqual(ids(expected.map((k) => byName[k])));
      expect(count).toBe(expected.length);
    });
  });
});

// ---- update -------------------------------------------------------------------------------------

describe('PUT /api/user/organisation/{id}', () => {
  it('changes only the given fields', async () => {
    const created = await createOrganisation({ country: 'GB', language_code: 'en', timezone: 'Europe/London', notes: 'Keep me' });
    const name = unique('Renamed');
    const o = await updateOrganisation(created.id, { name });
    expectOrganisationTypes(o);
    expect(o).toMatchObject({ id: created.id, name, brand_id: 1, country: 'GB', language_code: 'en', timezone: 'Europe/London', notes: 'Keep me' });
    expect(await showOrganisation(created.id)).toEqual(o);
    expect(await updateOrganisation(created.id, { notes: '', country: 'fr' })).toMatchObject({ name, notes: null, country: 'FR' });
  });

  it('moves an organisation without users to another brand, but not one with users', async () => {
    const empty = await createOrganisation();
    expect(await updateOrganisation(empty.id, { brand_id: otherBrandId })).toMatchObject({ brand_id: otherBrandId });
    const used = await createOrganisation();
    await createUser({ organisation_id: used.id });
    const res = await api.put(`${BASE}/${used.id}`, { brand_id: otherBrandId });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ status: 'error', data: null });
    expect((await showOrganisation(used.id)).brand_id).toBe(1);
  });

  it('leaves the organisation unchanged when the update is refused', async () => {
    const created = await createOrganisation({ notes: 'Original' });
    const before = await showOrganisation(created.id);
    expectError(await api.put(`${BASE}/${created.id}`, { notes: 'Lost', language_code: 'zz' }), 422, 'The selected language code is invalid.');
    expectError(await api.put(`${BASE}/${created.id}`, { notes: 'Lost', brand_id: 999999 }), 422, 'The selected brand id is invalid.');
    expectError(await api.put(`${BASE}/${created.id}`, { notes: 'Lost', access_level: { 999999999: 1 } }), 422, 'The selected access level.999999999 is invalid.');
    expectError(await api.put(`${BASE}/${created.id}`, { name: '' }), 422, 'The name field is required.');
    expect(await showOrganisation(created.id)).toEqual(before);
  });

  it.each(['999999999', 'abc'])('answers 404 for the id %s', async (id) => {
    expectNotFound(await api.put(`${BASE}/${id}`, { name: 'X' }), 'organisation');
  });
});

// ---- delete -------------------------------------------------------------------------------------

describe('DELETE /api/user/organisation/{id}', () => {
  it('deletes the organisation and leaves its users without one', async () => {
    const domain = newDomain();
    const owner = await createUser({ organisation: unique('Doomed') });
    const orgId = owner.organisation_id;
    await updateOrganisation(orgId, { domain: [domain] });
    const member = await createUser({ organisation_id: orgId });
    const res = await api.del(`${BASE}/${orgId}`);
    expectDeleted(res, 'organisation');
    expectNotFound(await api.get(`${BASE}/${orgId}`), 'organisation');
    expectNotFound(await api.del(`${BASE}/${orgId}`), 'organisation');
    for (const id of [owner.id, member.id]) {
      expect(await showUser(id)).toMatchObject({ organisation_id: null, organisation_access_level: null, organisation: null });
    }
    expect(await OrganisationDomain.count({ where: { organisation_id: orgId } })).toBe(0);
    // Its domain no longer claims new users.
    expect(await createUser({ email: `late@${domain}` })).toMatchObject({ organisation_id: null });
  });

  it('keeps an organisation whose owner is deleted, without an owner', async () => {
    const owner = await createUser({ organisation: unique('Orphan') });
    const res = await api.del(`${USERS}/${owner.id}`);
    expect(res.body).toEqual({ status: 'success', message: 'Successfully deleted the user!', data: null });
    expect(await showOrganisation(owner.organisation_id)).toMatchObject({ owner_id: null, users: [] });
  });

  it.each(['999999999', 'abc'])('answers 404 for the id %s', async (id) => {
    expectNotFound(await api.del(`${BASE}/${id}`), 'organisation');
  });
});
