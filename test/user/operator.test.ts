/**
 * Operators: /api/user/operator — create, show, list (email, active, DATES, PAGING), update,
 * delete, groups and departments, passwords, the verification mail, and operators kept apart
 * from users.
 */
import { Op } from 'sequelize';
import { Department, Group, OperatorDepartment, OutboxEntry, User, UserPhone } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { useApi, unique, newEmail, nowSec, phoneNumbers } from '../helpers/app';
import { expectDeleted, expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';

const api = useApi();
const BASE = '/api/user/operator';

// ---- helpers ------------------------------------------------------------------------------------

const newPhone = phoneNumbers('3');

const OPERATOR_FIELDS = [
  'id', 'firstname', 'lastname', 'email', 'email_verified', 'active', 'organisation_id', 'organisation_access_level', 'country',
  'language_code', 'timezone', 'avatar', 'twofa_enabled', 'twofa_secret', 'twofa_token', 'twitter_id', 'twitter_handle', 'facebook_id',
  'created_at', 'updated_at', 'formatted_name', 'phonenumbers', 'groups',
];
const CREATE_OMITS = ['avatar', 'twofa_enabled', 'twofa_secret', 'twofa_token', 'twitter_id', 'twitter_handle', 'facebook_id'];
const SHOW_KEYS = [...OPERATOR_FIELDS].sort();
const CREATE_KEYS = SHOW_KEYS.filter((k) => !CREATE_OMITS.includes(k));

let adminGroupId: number;
let secondGroupId: number;
let registeredGroupId: number;
let departmentId: number;
let settings: Record<string, string>;

beforeAll(async () => {
  adminGroupId = (await Group.findOne({ where: { type: 'operator', name: 'Administrators' } }))!.id;
  registeredGroupId = (await Group.findOne({ where: { type: 'user', name: 'Registered' } }))!.id;
  secondGroupId = (await Group.create({ type: 'operator', name: unique('Agents'), description: 'Front line', colour: '#00ff00' })).id;
  departmentId = (await Department.findOne({ where: { name: 'General Enquiries' } }))!.id;
  settings = expectSuccess(await api.get('/api/core/settings'));
});

const validForm = (form: Record<string, unknown> = {}) => ({
  firstname: 'Olive', lastname: unique('Operator'), email: newEmail('op'), groups: [adminGroupId], ...form,
});
async function createOperator(form: Record<string, unknown> = {}): Promise<any> {
  return expectSuccess(await api.post(BASE, validForm(form)), 'Successfully created new operator!');
}
async function updateOperator(id: number, form: Record<string, unknown>): Promise<any> {
  return expectSuccess(await api.put(`${BASE}/${id}`, form), 'Successfully updated the operator!');
}
const showOperator = async (id: number) => expectSuccess(await api.get(`${BASE}/${id}`));
const listOperators = async (query: Record<string, unknown>) => {
  const res = await api.get(BASE, { limit: 1000, ...query });
  return { data: expectList(res), count: res.body.count as number };
};
const ids = (rows: Array<{ id: number }>) => rows.map((r) => r.id).sort((a, b) => a - b);

function expectOperatorTypes(o: any) {
  for (const k of ['id', 'created_at', 'updated_at']) expect(Number.isInteger(o[k])).toBe(true);
  for (const k of ['email_verified', 'active']) expect([0, 1]).toContain(o[k]);
  if ('twofa_enabled' in o) expect([0, 1]).toContain(o.twofa_enabled);
  expect(Array.isArray(o.phonenumbers)).toBe(true);
  expect(Array.isArray(o.groups)).toBe(true);
  for (const k of ['brand_id', 'customfields', 'organisation', 'additional_emails', 'password', 'type']) expect(o).not.toHaveProperty(k);
}

// ---- create -------------------------------------------------------------------------------------

describe('POST /api/user/operator', () => {
  it('creates an operator with the required fields and the defaults', async () => {
    const before = nowSec();
    const form = validForm();
    const o = await createOperator(form);
    expect(Object.keys(o).sort()).toEqual(CREATE_KEYS);
    expectOperatorTypes(o);
    expect(o).toMatchObject({
      firstname: 'Olive', lastname: form.lastname, email: form.email, email_verified: 0, active: 1, organisation_id: null,
      organisation_access_level: null, country: null, language_code: settings.default_operator_language, timezone: settings.default_timezone,
      formatted_name: `Olive ${form.lastname}`, phonenumbers: [],
    });
    expect(o.created_at).toBeGreaterThanOrEqual(before);
    expect(o.groups).toEqual([{
      id: adminGroupId, name: 'Administrators', description: 'Full access to the help desk.', colour: '#e74c3c', administrator: 1,
      created_at: expect.any(Number), updated_at: expect.any(Number), pivot: { user_id: o.id, group_id: adminGroupId },
    }]);
    expect(await User.findByPk(o.id)).toMatchObject({ type: 'operator', brand_id: null, password: null });
  });

  it('creates an operator with every field', async () => {
    const phone = newPhone();
    const o = await createOperator({
      groups: [adminGroupId, secondGroupId], phone: [phone.spaced], country: 'es', language_code: 'ES', timezone: 'Europe/Madrid',
      active: 0, password: 'operator password', depts: [departmentId],
    });
    expect(o).toMatchObject({ country: 'ES', language_code: 'es', timezone: 'Europe/Madrid', active: 0 });
    expect(o.groups.map((g: any) => [g.id, g.pivot])).toEqual([
      [adminGroupId, { user_id: o.id, group_id: adminGroupId }], [secondGroupId, { user_id: o.id, group_id: secondGroupId }],
    ].sort((a: any, b: any) => a[0] - b[0]));
    expect(o.phonenumbers).toEqual([{ id: expect.any(Number), user_id: o.id, number: phone.e164, created_at: expect.any(Number), updated_at: expect.any(Number) }]);
    expect((await OperatorDepartment.findAll({ where: { user_id: o.id } })).map((d) => d.department_id)).toEqual([departmentId]);
    const row = await User.findByPk(o.id);
    expect(row!.password).toMatch(/^\$argon2/);
    expect(JSON.stringify(o)).not.toContain('operator password');
  });

  it('creates operators with phones, groups and departments concurrently', async () => {
    // Requests of different clients arrive at the same time: none may fail for the others.
    const forms = Array.from({ length: 8 }, () => validForm({ phone: [newPhone().e164], depts: [departmentId] }));
    const results = await Promise.all(forms.map((form) => api.post(BASE, form)));
    expect(results.map((r) => [r.status, r.body.message])).toEqual(forms.map(() => [200, 'Successfully created new operator!']));
    expect(await User.count({ where: { email: forms.map((f) => f.email as string) } })).toBe(forms.length);
  });

  it.each([
    ['firstname', 'The firstname field is required.'],
    ['lastname', 'The lastname field is required.'],
    ['email', 'The email field is required.'],
    ['groups', 'The groups field is required.'],
  ])('requires %s', async (missing, message) => {
    const form: Record<string, unknown> = validForm();
    delete form[missing];
    expectError(await api.post(BASE, form), 422, message);
    if (form.email) expect(await User.count({ where: { email: form.email as string } })).toBe(0);
  });

  it.each([
    ['an unknown group', () => ({ groups: [999999] }), 'The selected groups.0 is invalid.'],
    ['a user group', () => ({ groups: [registeredGroupId] }), 'The selected groups.0 is invalid.'],
    ['an unknown second group', () => ({ groups: [adminGroupId, 999999] }), 'The selected groups.1 is invalid.'],
    ['an unknown department', () => ({ depts: [999999] }), 'The selected depts.0 is invalid.'],
    ['a malformed email', () => ({ email: 'nope' }), 'The email must be a valid email address.'],
    ['a phone not in E.164', () => ({ phone: ['0207 946 0958'] }), /^The phone\.0 .*E\.164/],
    ['an unknown language_code', () => ({ language_code: 'zz' }), 'The selected language code is invalid.'],
    ['an unknown timezone', () => ({ timezone: 'Moon/Crater' }), 'The selected timezone is invalid.'],
    ['an empty firstname', () => ({ firstname: '  ' }), 'The firstname field is required.'],
  ] as Array<[string, () => Record<string, unknown>, string | RegExp]>)('refuses %s and creates nothing', async (_name, extra, message) => {
    const form = validForm(extra());
    expectError(await api.post(BASE, form), 422, message);
    expect(await User.count({ where: { lastname: form.lastname as string } })).toBe(0);
  });

  it('refuses an empty groups array', async () => {
    const form = validForm();
    expectError(await api.post(BASE, { ...form, groups: undefined, 'groups[]': '' }), 422, /^The groups/);
    expectError(await api.post(BASE, { ...form, groups: '' }), 422, /^The groups/);
    expect(await User.count({ where: { lastname: form.lastname } })).toBe(0);
  });

  it('rolls back the operator when its departments are refused', async () => {
    const phone = newPhone();
    const form = validForm({ phone: [phone.e164], depts: [departmentId, 999999] });
    expectError(await api.post(BASE, form), 422, 'The selected depts.1 is invalid.');
    expect(await User.count({ where: { email: form.email as string } })).toBe(0);
    expect(await UserPhone.count({ where: { number: phone.e164 } })).toBe(0);
  });

  it('refuses an email another operator has, whatever its case', async () => {
    const o = await createOperator();
    expectError(await api.post(BASE, validForm({ email: o.email })), 422, 'The email has already been taken.');
    expectError(await api.post(BASE, validForm({ email: o.email.toUpperCase() })), 422, 'The email has already been taken.');
    expect(await User.count({ where: { email: o.email } })).toBe(1);
  });

  it('accepts the email of a user: operators and users are separate accounts', async () => {
    const user = expectSuccess(await api.post('/api/user/user', { email: newEmail('shared') }), 'Successfully created new user!');
    const o = await createOperator({ email: user.email });
    expect(o.email).toBe(user.email);
    expect(o.id).not.toBe(user.id);
  });
});

// ---- show ---------------------------------------------------------------------------------------

describe('GET /api/user/operator/{id}', () => {
  it('shows every field of the Operator object, and no brand or custom fields', async () => {
    const created = await createOperator({ phone: [newPhone().e164] });
    const o = await showOperator(created.id);
    expect(Object.keys(o).sort()).toEqual(SHOW_KEYS);
    expectOperatorTypes(o);
    expect(o).toMatchObject({ ...created, avatar: null, twofa_enabled: 0, twofa_secret: null, twofa_token: null, twitter_id: null, twitter_handle: null, facebook_id: null });
  });

  it.each(['999999999', 'abc'])('answers 404 for the id %s', async (id) => {
    expectNotFound(await api.get(`${BASE}/${id}`), 'operator');
  });

  it('answers 404 for a user id, on show, update and delete', async () => {
    const user = expectSuccess(await api.post('/api/user/user', { email: newEmail('u') }), 'Successfully created new user!');
    expectNotFound(await api.get(`${BASE}/${user.id}`), 'operator');
    expectNotFound(await api.put(`${BASE}/${user.id}`, { firstname: 'X' }), 'operator');
    expectNotFound(await api.del(`${BASE}/${user.id}`), 'operator');
    expect(await User.findByPk(user.id)).toMatchObject({ type: 'user', firstname: null });
  });
});

// ---- update -------------------------------------------------------------------------------------

describe('PUT /api/user/operator/{id}', () => {
  it('changes only the given fields: no defaults on update', async () => {
    const created = await createOperator({ active: 0, language_code: 'de', timezone: 'Europe/Berlin', country: 'DE' });
    const o = await updateOperator(created.id, { lastname: 'Renamed' });
    expect(Object.keys(o).sort()).toEqual(SHOW_KEYS);
    expect(o).toMatchObject({ firstname: 'Olive', lastname: 'Renamed', active: 0, language_code: 'de', timezone: 'Europe/Berlin', country: 'DE', formatted_name: 'Olive Renamed' });
    expect(o.groups.map((g: any) => g.id)).toEqual([adminGroupId]);
    expect(await showOperator(created.id)).toEqual(o);
  });

  it('replaces groups, phones and departments', async () => {
    const [p1, p2] = [newPhone(), newPhone()];
    const created = await createOperator({ phone: [p1.e164], depts: [departmentId] });
    const o = await updateOperator(created.id, { groups: [secondGroupId], phone: [p2.spaced] });
    expect(o.groups.map((g: any) => [g.id, g.pivot])).toEqual([[secondGroupId, { user_id: created.id, group_id: secondGroupId }]]);
    expect(o.phonenumbers.map((p: any) => p.number)).toEqual([p2.e164]);
    expect((await OperatorDepartment.findAll({ where: { user_id: created.id } })).map((d) => d.department_id)).toEqual([departmentId]);
    expectError(await api.put(`${BASE}/${created.id}`, { depts: [999999] }), 422, 'The selected depts.0 is invalid.');
    expect((await OperatorDepartment.findAll({ where: { user_id: created.id } })).map((d) => d.department_id)).toEqual([departmentId]);
  });

  it('clears the phones with an empty value (`phone=`)', async () => {
    const created = await createOperator({ phone: [newPhone().e164] });
    expect(await updateOperator(created.id, { phone: '' })).toMatchObject({ phonenumbers: [] });
    expect((await showOperator(created.id)).phonenumbers).toEqual([]);
  });

  it('clears the departments with an empty value (`depts=`); an empty `groups` is refused as a missing one', async () => {
    const created = await createOperator({ depts: [departmentId] });
    await updateOperator(created.id, { depts: '' });
    expect(await OperatorDepartment.count({ where: { user_id: created.id } })).toBe(0);
    expectError(await api.put(`${BASE}/${created.id}`, { groups: '' }), 422, 'The groups field is required.');
    expectError(await api.post(BASE, validForm({ groups: '' })), 422, 'The groups field is required.');
    expect((await showOperator(created.id)).groups.map((g: any) => g.id)).toEqual([adminGroupId]);
  });

  it('refuses the email of another operator and leaves the operator unchanged', async () => {
    const a = await createOperator();
    const b = await createOperator();
    const before = await showOperator(b.id);
    expectError(await api.put(`${BASE}/${b.id}`, { email: a.email, firstname: 'Lost' }), 422, 'The email has already been taken.');
    expectError(await api.put(`${BASE}/${b.id}`, { firstname: 'Lost', groups: [registeredGroupId] }), 422, 'The selected groups.0 is invalid.');
    expectError(await api.put(`${BASE}/${b.id}`, { firstname: 'Lost', phone: ['12'] }), 422, /^The phone\.0 /);
    expectError(await api.put(`${BASE}/${b.id}`, { firstname: 'Lost', language_code: 'zz' }), 422, 'The selected language code is invalid.');
    expectError(await api.put(`${BASE}/${b.id}`, { firstname: '' }), 422, 'The firstname field is required.');
    expect(await showOperator(b.id)).toEqual(before);
    expect(await updateOperator(b.id, { email: b.email })).toMatchObject({ email: b.email });
  });

  it('hashes a new password', async () => {
    const created = await createOperator();
    const o = await updateOperator(created.id, { password: 'a brand new password' });
    expect(o).not.toHaveProperty('password');
    expect((await User.findByPk(created.id))!.password).toMatch(/^\$argon2/);
  });

  it.each(['999999999', 'abc'])('answers 404 for the id %s', async (id) => {
    expectNotFound(await api.put(`${BASE}/${id}`, { firstname: 'X' }), 'operator');
  });
});

// ---- delete -------------------------------------------------------------------------------------

describe('DELETE /api/user/operator/{id}', () => {
  it('deletes the operator, then answers 404', async () => {
    const created = await createOperator({ phone: [newPhone().e164], depts: [departmentId] });
    const res = await api.del(`${BASE}/${created.id}`);
    expectDeleted(res, 'operator');
    expectNotFound(await api.get(`${BASE}/${created.id}`), 'operator');
    expectNotFound(await api.del(`${BASE}/${created.id}`), 'operator');
    expect(await User.findByPk(created.id)).toBeNull();
    expect(await OperatorDepartment.count({ where: { user_id: created.id } })).toBe(0);
    // The email is free again.
    await createOperator({ email: created.email });
  });

  it('refuses to delete an operator who opened internal tickets, and deletes them once the tickets are given to another', async () => {
    const owner = await createOperator({});
    const other = await createOperator({});
    const ticket = expectSuccess(await api.post('/api/ticket/ticket', {
      department: departmentId, status: 1, priority: 1, user: owner.id, internal: 1, subject: 'Internal', text: 'Between us',
      send_user_email: 0, send_operators_email: 0,
    }), 'Successfully created new ticket!');
    const note = expectSuccess(await api.post('/api/ticket/message', {
      ticket_id: ticket.id, user_id: other.id, text: 'A note of another operator', message_type: 1, send_user_email: 0, send_operators_email: 0,
    }), 'Successfully created new message!');
    expect((await api.del(`/api/ticket/ticket/${ticket.id}`)).body).toEqual({ status: 'success', message: 'Successfully moved the ticket to trash!', data: null });
    expectError(await api.del(`${BASE}/${owner.id}`), 422, 'The operator cannot be deleted because they opened internal tickets: give them to another operator first.');
    expect(await User.findByPk(owner.id)).not.toBeNull();
    expectSuccess(await api.get(`/api/ticket/message/${note.id}`));

    expectSuccess(await api.put(`/api/ticket/ticket/${ticket.id}`, { user: other.id }), 'Successfully updated the ticket!');
    expectDeleted(await api.del(`${BASE}/${owner.id}`), 'operator');
    expect(expectSuccess(await api.get(`/api/ticket/ticket/${ticket.id}`))).toMatchObject({ user_id: other.id, internal: 1 });
    expectSuccess(await api.get(`/api/ticket/message/${note.id}`));
  });

  it.each(['999999999', 'abc'])('answers 404 for the id %s', async (id) => {
    expectNotFound(await api.del(`${BASE}/${id}`), 'operator');
  });
});

// ---- list ---------------------------------------------------------------------------------------

describe('GET /api/user/operator', () => {
  const tag = unique('Ops').toLowerCase();
  let on: any;
  let off: any;

  beforeAll(async () => {
    on = await createOperator({ lastname: `On${tag}`, phone: [newPhone().e164] });
    off = await createOperator({ lastname: `Off${tag}`, active: 0 });
  });

  it('lists operators with the fields of the Operator object and the total in count', async () => {
    const res = await api.get(BASE, { limit: 1 });
    expect(expectList(res)).toHaveLength(1);
    expect(res.body.count).toBeGreaterThanOrEqual(2);
    const { data } = await listOperators({ order_direction: 'desc' });
    const mine = data.filter((o) => [on.id, off.id].includes(o.id));
    expect(ids(mine)).toEqual(ids([on, off]));
    for (const o of data) {
      expect(Object.keys(o).sort()).toEqual(SHOW_KEYS);
      expectOperatorTypes(o);
    }
    expect(mine.find((o) => o.id === on.id)).toEqual(await showOperator(on.id));
  });

  it('filters by email (exact)', async () => {
    expect(await listOperators({ email: on.email })).toEqual({ data: [expect.objectContaining({ id: on.id })], count: 1 });
    expect(await listOperators({ email: on.email.toUpperCase() })).toEqual({ data: [expect.objectContaining({ id: on.id })], count: 1 });
    expect(await listOperators({ email: on.email.slice(1) })).toEqual({ data: [], count: 0 });
    expectError(await api.get(BASE, { email: 'nope' }), 422, 'The email must be a valid email address.');
  });

  it('filters by active', async () => {
    const active = await listOperators({ active: 1 });
    const inactive = await listOperators({ active: 0 });
    expect(active.data.every((o) => o.active === 1)).toBe(true);
    expect(inactive.data.every((o) => o.active === 0)).toBe(true);
    expect(ids(active.data)).toContain(on.id);
    expect(ids(active.data)).not.toContain(off.id);
    expect(ids(inactive.data)).toContain(off.id);
    expect(ids(inactive.data)).not.toContain(on.id);
    expect(await listOperators({ email: off.email, active: 1 })).toEqual({ data: [], count: 0 });
    expectError(await api.get(BASE, { active: 'yes please' }), 422, 'The active field must be true or false.');
  });

  it('never lists users, and operators never appear among users', async () => {
    const user = expectSuccess(await api.post('/api/user/user', { email: newEmail('u'), lastname: `User${tag}` }), 'Successfully created new user!');
    expect(await listOperators({ email: user.email })).toEqual({ data: [], count: 0 });
    expect(ids((await listOperators({})).data)).not.toContain(user.id);
    const users = await api.get('/api/user/user', { limit: 1000, search: tag });
    expect(expectList(users).map((u) => u.id)).toEqual([user.id]);
    const byEmail = await api.get('/api/user/user', { email: on.email });
    expect(expectList(byEmail)).toEqual([]);
  });

  it('pages and orders', async () => {
    const all = (await listOperators({ order_column: 'lastname' })).data;
    // Operators other test files made may have no last name: NULL sorts first.
    const names = all.map((o) => (o.lastname ?? '').toLowerCase());
    expect(names).toEqual([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    const res = await api.get(BASE, { start: 2, limit: 1, order_column: 'id', order_direction: 'asc' });
    const byId = (await listOperators({})).data;
    expect(expectList(res).map((o) => o.id)).toEqual([byId[1].id]);
    expect(res.body.count).toBe(byId.length);
    expectError(await api.get(BASE, { order_column: 'brand_id' }), 422, 'The selected order column is invalid.');
    expectError(await api.get(BASE, { order_column: 'password' }), 422, 'The selected order column is invalid.');
  });
});

describe('GET /api/user/operator DATES', () => {
  let a: any;
  let b: any;
  let c: any;

  beforeAll(async () => {
    [a, b, c] = [await createOperator(), await createOperator(), await createOperator()];
    const set = (id: number, created: number, updated: number) =>
      sequelize().query('UPDATE users SET created_at = ?, updated_at = ? WHERE id = ?', { replacements: [created, updated, id] });
    await set(a.id, 1_400_000_000, 1_450_000_000);
    await set(b.id, 1_400_000_500, 1_450_000_500);
  });

  it.each([
    [{ created_at_min: 1_400_000_500 }, ['b', 'c']],
    [{ created_at_max: 1_400_000_000 }, ['a']],
    [{ created_at_min: 1_400_000_000, created_at_max: 1_400_000_500 }, ['a', 'b']],
    [{ updated_at_min: 1_450_000_001 }, ['b', 'c']],
    [{ updated_at_max: 1_450_000_499 }, ['a']],
    [{ updated_at_min: 1_450_000_500, updated_at_max: 1_450_000_500 }, ['b']],
  ] as Array<[Record<string, number>, string[]]>)('%j', async (query, expected) => {
    const mine = [a.id, b.id, c.id];
    const { data } = await listOperators(query);
    const byName: Record<string, any> = { a, b, c };
    expect(ids(data.filter((o) => mine.includes(o.id)))).toEqual(ids(expected.map((k) => byName[k])));
    for (const o of data) {
      if (query.created_at_min) expect(o.created_at).toBeGreaterThanOrEqual(query.created_at_min);
      if (query.created_at_max) expect(o.created_at).toBeLessThanOrEqual(query.created_at_max);
      if (query.updated_at_min) expect(o.updated_at).toBeGreaterThanOrEqual(query.updated_at_min);
      if (query.updated_at_max) expect(o.updated_at).toBeLessThanOrEqual(query.updated_at_max);
    }
  });
});

// ---- verification mail --------------------------------------------------------------------------

async function verificationRows(userId: number) {
  const rows = await OutboxEntry.findAll({ where: { name: 'user.verification', payload: { [Op.like]: `%${userId}%` } } });
  return rows.filter((r) => JSON.parse(r.payload).userId === userId);
}

describe('send_email for operators', () => {
  it('writes a verification mail for an active operator without a password', async () => {
    const o = await createOperator({ send_email: 1 });
    const rows = await verificationRows(o.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ name: 'user.verification', queue: 'mail' });
    expect(JSON.parse(rows[0].payload)).toEqual({ userId: o.id });
  });

  it.each([
    ['with a password', { send_email: 1, password: 'has one already' }],
    ['for an inactive operator', { send_email: 1, active: 0 }],
    ['without send_email', {}],
  ])('writes nothing %s', async (_name, form) => {
    const o = await createOperator(form);
    expect(await verificationRows(o.id)).toHaveLength(0);
  });

  it('on update, only for an active operator without a password', async () => {
    const o = await createOperator({ active: 0 });
    await updateOperator(o.id, { send_email: 1 });
    expect(await verificationRows(o.id)).toHaveLength(0);
    await updateOperator(o.id, { send_email: 1, active: 1 });
    expect(await verificationRows(o.id)).toHaveLength(1);
    await updateOperator(o.id, { send_email: 1, active: 0 });
    expect(await verificationRows(o.id)).toHaveLength(1);
    await updateOperator(o.id, { active: 1, password: 'set a password' });
    await updateOperator(o.id, { send_email: 1 });
    expect(await verificationRows(o.id)).toHaveLength(1);
  });
});
