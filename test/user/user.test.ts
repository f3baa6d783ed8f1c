/**
 * Users: /api/user/user — create, show, list (every filter of the spec, DATES, PAGING), update,
 * delete, the validation messages, passwords, additional emails, phones and groups.
 */
import { CustomField, CustomFieldValue, Group, User, UserEmail, UserPhone } from '../../src/db/models';
import { countQueries, sequelize } from '../../src/db/sequelize';
import { useApi, unique, newEmail, nowSec, phoneNumbers } from '../helpers/app';
import { expectDeleted, expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';

const api = useApi();
const BASE = '/api/user/user';

// ---- helpers ------------------------------------------------------------------------------------

/** A valid London number unique to this run: E.164 and a spaced form that normalises to it. */
const newPhone = phoneNumbers('7');

const COMMON_FIELDS = [
  'id', 'brand_id', 'firstname', 'lastname', 'email', 'email_verified', 'active', 'organisation_id', 'organisation_access_level',
  'organisation_notifications', 'country', 'language_code', 'timezone', 'avatar', 'twofa_enabled', 'twofa_secret', 'twofa_token', 'twitter_id', 'twitter_handle',
  'facebook_id', 'created_at', 'updated_at', 'formatted_name', 'phonenumbers', 'customfields', 'groups',
];
const CREATE_OMITS = ['avatar', 'twofa_enabled', 'twofa_secret', 'twofa_token', 'twitter_id', 'twitter_handle', 'facebook_id'];
const LIST_KEYS = [...COMMON_FIELDS].sort();
const SHOW_KEYS = [...COMMON_FIELDS, 'organisation', 'additional_emails'].sort();
const CREATE_KEYS = SHOW_KEYS.filter((k) => !CREATE_OMITS.includes(k));

async function createUser(form: Record<string, unknown>): Promise<any> {
  return expectSuccess(await api.post(BASE, form), 'Successfully created new user!');
}
const showUser = async (id: number) => expectSuccess(await api.get(`${BASE}/${id}`));
const listUsers = async (query: Record<string, unknown>) => {
  const res = await api.get(BASE, { limit: 1000, ...query });
  return { data: expectList(res), count: res.body.count as number };
};
const ids = (rows: Array<{ id: number }>) => rows.map((r) => r.id).sort((a, b) => a - b);

async function createOperator(form: Record<string, unknown> = {}): Promise<any> {
  return expectSuccess(await api.post('/api/user/operator', {
    firstname: 'Op', lastname: unique('Erator'), email: newEmail('op'), groups: [adminGroupId], ...form,
  }), 'Successfully created new operator!');
}

async function createBrand(): Promise<number> {
  return expectSuccess(await api.post('/api/core/brand', { name: unique('Brand') }), 'Successfully created new brand!').id;
}

let registeredGroupId: number;
let adminGroupId: number;
let extraGroupId: number;
let settings: Record<string, string>;

beforeAll(async () => {
  registeredGroupId = (await Group.findOne({ where: { type: 'user', name: 'Registered' } }))!.id;
  adminGroupId = (await Group.findOne({ where: { type: 'operator', name: 'Administrators' } }))!.id;
  extraGroupId = (await Group.create({ type: 'user', name: unique('Customers'), description: 'Test group', colour: '#123456' })).id;
  settings = expectSuccess(await api.get('/api/core/settings'));
});

/** The shape every user response shares: integers, 0/1 flags, arrays. */
function expectUserTypes(u: any) {
  for (const k of ['id', 'brand_id', 'created_at', 'updated_at']) expect(Number.isInteger(u[k])).toBe(true);
  for (const k of ['email_verified', 'active', 'organisation_notifications']) expect([0, 1]).toContain(u[k]);
  if ('twofa_enabled' in u) expect([0, 1]).toContain(u.twofa_enabled);
  expect(u.organisation_id === null || Number.isInteger(u.organisation_id)).toBe(true);
  expect(u.organisation_access_level === null || [0, 1].includes(u.organisation_access_level)).toBe(true);
  for (const k of ['phonenumbers', 'customfields', 'groups']) expect(Array.isArray(u[k])).toBe(true);
  expect(u).not.toHaveProperty('password');
  expect(u).not.toHaveProperty('type');
}

// ---- create -----------------------------------------------------------------------------------

describe('POST /api/user/user', () => {
  it('creates a user with only an email, applying the defaults', async () => {
    const email = newEmail();
    const before = nowSec();
    const u = await createUser({ email });
    expect(Object.keys(u).sort()).toEqual(CREATE_KEYS);
    expectUserTypes(u);
    expect(u).toMatchObject({
      brand_id: 1, firstname: null, lastname: null, email, email_verified: 0, active: 1,
      organisation_id: null, organisation_access_level: null, organisation_notifications: 1, country: null,
      language_code: settings.default_frontend_language, timezone: settings.default_timezone,
      formatted_name: email, phonenumbers: [], customfields: [], groups: [], organisation: null, additional_emails: [],
    });
    expect(u.language_code).toBe('en');
    expect(u.timezone).toBe('Europe/London');
    expect(u.created_at).toBeGreaterThanOrEqual(before);
    expect(u.created_at).toBeLessThanOrEqual(nowSec());
    expect(u.updated_at).toBe(u.created_at);
    const row = await User.findByPk(u.id);
    expect(row).toMatchObject({ type: 'user', brand_id: 1, email, password: null });
  });

  it('creates a user with every plain field and returns them, booleans as 1/0', async () => {
    const email = newEmail();
    const phone = newPhone();
    const extra = newEmail('extra', 'example.org');
    const u = await createUser({
      email, firstname: ' Ada ', lastname: 'Lovelace', country: 'fr', language_code: 'DE', timezone: 'America/New_York',
      active: 0, email_verified: 1, password: 'correct horse battery', phone: [phone.spaced], additional_email: [extra],
      groups: [registeredGroupId, extraGroupId],
    });
    expect(Object.keys(u).sort()).toEqual(CREATE_KEYS);
    expectUserTypes(u);
    expect(u).toMatchObject({
      firstname: 'Ada', lastname: 'Lovelace', country: 'FR', language_code: 'de', timezone: 'America/New_York', active: 0,
      email_verified: 1, formatted_name: 'Ada Lovelace',
    });
    expect(u.phonenumbers).toEqual([{ id: expect.any(Number), user_id: u.id, number: phone.e164, created_at: expect.any(Number), updated_at: expect.any(Number) }]);
    expect(u.additional_emails).toEqual([{ id: expect.any(Number), user_id: u.id, email: extra, created_at: expect.any(Number), updated_at: expect.any(Number) }]);
    expect(u.groups.map((g: any) => g.id)).toEqual([registeredGroupId, extraGroupId].sort((a, b) => a - b));
  });

  it('returns the groups with a pivot of user_id and group_id', async () => {
    const u = await createUser({ email: newEmail(), groups: [extraGroupId] });
    expect(u.groups).toEqual([{
      id: extraGroupId, name: expect.stringMatching(/^Customers/), description: 'Test group', colour: '#123456', administrator: 0,
      created_at: expect.any(Number), updated_at: expect.any(Number), pivot: { user_id: u.id, group_id: extraGroupId },
    }]);
    expect((await showUser(u.id)).groups).toEqual(u.groups);
  });

  it('never returns the password and stores it as an argon2 hash', async () => {
    const password = 'a secret of some length';
    const u = await createUser({ email: newEmail(), password });
    expect(u).not.toHaveProperty('password');
    expect(JSON.stringify(u)).not.toContain(password);
    const row = await User.findByPk(u.id);
    expect(row!.password).toMatch(/^\$argon2/);
    expect(row!.password).not.toContain(password);
    const shown = await showUser(u.id);
    expect(shown).not.toHaveProperty('password');
    expect(JSON.stringify(shown)).not.toContain('$argon2');
    const { data } = await listUsers({ email: u.email });
    expect(data).toHaveLength(1);
    expect(JSON.stringify(data)).not.toContain('$argon2');
  });

  it('takes every well-formed E.164 number, in service or not, and refuses malformed ones', async () => {
    // A reserved UK range (drama numbers), a code libphonenumber does not know, a short number.
    const taken = [`+4477009${String(Math.floor(Math.random() * 100_000)).padStart(5, '0')}`, '+99912345678', '+4412'];
    const u = await createUser({ email: newEmail(), phone: taken });
    expect(u.phonenumbers.map((p: any) => p.number)).toEqual(taken);
    expect(ids((await listUsers({ phone: taken[0] })).data)).toEqual([u.id]);
    // A trunk prefix written after the country code is dropped, as before.
    const spaced = expectSuccess(await api.put(`${BASE}/${u.id}`, { phone: [`+44 (0)${taken[0].slice(3, 7)} ${taken[0].slice(7)}`] }), 'Successfully updated the user!');
    expect(spaced.phonenumbers.map((p: any) => p.number)).toEqual([taken[0]]);
    for (const phone of ['+1234567890123456', '+0123456', '++447700900123', '+44 7700 900123 ext. 5', '447700900123', '+']) {
      expectError(await api.put(`${BASE}/${u.id}`, { phone: [phone] }), 422, 'The phone.0 must be a valid phone number in E.164 format (for example +441234567890).');
    }
    expect((await UserPhone.findAll({ where: { user_id: u.id } })).map((r) => r.number)).toEqual([taken[0]]);
  });

  it('normalises phone numbers to E.164', async () => {
    const a = newPhone();
    const b = newPhone();
    const u = await createUser({ email: newEmail(), phone: [a.spaced, b.e164] });
    expect(u.phonenumbers.map((p: any) => p.number)).toEqual([a.e164, b.e164]);
    const rows = await UserPhone.findAll({ where: { user_id: u.id }, order: [['id', 'ASC']] });
    expect(rows.map((r) => r.number)).toEqual([a.e164, b.e164]);
  });

  it('creates users with phones, additional emails and groups concurrently', async () => {
    // Requests of different clients arrive at the same time: none may fail for the others.
    const forms = Array.from({ length: 8 }, () => ({
      email: newEmail('conc'), phone: [newPhone().e164], additional_email: [newEmail('concalt')], groups: [registeredGroupId],
    }));
    const results = await Promise.all(forms.map((form) => api.post(BASE, form)));
    expect(results.map((r) => [r.status, r.body.message])).toEqual(forms.map(() => [200, 'Successfully created new user!']));
    expect(await User.count({ where: { email: forms.map((f) => f.email) } })).toBe(forms.length);
  });

  it('stores the email in lower case', async () => {
    const email = newEmail();
    const u = await createUser({ email: email.toUpperCase() });
    expect(u.email).toBe(email);
  });

  describe('answers 422 word for word and creates nothing', () => {
    const cases: Array<[string, () => Record<string, unknown>, string | RegExp]> = [
      ['a missing email', () => ({ firstname: 'NoEmail' }), 'The email field is required.'],
      ['an empty email', () => ({ email: '' }), 'The email field is required.'],
      ['a malformed email', () => ({ email: 'not-an-email' }), 'The email must be a valid email address.'],
      ['a phone not in E.164', () => ({ email: newEmail(), phone: ['020 7946 0958'] }), /^The phone\.0 .*E\.164/],
      ['a second phone not in E.164', () => ({ email: newEmail(), phone: [newPhone().e164, '12345'] }), /^The phone\.1 .*E\.164/],
      ['an unknown brand_id', () => ({ email: newEmail(), brand_id: 999999 }), 'The selected brand id is invalid.'],
      ['an unknown group', () => ({ email: newEmail(), groups: [999999] }), 'The selected groups.0 is invalid.'],
      ['an operator group as a user group', () => ({ email: newEmail(), groups: [adminGroupId] }), 'The selected groups.0 is invalid.'],
      ['an unknown second group', () => ({ email: newEmail(), groups: [registeredGroupId, 999999] }), 'The selected groups.1 is invalid.'],
      ['email_verified=1 without a password', () => ({ email: newEmail(), email_verified: 1 }), 'The password field is required when email verified is 1.'],
      ['an unknown language_code', () => ({ email: newEmail(), language_code: 'zz' }), 'The selected language code is invalid.'],
      ['an unknown timezone', () => ({ email: newEmail(), timezone: 'Mars/Olympus_Mons' }), 'The selected timezone is invalid.'],
      ['a malformed additional email', () => ({ email: newEmail(), additional_email: ['nope'] }), 'The additional email.0 must be a valid email address.'],
      ['an active flag that is not a boolean', () => ({ email: newEmail(), active: 'maybe' }), 'The active field must be true or false.'],
    ];
    it.each(cases)('%s', async (_name, makeForm, message) => {
      const firstname = unique('Rejected');
      const form: Record<string, unknown> = { firstname, ...makeForm() };
      expectError(await api.post(BASE, form), 422, message);
      expect(await User.count({ where: { firstname } })).toBe(0);
      if (typeof form.email === 'string' && form.email) expect(await User.count({ where: { email: form.email } })).toBe(0);
    });

    it('rolls back everything done before a late failure (organisation, phones, groups)', async () => {
      const email = newEmail();
      const orgName = unique('Rolled back org');
      const phone = newPhone();
      const res = await api.post(BASE, {
        email, phone: [phone.e164], groups: [registeredGroupId], additional_email: [newEmail('alt')], organisation: orgName,
        customfield: { 999999: 'x' },
      });
      expectError(res, 422, 'The selected customfield.999999 is invalid.');
      expect(await User.count({ where: { email } })).toBe(0);
      expect(await UserPhone.count({ where: { number: phone.e164 } })).toBe(0);
      const orgs = await api.get('/api/user/organisation', { search: orgName });
      expect(expectList(orgs)).toEqual([]);
    });
  });

  describe('email uniqueness', () => {
    it('refuses an email already taken in the same brand (whatever its case)', async () => {
      const email = newEmail();
      await createUser({ email });
      expectError(await api.post(BASE, { email }), 422, 'The email has already been taken.');
      expectError(await api.post(BASE, { email: email.toUpperCase(), brand_id: 1 }), 422, 'The email has already been taken.');
      expect(await User.count({ where: { email, type: 'user' } })).toBe(1);
    });

    it('allows the same email in another brand', async () => {
      const email = newEmail();
      const brandId = await createBrand();
      const first = await createUser({ email });
      const second = await createUser({ email, brand_id: brandId });
      expect(second).toMatchObject({ email, brand_id: brandId });
      expect(second.id).not.toBe(first.id);
      // And the brand is a real filter on duplicates: a third user in that brand is refused.
      expectError(await api.post(BASE, { email, brand_id: brandId }), 422, 'The email has already been taken.');
    });

    it('refuses a primary email that is an additional email of another user of the brand', async () => {
      const shared = newEmail('shared');
      const owner = await createUser({ email: newEmail(), additional_email: [shared] });
      // The reverse is refused (an additional email may not be another user's primary one), so
      // the address must stay one user's: `email=<address>` would otherwise find two users.
      expectError(await api.post(BASE, { email: shared }), 422, 'The email has already been taken.');
      expect(await User.count({ where: { email: shared } })).toBe(0);
      const other = await createUser({ email: newEmail() });
      expectError(await api.put(`${BASE}/${other.id}`, { email: shared }), 422, 'The email has already been taken.');
      expect(ids((await listUsers({ email: shared })).data)).toEqual([owner.id]);
    });
  });
});

// ---- show -------------------------------------------------------------------------------------

describe('GET /api/user/user/{id}', () => {
  it('shows every common field plus organisation and additional_emails', async () => {
    const extra = newEmail('extra');
    const created = await createUser({ email: newEmail(), firstname: 'Grace', additional_email: [extra], organisation: unique('Show org') });
    const u = await showUser(created.id);
    expect(Object.keys(u).sort()).toEqual(SHOW_KEYS);
    expectUserTypes(u);
    expect(u).toMatchObject({
      id: created.id, firstname: 'Grace', avatar: null, twofa_enabled: 0, twofa_secret: null, twofa_token: null,
      twitter_id: null, twitter_handle: null, facebook_id: null, formatted_name: 'Grace',
    });
    expect(u.additional_emails).toEqual(created.additional_emails);
    expect(u.organisation).toEqual(created.organisation);
    expect(u.organisation).toMatchObject({ id: created.organisation_id, owner_id: created.id, brand_id: 1 });
    // Everything the create response has, the show response has too, with the same values.
    expect(u).toMatchObject(created);
  });

  it.each(['999999999', '4294967295', 'abc', '0'])('answers 404 for the id %s', async (id) => {
    expectNotFound(await api.get(`${BASE}/${id}`), 'user');
  });

  it('does not show an operator as a user', async () => {
    const op = await createOperator();
    expectNotFound(await api.get(`${BASE}/${op.id}`), 'user');
    expectNotFound(await api.put(`${BASE}/${op.id}`, { firstname: 'Changed' }), 'user');
    expectNotFound(await api.del(`${BASE}/${op.id}`), 'user');
    const still = expectSuccess(await api.get(`/api/user/operator/${op.id}`));
    expect(still.firstname).toBe('Op');
  });

  it('does not show a user as an operator', async () => {
    const u = await createUser({ email: newEmail() });
    expectNotFound(await api.get(`/api/user/operator/${u.id}`), 'operator');
    expectNotFound(await api.put(`/api/user/operator/${u.id}`, { firstname: 'Changed' }), 'operator');
    expectNotFound(await api.del(`/api/user/operator/${u.id}`), 'operator');
    expect((await showUser(u.id)).firstname).toBeNull();
  });
});

// ---- update -----------------------------------------------------------------------------------

describe('PUT /api/user/user/{id}', () => {
  it('changes only the given fields: no defaults on update', async () => {
    const created = await createUser({
      email: newEmail(), firstname: 'Old', lastname: 'Name', active: 0, language_code: 'fr', timezone: 'Asia/Tokyo', country: 'JP',
      password: 'long enough password', email_verified: 1,
    });
    const res = await api.put(`${BASE}/${created.id}`, { firstname: 'New' });
    const u = expectSuccess(res, 'Successfully updated the user!');
    expect(Object.keys(u).sort()).toEqual(SHOW_KEYS);
    expectUserTypes(u);
    expect(u).toMatchObject({
      id: created.id, firstname: 'New', lastname: 'Name', active: 0, email_verified: 1, language_code: 'fr', timezone: 'Asia/Tokyo',
      country: 'JP', brand_id: 1, formatted_name: 'New Name',
    });
    expect(await showUser(created.id)).toEqual(u);
  });

  it('updates every plain field', async () => {
    const created = await createUser({ email: newEmail(), firstname: 'A' });
    const email = newEmail();
    const u = expectSuccess(await api.put(`${BASE}/${created.id}`, {
      email, firstname: 'B', lastname: 'C', country: 'de', language_code: 'es', timezone: 'Europe/Berlin', active: 0,
    }), 'Successfully updated the user!');
    expect(u).toMatchObject({ email, firstname: 'B', lastname: 'C', country: 'DE', language_code: 'es', timezone: 'Europe/Berlin', active: 0 });
  });

  it('stores organisation_notifications and returns it (create, update, show, list)', async () => {
    const created = await createUser({ email: newEmail(), organisation_notifications: 0 });
    expect(created.organisation_notifications).toBe(0);
    const u = expectSuccess(await api.put(`${BASE}/${created.id}`, { organisation_notifications: 1 }), 'Successfully updated the user!');
    expect(u.organisation_notifications).toBe(1);
    expect((await showUser(created.id)).organisation_notifications).toBe(1);
    expect((await User.findByPk(created.id))!.organisation_notifications).toBe(1);
    const listed = (await listUsers({ email: created.email })).data;
    expect(listed.map((l: any) => [l.id, l.organisation_notifications])).toEqual([[created.id, 1]]);
    expectError(await api.put(`${BASE}/${created.id}`, { organisation_notifications: 'x' }), 422, 'The organisation notifications field must be true or false.');
    expect((await showUser(created.id)).organisation_notifications).toBe(1);
  });

  it('clears an optional text field sent empty', async () => {
    const created = await createUser({ email: newEmail(), firstname: 'A', lastname: 'B' });
    const u = expectSuccess(await api.put(`${BASE}/${created.id}`, { lastname: '' }), 'Successfully updated the user!');
    expect(u).toMatchObject({ firstname: 'A', lastname: null, formatted_name: 'A' });
  });

  it('requires a password for email_verified=1, stored or sent with it', async () => {
    const created = await createUser({ email: newEmail() });
    expectError(await api.put(`${BASE}/${created.id}`, { email_verified: 1 }), 422, 'The password field is required when email verified is 1.');
    expect((await showUser(created.id)).email_verified).toBe(0);
    const u = expectSuccess(await api.put(`${BASE}/${created.id}`, { email_verified: 1, password: 'now it has one' }), 'Successfully updated the user!');
    expect(u.email_verified).toBe(1);
    const withPassword = await createUser({ email: newEmail(), password: 'stored password' });
    expect(expectSuccess(await api.put(`${BASE}/${withPassword.id}`, { email_verified: 1 }), 'Successfully updated the user!').email_verified).toBe(1);
  });

  it('hashes a new password', async () => {
    const created = await createUser({ email: newEmail(), password: 'first password' });
    const before = (await User.findByPk(created.id))!.password;
    const u = expectSuccess(await api.put(`${BASE}/${created.id}`, { password: 'second password' }), 'Successfully updated the user!');
    expect(u).not.toHaveProperty('password');
    const after = (await User.findByPk(created.id))!.password;
    expect(after).toMatch(/^\$argon2/);
    expect(after).not.toBe(before);
    expect(after).not.toContain('second password');
  });

  it('refuses an email of another user of the brand, and accepts its own', async () => {
    const a = await createUser({ email: newEmail() });
    const b = await createUser({ email: newEmail() });
    expectError(await api.put(`${BASE}/${b.id}`, { email: a.email }), 422, 'The email has already been taken.');
    expect((await showUser(b.id)).email).toBe(b.email);
    expect(expectSuccess(await api.put(`${BASE}/${b.id}`, { email: b.email, firstname: 'Same' }), 'Successfully updated the user!'))
      .toMatchObject({ email: b.email, firstname: 'Same' });
  });

  it('replaces the phone numbers', async () => {
    const [p1, p2, p3] = [newPhone(), newPhone(), newPhone()];
    const created = await createUser({ email: newEmail(), phone: [p1.e164, p2.e164] });
    expect(created.phonenumbers.map((p: any) => p.number)).toEqual([p1.e164, p2.e164]);
    const u = expectSuccess(await api.put(`${BASE}/${created.id}`, { phone: [p3.spaced] }), 'Successfully updated the user!');
    expect(u.phonenumbers.map((p: any) => p.number)).toEqual([p3.e164]);
    expect((await UserPhone.findAll({ where: { user_id: created.id } })).map((p) => p.number)).toEqual([p3.e164]);
    // Without `phone`, the numbers stay.
    const again = expectSuccess(await api.put(`${BASE}/${created.id}`, { firstname: 'X' }), 'Successfully updated the user!');
    expect(again.phonenumbers.map((p: any) => p.number)).toEqual([p3.e164]);
    // A bad number changes nothing.
    expectError(await api.put(`${BASE}/${created.id}`, { phone: ['0123'], firstname: 'Y' }), 422, /^The phone\.0 /);
    expect(await showUser(created.id)).toMatchObject({ firstname: 'X', phonenumbers: [expect.objectContaining({ number: p3.e164 })] });
  });

  it('clears phones, additional emails and groups with an empty value, as a ticket\'s `tag=` clears its tags', async () => {
    const created = await createUser({ email: newEmail(), phone: [newPhone().e164], additional_email: [newEmail('x')], groups: [extraGroupId] });
    const u = expectSuccess(await api.put(`${BASE}/${created.id}`, { phone: '', additional_email: '', groups: '' }), 'Successfully updated the user!');
    expect(u).toMatchObject({ phonenumbers: [], additional_emails: [], groups: [] });
    expect(await UserPhone.count({ where: { user_id: created.id } })).toBe(0);
    expect(await UserEmail.count({ where: { user_id: created.id } })).toBe(0);
    expect(await showUser(created.id)).toMatchObject({ email: created.email, phonenumbers: [], additional_emails: [], groups: [] });
    // On create an empty value is none.
    expect(await createUser({ email: newEmail(), phone: '', additional_email: '', groups: '' })).toMatchObject({ phonenumbers: [], additional_emails: [], groups: [] });
  });

  it('replaces the groups', async () => {
    const created = await createUser({ email: newEmail(), groups: [registeredGroupId] });
    const u = expectSuccess(await api.put(`${BASE}/${created.id}`, { groups: [extraGroupId] }), 'Successfully updated the user!');
    expect(u.groups.map((g: any) => [g.id, g.pivot])).toEqual([[extraGroupId, { user_id: created.id, group_id: extraGroupId }]]);
    expectError(await api.put(`${BASE}/${created.id}`, { groups: [adminGroupId] }), 422, 'The selected groups.0 is invalid.');
    expect((await showUser(created.id)).groups.map((g: any) => g.id)).toEqual([extraGroupId]);
  });

  describe('additional emails', () => {
    it('are stored, returned and replaced on update', async () => {
      const [e1, e2, e3] = [newEmail('x1'), newEmail('x2'), newEmail('x3')];
      const created = await createUser({ email: newEmail(), additional_email: [e1, e2] });
      expect(created.additional_emails.map((e: any) => e.email)).toEqual([e1, e2]);
      expect((await UserEmail.findAll({ where: { user_id: created.id }, order: [['id', 'ASC']] })).map((e) => e.email)).toEqual([e1, e2]);
      const u = expectSuccess(await api.put(`${BASE}/${created.id}`, { additional_email: [e3] }), 'Successfully updated the user!');
      expect(u.additional_emails).toEqual([{ id: expect.any(Number), user_id: created.id, email: e3, created_at: expect.any(Number), updated_at: expect.any(Number) }]);
      expect((await UserEmail.findAll({ where: { user_id: created.id } })).map((e) => e.email)).toEqual([e3]);
      expect((await showUser(created.id)).additional_emails).toEqual(u.additional_emails);
    });

    it('refuses one that is the primary email of another user of the brand', async () => {
      const other = await createUser({ email: newEmail() });
      const keep = newEmail('keep');
      const created = await createUser({ email: newEmail(), additional_email: [keep] });
      expectError(await api.put(`${BASE}/${created.id}`, { additional_email: [other.email], firstname: 'Changed' }), 422, 'The additional email.0 has already been taken.');
      expect(await showUser(created.id)).toMatchObject({ firstname: null, additional_emails: [expect.objectContaining({ email: keep })] });
      const email = newEmail();
      expectError(await api.post(BASE, { email, additional_email: [newEmail('fine'), other.email] }), 422, 'The additional email.1 has already been taken.');
      expect(await User.count({ where: { email } })).toBe(0);
    });

    it('refuses one that is an additional email of another user of the brand', async () => {
      const shared = newEmail('shared');
      await createUser({ email: newEmail(), additional_email: [shared] });
      const email = newEmail();
      expectError(await api.post(BASE, { email, additional_email: [shared] }), 422, 'The additional email.0 has already been taken.');
      expect(await User.count({ where: { email } })).toBe(0);
    });

    it('allows one that belongs to a user of another brand', async () => {
      const brandId = await createBrand();
      const other = await createUser({ email: newEmail(), brand_id: brandId });
      const u = await createUser({ email: newEmail(), additional_email: [other.email] });
      expect(u.additional_emails.map((e: any) => e.email)).toEqual([other.email]);
    });

    it('refuses one equal to the user\'s own email', async () => {
      const email = newEmail();
      expectError(await api.post(BASE, { email, additional_email: [email] }), 422, 'The additional email.0 must be different from the email.');
      expect(await User.count({ where: { email } })).toBe(0);
    });
  });

  it('leaves the record unchanged when the update is refused', async () => {
    const created = await createUser({ email: newEmail(), firstname: 'Kept', phone: [newPhone().e164], groups: [registeredGroupId] });
    const before = await showUser(created.id);
    const attempts: Array<[Record<string, unknown>, string | RegExp]> = [
      [{ firstname: 'Lost', groups: [999999] }, 'The selected groups.0 is invalid.'],
      [{ firstname: 'Lost', language_code: 'zz' }, 'The selected language code is invalid.'],
      [{ firstname: 'Lost', timezone: 'Nowhere/Land' }, 'The selected timezone is invalid.'],
      [{ firstname: 'Lost', email: 'bad' }, 'The email must be a valid email address.'],
      [{ firstname: 'Lost', email_verified: 1 }, 'The password field is required when email verified is 1.'],
      [{ firstname: 'Lost', phone: [newPhone().e164], customfield: { 999999: 'x' } }, 'The selected customfield.999999 is invalid.'],
    ];
    for (const [form, message] of attempts) {
      expectError(await api.put(`${BASE}/${created.id}`, form), 422, message);
    }
    expect(await showUser(created.id)).toEqual(before);
  });

  it('does not silently ignore brand_id: it moves the user, or refuses with a 422', async () => {
    const brandId = await createBrand();
    const created = await createUser({ email: newEmail() });
    expectError(await api.put(`${BASE}/${created.id}`, { brand_id: 999999 }), 422, 'The selected brand id is invalid.');
    const res = await api.put(`${BASE}/${created.id}`, { brand_id: brandId });
    const shown = await showUser(created.id);
    if (res.status === 200) {
      expect(res.body.data.brand_id).toBe(brandId);
      expect(shown.brand_id).toBe(brandId);
    } else {
      expect({ status: res.status, body: res.body }).toMatchObject({ status: 422, body: { status: 'error', data: null } });
      expect(shown.brand_id).toBe(1);
    }
  });

  it('is also reached as POST with X-HTTP-Method-Override: PUT (and DELETE)', async () => {
    const created = await createUser({ email: newEmail(), firstname: 'Before' });
    const res = await api.post(`${BASE}/${created.id}`, { firstname: 'After' }).set('X-HTTP-Method-Override', 'PUT');
    expect(expectSuccess(res, 'Successfully updated the user!').firstname).toBe('After');
    const del = await api.post(`${BASE}/${created.id}`).set('X-HTTP-Method-Override', 'DELETE');
    expect(del.body).toEqual({ status: 'success', message: 'Successfully deleted the user!', data: null });
    expectNotFound(await api.get(`${BASE}/${created.id}`), 'user');
  });

  it.each(['999999999', 'abc'])('answers 404 for the id %s', async (id) => {
    expectNotFound(await api.put(`${BASE}/${id}`, { firstname: 'X' }), 'user');
  });

  it('answers 404 rather than 422 for an unknown id with a bad body', async () => {
    expectNotFound(await api.put(`${BASE}/999999999`, { email: 'bad' }), 'user');
  });
});

// ---- delete -----------------------------------------------------------------------------------

describe('DELETE /api/user/user/{id}', () => {
  it('deletes the user, then answers 404', async () => {
    const created = await createUser({ email: newEmail(), phone: [newPhone().e164], additional_email: [newEmail('x')], groups: [registeredGroupId] });
    const res = await api.del(`${BASE}/${created.id}`);
    expectDeleted(res, 'user');
    expectNotFound(await api.get(`${BASE}/${created.id}`), 'user');
    expectNotFound(await api.del(`${BASE}/${created.id}`), 'user');
    expectNotFound(await api.put(`${BASE}/${created.id}`, { firstname: 'X' }), 'user');
    expect(await User.findByPk(created.id)).toBeNull();
    expect(await UserPhone.count({ where: { user_id: created.id } })).toBe(0);
    expect(await UserEmail.count({ where: { user_id: created.id } })).toBe(0);
    // Its email is free again.
    await createUser({ email: created.email });
  });

  it.each(['999999999', 'abc'])('answers 404 for the id %s', async (id) => {
    expectNotFound(await api.del(`${BASE}/${id}`), 'user');
  });
});

// ---- custom field values ------------------------------------------------------------------------

describe('customfield[<field id>]', () => {
  let field: CustomField;

  beforeAll(async () => {
    // A plain, optional Text field of users for every brand (custom fields have their own tests).
    field = await CustomField.create({ kind: 'user', name: unique('Favourite colour'), type: 8 });
  });

  it('returns stored values in show, list and update responses', async () => {
    const created = await createUser({ email: newEmail() });
    const value = await CustomFieldValue.create({ field_id: field.id, owner_id: created.id, value: 'Green' });
    const expected = [{ id: value.id, field_id: field.id, user_id: created.id, value: 'Green', created_at: value.created_at, updated_at: value.updated_at }];
    expect((await showUser(created.id)).customfields).toEqual(expected);
    expect((await listUsers({ email: created.email })).data.map((u) => u.customfields)).toEqual([expected]);
    expect(expectSuccess(await api.put(`${BASE}/${created.id}`, { firstname: 'X' }), 'Successfully updated the user!').customfields).toEqual(expected);
  });

  it('stores a value sent as customfield[<id>]=value on create', async () => {
    // Field ids are small numbers: `customfield[3]=x` must still be read as keyed by id.
    const u = await createUser({ email: newEmail(), customfield: { [field.id]: 'Blue' } });
    expect(u.customfields).toEqual([{ id: expect.any(Number), field_id: field.id, user_id: u.id, value: 'Blue', created_at: expect.any(Number), updated_at: expect.any(Number) }]);
  });

  it('filters the list by customfield[<id>]', async () => {
    const tagged = await createUser({ email: newEmail() });
    const value = unique('Teal');
    await CustomFieldValue.create({ field_id: field.id, owner_id: tagged.id, value });
    const res = await api.get(BASE, { customfield: { [field.id]: value } });
    expect(expectList(res).map((u) => u.id)).toEqual([tagged.id]);
  });
});

// ---- list -------------------------------------------------------------------------------------

describe('GET /api/user/user', () => {
  const tag = unique('Flt').toLowerCase();
  let brandId: number;
  let ann: any;
  let bob: any;
  let cat: any;
  const annPhone = newPhone();
  const bobPhone = newPhone();
  const annAlt = newEmail('annalt', 'example.org');

  beforeAll(async () => {
    brandId = await createBrand();
    ann = await createUser({
      email: `ann.${tag}@example.com`, firstname: 'Ann', lastname: `Lee${tag}`, country: 'GB', language_code: 'fr',
      phone: [annPhone.e164], additional_email: [annAlt],
    });
    bob = await createUser({
      email: `bob.${tag}@example.com`, firstname: 'Bob', lastname: `Ray${tag}`, country: 'DE', language_code: 'de',
      phone: [bobPhone.e164], active: 0, password: 'bobs password', email_verified: 1, organisation: `Org ${tag} Ltd`,
    });
    cat = await createUser({ email: `cat.${tag}@example.com`, firstname: 'Cat', lastname: `Kim${tag}`, brand_id: brandId, country: 'GB', language_code: 'en' });
  });

  it('lists users without organisation and additional_emails, with the total in count', async () => {
    const { data, count } = await listUsers({ lastname: tag });
    expect(ids(data)).toEqual(ids([ann, bob, cat]));
    expect(count).toBe(3);
    for (const u of data) {
      expect(Object.keys(u).sort()).toEqual(LIST_KEYS);
      expectUserTypes(u);
    }
    const listedBob = data.find((u) => u.id === bob.id);
    const shownBob = await showUser(bob.id);
    const { organisation, additional_emails: _extra, ...rest } = shownBob;
    expect(organisation).not.toBeNull();
    expect(listedBob).toEqual(rest);
    expect(listedBob.organisation_id).toBe(bob.organisation_id);
  });

  it('counts every match, not just the page', async () => {
    const res = await api.get(BASE, { lastname: tag, limit: 2 });
    expect(expectList(res)).toHaveLength(2);
    expect(res.body.count).toBe(3);
  });

  it('filters with search on first name, last name, full name and email', async () => {
    expect(ids((await listUsers({ search: tag })).data)).toEqual(ids([ann, bob, cat]));
    expect(ids((await listUsers({ search: `ann.${tag}` })).data)).toEqual([ann.id]);
    expect(ids((await listUsers({ search: `Bob Ray${tag}` })).data)).toEqual([bob.id]);
    expect(ids((await listUsers({ search: `Ray${tag.toUpperCase()}` })).data)).toEqual([bob.id]);
    expect((await listUsers({ search: `${tag}-nothing` })).data).toEqual([]);
    // LIKE wildcards are matched literally.
    expect((await listUsers({ search: `${tag}%` })).count).toBe(0);
  });

  it('filters by brand_id', async () => {
    expect(ids((await listUsers({ lastname: tag, brand_id: brandId })).data)).toEqual([cat.id]);
    expect(ids((await listUsers({ lastname: tag, brand_id: 1 })).data)).toEqual(ids([ann, bob]));
    const all = await listUsers({ brand_id: brandId });
    expect(all.data.every((u) => u.brand_id === brandId)).toBe(true);
    expect(ids(all.data)).toContain(cat.id);
  });

  it('filters by firstname and lastname (contains)', async () => {
    expect(ids((await listUsers({ lastname: tag, firstname: 'nn' })).data)).toEqual([ann.id]);
    expect(ids((await listUsers({ lastname: `Ray${tag}` })).data)).toEqual([bob.id]);
    expect(ids((await listUsers({ firstname: 'Bob', lastname: tag })).data)).toEqual([bob.id]);
  });

  it('filters by email, also matching additional emails', async () => {
    expect(ids((await listUsers({ email: bob.email })).data)).toEqual([bob.id]);
    expect(ids((await listUsers({ email: annAlt })).data)).toEqual([ann.id]);
    expect(ids((await listUsers({ email: annAlt.toUpperCase() })).data)).toEqual([ann.id]);
    expect((await listUsers({ email: newEmail('nobody') })).data).toEqual([]);
    expectError(await api.get(BASE, { email: 'not-an-email' }), 422, 'The email must be a valid email address.');
  });

  it('filters by email_verified and active', async () => {
    expect(ids((await listUsers({ lastname: tag, email_verified: 1 })).data)).toEqual([bob.id]);
    expect(ids((await listUsers({ lastname: tag, email_verified: 0 })).data)).toEqual(ids([ann, cat]));
    expect(ids((await listUsers({ lastname: tag, active: 0 })).data)).toEqual([bob.id]);
    expect(ids((await listUsers({ lastname: tag, active: 1 })).data)).toEqual(ids([ann, cat]));
    expectError(await api.get(BASE, { active: 'perhaps' }), 422, 'The active field must be true or false.');
  });

  it('filters by organisation_id and organisation_name', async () => {
    expect(ids((await listUsers({ organisation_id: bob.organisation_id })).data)).toEqual([bob.id]);
    expect(ids((await listUsers({ organisation_name: `rg ${tag} Lt` })).data)).toEqual([bob.id]);
    expect(await listUsers({ organisation_name: `${tag} no such organisation` })).toEqual({ data: [], count: 0 });
    expect(await listUsers({ organisation_id: 4294967295 })).toEqual({ data: [], count: 0 });
  });

  it('filters by phone in E.164, read as a write reads it, and refuses another format', async () => {
    expect(ids((await listUsers({ phone: annPhone.e164 })).data)).toEqual([ann.id]);
    expect(ids((await listUsers({ phone: annPhone.spaced })).data)).toEqual([ann.id]);
    expect(ids((await listUsers({ phone: bobPhone.e164, lastname: tag })).data)).toEqual([bob.id]);
    expect(await listUsers({ phone: '+999999999999' })).toEqual({ data: [], count: 0 });
    expect(await listUsers({ phone: '+447700900123' })).toEqual({ data: [], count: 0 });
    for (const phone of [annPhone.e164.slice(1), '020 7946 0958', '+1234567890123456', '+44 20 7946 0958 x12']) {
      expectError(await api.get(BASE, { phone }), 422, 'The phone must be a valid phone number in E.164 format (for example +441234567890).');
    }
  });

  it('filters by country and language_code', async () => {
    expect(ids((await listUsers({ lastname: tag, country: 'GB' })).data)).toEqual(ids([ann, cat]));
    expect(ids((await listUsers({ lastname: tag, country: 'de' })).data)).toEqual([bob.id]);
    expect(ids((await listUsers({ lastname: tag, language_code: 'fr' })).data)).toEqual([ann.id]);
    expect(ids((await listUsers({ lastname: tag, language_code: 'de' })).data)).toEqual([bob.id]);
    expectError(await api.get(BASE, { country: 'GBR' }), 422, 'The country format is invalid.');
  });

  it('combines filters with AND', async () => {
    expect(ids((await listUsers({ search: tag, country: 'GB', brand_id: 1 })).data)).toEqual([ann.id]);
    expect((await listUsers({ email: ann.email, active: 0 })).data).toEqual([]);
  });

  it('never lists operators', async () => {
    const op = await createOperator({ lastname: `Op${tag}`, email: `op.${tag}@example.com` });
    expect(ids((await listUsers({ lastname: tag })).data)).not.toContain(op.id);
    expect((await listUsers({ search: `op.${tag}` })).data).toEqual([]);
    expect((await listUsers({ email: op.email })).data).toEqual([]);
    const everyone = await listUsers({ order_column: 'created_at', order_direction: 'desc', limit: 1000 });
    expect(ids(everyone.data)).not.toContain(op.id);
  });
});

describe('GET /api/user/user DATES', () => {
  const tag = unique('Dts').toLowerCase();
  let a: any;
  let b: any;
  let c: any;

  beforeAll(async () => {
    a = await createUser({ email: newEmail(), lastname: tag });
    b = await createUser({ email: newEmail(), lastname: tag });
    c = await createUser({ email: newEmail(), lastname: tag });
    const set = (id: number, created: number, updated: number) =>
      sequelize().query('UPDATE users SET created_at = ?, updated_at = ? WHERE id = ?', { replacements: [created, updated, id] });
    await set(a.id, 1_500_000_000, 1_600_000_000);
    await set(b.id, 1_500_000_100, 1_600_000_100);
  });

  it.each([
    [{ created_at_min: 1_500_000_100 }, ['b', 'c']],
    [{ created_at_min: 1_500_000_101 }, ['c']],
    [{ created_at_max: 1_500_000_000 }, ['a']],
    [{ created_at_max: 1_500_000_099 }, ['a']],
    [{ created_at_min: 1_500_000_000, created_at_max: 1_500_000_100 }, ['a', 'b']],
    [{ updated_at_min: 1_600_000_100 }, ['b', 'c']],
    [{ updated_at_max: 1_600_000_000 }, ['a']],
    [{ updated_at_min: 1_600_000_001, updated_at_max: 1_600_000_100 }, ['b']],
    [{ created_at_max: 1_000_000_000 }, []],
  ] as Array<[Record<string, number>, string[]]>)('%j', async (query, expected) => {
    const byName: Record<string, any> = { a, b, c };
    const { data, count } = await listUsers({ lastname: tag, ...query });
    expect(ids(data)).toEqual(ids(expected.map((k) => byName[k])));
    expect(count).toBe(expected.length);
  });

  it('refuses a date that is not an integer', async () => {
    expectError(await api.get(BASE, { created_at_min: 'yesterday' }), 422, 'The created at min must be an integer.');
  });
});

describe('GET /api/user/user PAGING', () => {
  const tag = unique('Pg').toLowerCase();
  const made: any[] = [];

  beforeAll(async () => {
    // Created in id order E, D, C, B, A: name order is the reverse of id order.
    for (const first of ['E', 'D', 'C', 'B', 'A']) made.push(await createUser({ email: newEmail(), firstname: first, lastname: tag }));
  });

  it('orders by id ascending from the first result by default', async () => {
    const { data, count } = await listUsers({ lastname: tag });
    expect(data.map((u) => u.id)).toEqual(made.map((u) => u.id));
    expect(count).toBe(5);
  });

  it('pages with start (1-based) and limit', async () => {
    const res = await api.get(BASE, { lastname: tag, start: 2, limit: 2 });
    expect(expectList(res).map((u) => u.id)).toEqual([made[1].id, made[2].id]);
    expect(res.body.count).toBe(5);
    const last = await api.get(BASE, { lastname: tag, start: 5, limit: 2 });
    expect(expectList(last).map((u) => u.id)).toEqual([made[4].id]);
    const past = await api.get(BASE, { lastname: tag, start: 6 });
    expect(expectList(past)).toEqual([]);
    expect(past.body.count).toBe(5);
  });

  it('uses the default limit of 50', async () => {
    const res = await api.get(BASE);
    expect(expectList(res).length).toBe(Math.min(50, res.body.count));
  });

  it('orders by order_column and order_direction', async () => {
    expect((await listUsers({ lastname: tag, order_column: 'firstname' })).data.map((u) => u.firstname)).toEqual(['A', 'B', 'C', 'D', 'E']);
    expect((await listUsers({ lastname: tag, order_column: 'firstname', order_direction: 'desc' })).data.map((u) => u.firstname)).toEqual(['E', 'D', 'C', 'B', 'A']);
    expect((await listUsers({ lastname: tag, order_direction: 'desc' })).data.map((u) => u.id)).toEqual(made.map((u) => u.id).reverse());
  });

  it.each([
    [{ order_column: 'password' }, 'The selected order column is invalid.'],
    [{ order_column: 'no_such_column' }, 'The selected order column is invalid.'],
    [{ order_direction: 'sideways' }, 'The selected order direction is invalid.'],
    [{ limit: 0 }, 'The limit must be at least 1.'],
    [{ start: 0 }, 'The start must be at least 1.'],
    [{ start: 'first' }, 'The start must be an integer.'],
  ] as Array<[Record<string, unknown>, string]>)('answers 422 to %j', async (query, message) => {
    expectError(await api.get(BASE, query), 422, message);
  });
});

// ---- what a create answers ----------------------------------------------------------------------

describe('POST /api/user/user answers with the user as stored, not read back', () => {
  const statementsAfterCommit = (queries: string[]) => {
    // Sequelize logs `Executing (<connection>): <sql>`; a token's use is recorded at most once a minute.
    const sql = queries.map((q) => q.replace(/^Executing \([^)]*\): /, '')).filter((q) => !/api_tokens/.test(q));
    const commit = sql.indexOf('COMMIT;');
    expect(commit).toBeGreaterThan(0);
    return sql.slice(commit + 1);
  };
  /** The created user is what a show presents (minus what create leaves out). */
  const expectAsShown = async (created: Record<string, any>) => {
    const shown = await showUser(created.id);
    for (const k of CREATE_OMITS) delete shown[k];
    expect(created).toEqual(shown);
  };

  it('with nothing to link: every column (the database\'s defaults too) and no links, nothing read after COMMIT', async () => {
    const email = newEmail();
    await api.post(BASE, { email: newEmail() }); // warm
    const { result, queries } = await countQueries(() => api.post(BASE, { email, firstname: 'Ada' }));
    const created = expectSuccess(result, 'Successfully created new user!');
    // Its phones, groups, custom field values and additional addresses were read after COMMIT
    // before (and the user itself before it): five statements.
    expect(statementsAfterCommit(queries)).toEqual([]);
    expect(queries.filter((q) => /FROM `users`/.test(q))).toEqual([]);
    expect(created).toMatchObject({ email, firstname: 'Ada', lastname: null, active: 1, email_verified: 0, country: null, phonenumbers: [], groups: [], customfields: [], additional_emails: [], organisation: null });
    await expectAsShown(created);
  });

  it('with links and an organisation: those are read, and the answer is what a show gives', async () => {
    const field = await CustomField.create({ kind: 'user', name: unique('Shoe size'), type: 8 });
    const created = await createUser({
      email: newEmail(), phone: [newPhone().e164], groups: [extraGroupId], additional_email: [newEmail('more')],
      customfield: { [field.id]: '42' }, organisation: unique('Org'),
    });
    expect(created.organisation).toMatchObject({ id: created.organisation_id, owner_id: created.id });
    expect([created.phonenumbers, created.groups, created.customfields, created.additional_emails].map((l) => l.length)).toEqual([1, 1, 1, 1]);
    await expectAsShown(created);
  });
});
