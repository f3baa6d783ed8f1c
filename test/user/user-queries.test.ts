/**
 * The user, operator and organisation lists run the same number of SQL statements for a page of
 * 1 and a page of 50, whatever the records of the page hold (phones, groups, additional emails,
 * organisations, custom field values, users, domains): relations are loaded per page, never per record.
 */
import { CustomField, CustomFieldValue, Department, Group, User } from '../../src/db/models';
import { countQueries } from '../../src/db/sequelize';
import { useApi, unique } from '../helpers/app';
import { expectList, expectSuccess } from '../helpers/envelope';
import { countWarm, measureList } from '../helpers/queries';

const api = useApi();
const RECORDS = 55;

const measure = (path: string, query: Record<string, unknown>) => measureList(api, path, query);

/** Runs `make(i)` for i in [0, n), one at a time by default (concurrent writes have their own tests). */
async function inBatches<T>(n: number, make: (i: number) => Promise<T>, size = 1): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i += size) out.push(...(await Promise.all(Array.from({ length: Math.min(size, n - i) }, (_, j) => make(i + j)))));
  return out;
}

const tag = unique('Qry').toLowerCase();
const phoneBase = Math.floor(Math.random() * 9_000_000);
const phone = (i: number, k: number) => `+44208${String((phoneBase + i * 2 + k) % 10_000_000).padStart(7, '0')}`;

beforeAll(async () => {
  const registered = (await Group.findOne({ where: { type: 'user', name: 'Registered' } }))!.id;
  const customers = (await Group.create({ type: 'user', name: unique('Query customers') })).id;
  const admins = (await Group.findOne({ where: { type: 'operator', name: 'Administrators' } }))!.id;
  const agents = (await Group.create({ type: 'operator', name: unique('Query agents') })).id;
  const dept = (await Department.findOne({ where: { name: 'General Enquiries' } }))!.id;
  const userField = await CustomField.create({ kind: 'user', name: unique('Query user field'), type: 8 });
  const orgField = await CustomField.create({ kind: 'organisation', name: unique('Query org field'), type: 8 });

  const orgs = await inBatches(RECORDS, async (i) => expectSuccess(await api.post('/api/user/organisation', {
    name: `Org ${tag} ${i}`, notes: `Notes ${i}`, country: 'GB', domain: [`${tag}-${i}.example.net`],
  }), 'Successfully created new organisation!'));

  const users = await inBatches(RECORDS, async (i) => expectSuccess(await api.post('/api/user/user', {
    email: `user${i}.${tag}@example.com`, firstname: `First${i}`, lastname: `Q${tag}`, country: 'GB',
    phone: [phone(i, 0), phone(i, 1)], groups: [registered, customers], additional_email: [`alt${i}.${tag}@example.org`],
    // Half join an organisation of the list; the other half found their own (named with the tag too).
    ...(i % 2 ? { organisation_id: orgs[i].id, organisation_access_level: i % 4 === 1 ? 0 : 1 } : { organisation: `Own org ${tag} ${i}` }),
  }), 'Successfully created new user!'));

  await inBatches(RECORDS, async (i) => expectSuccess(await api.post('/api/user/operator', {
    firstname: `Agent${i}`, lastname: `Q${tag}`, email: `agent${i}.${tag}@example.com`, groups: [admins, agents],
    phone: [`+44207${String((phoneBase + 5000 + i) % 10_000_000).padStart(7, '0')}`], depts: [dept],
  }), 'Successfully created new operator!'));

  // Custom field values (set directly: custom fields have their own tests).
  await CustomFieldValue.bulkCreate(users.map((u) => ({ field_id: userField.id, owner_id: u.id, value: `user value ${u.id}` })));
  await CustomFieldValue.bulkCreate(orgs.map((o) => ({ field_id: orgField.id, owner_id: o.id, value: `org value ${o.id}` })));
});

describe('list endpoints of the User area run a fixed number of queries whatever the page size', () => {
  it.each([
    ['/api/user/user', { lastname: tag }],
    ['/api/user/user', { search: tag }],
    ['/api/user/user', { organisation_name: tag }],
    ['/api/user/user', { lastname: tag, order_column: 'email', order_direction: 'desc' }],
    ['/api/user/user', { lastname: tag, active: 1, email_verified: 0, brand_id: 1, country: 'GB', created_at_min: 1 }],
    // Unfiltered, newest first: the pages hold this file's records, not other tests'.
    ['/api/user/user', { order_direction: 'desc' }],
    ['/api/user/operator', { active: 1, order_direction: 'desc' }],
    ['/api/user/operator', { order_column: 'lastname', order_direction: 'desc' }],
    ['/api/user/operator', { order_direction: 'desc' }],
    ['/api/user/organisation', { search: tag }],
    ['/api/user/organisation', { search: tag, brand_id: 1, order_column: 'name' }],
    ['/api/user/organisation', { order_direction: 'desc' }],
  ] as Array<[string, Record<string, unknown>]>)('GET %s %j', async (path, query) => {
    await api.get(path, query); // warm-up
    const one = await measure(path, { ...query, limit: 1 });
    const fifty = await measure(path, { ...query, limit: 50 });
    expect(expectList(one.res)).toHaveLength(1);
    expect(fifty.res.body.count).toBeGreaterThanOrEqual(50);
    expect(expectList(fifty.res)).toHaveLength(50);
    // A relation no record of a page has costs one statement less (its targets are not looked up),
    // so a page of one may run fewer; fifty never run more than the fixed bound.
    expect(fifty.queries.length).toBeGreaterThanOrEqual(one.queries.length);
    expect(fifty.queries.length).toBeLessThanOrEqual(one.queries.length + 3);
    expect(fifty.queries.length).toBeLessThanOrEqual(12);
  });

  it('pages of users hold phones, groups, organisations and custom field values', async () => {
    const res = await api.get('/api/user/user', { lastname: tag, limit: 50 });
    const page = expectList(res);
    expect(page).toHaveLength(50);
    for (const u of page) {
      expect(u.phonenumbers).toHaveLength(2);
      expect(u.groups).toHaveLength(2);
      expect(u.customfields).toHaveLength(1);
      expect(Number.isInteger(u.organisation_id)).toBe(true);
    }
    // Additional emails are in the data the lists filter on.
    const byAlt = await api.get('/api/user/user', { email: `alt7.${tag}@example.org` });
    expect(expectList(byAlt).map((u) => u.email)).toEqual([`user7.${tag}@example.com`]);
  });

  it('pages of operators hold phones and groups', async () => {
    const page = expectList(await api.get('/api/user/operator', { limit: 50, order_direction: 'desc' }));
    const mine = page.filter((o) => o.lastname === `Q${tag}`);
    expect(mine.length).toBeGreaterThanOrEqual(50);
    for (const o of mine) {
      expect(o.phonenumbers).toHaveLength(1);
      expect(o.groups).toHaveLength(2);
    }
  });

  it('pages of organisations hold users, custom field values and domains', async () => {
    const page = expectList(await api.get('/api/user/organisation', { search: `Org ${tag}`, limit: 50 }));
    expect(page).toHaveLength(50);
    for (const o of page) {
      expect(o.customfields).toHaveLength(1);
      expect(o.domains).toHaveLength(1);
    }
    expect(page.filter((o) => o.users.length > 0).length).toBeGreaterThanOrEqual(20);
  });

  it('lists and shows users and operators without reading their password hashes', async () => {
    const person = await User.findOne({ where: { lastname: `Q${tag}`, type: 'user' }, rejectOnEmpty: true });
    const operator = await User.findOne({ where: { lastname: `Q${tag}`, type: 'operator' }, rejectOnEmpty: true });
    for (const path of ['/api/user/user', `/api/user/user/${person.id}`, '/api/user/operator', `/api/user/operator/${operator.id}`]) {
      const { result, queries } = await countWarm(() => api.get(path, { limit: 5 }));
      expect(result.status).toBe(200);
      const own = queries.filter((q) => /\bFROM `users`/.test(q));
      expect(own.length).toBeGreaterThan(0);
      for (const q of own) expect(q).not.toMatch(/`password`/);
    }
  });

  it('counts the queries of the relations it loads', async () => {
    const { queries } = await measure('/api/user/user', { lastname: tag, limit: 5 });
    for (const table of ['users', 'user_phones', 'user_groups', 'groups', 'custom_field_values']) {
      expect(queries.some((q) => new RegExp(`\\b\`?${table}\`?\\b`).test(q))).toBe(true);
    }
    const show = await countQueries(async () => api.get('/api/user/organisation', { search: tag, limit: 5 }));
    for (const table of ['organisations', 'organisation_domains', 'custom_field_values']) {
      expect(show.queries.some((q) => new RegExp(`\\b\`?${table}\`?\\b`).test(q))).toBe(true);
    }
  });
});
