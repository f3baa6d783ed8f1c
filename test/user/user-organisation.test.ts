/**
 * A user's organisation: `organisation`, `organisation_id`, `organisation_access_level` on user
 * create and update, organisations joined by email domain, the `organisation_name` filter, and the
 * verification mail (`send_email`) written to the outbox.
 */
import { Op } from 'sequelize';
import { Department, DomainEvent, Organisation, OutboxEntry, TicketPriority, TicketStatus, User } from '../../src/db/models';
import { useApi, unique, newEmail } from '../helpers/app';
import { expectError, expectList, expectSuccess } from '../helpers/envelope';

const api = useApi();
const USERS = '/api/user/user';
const ORGS = '/api/user/organisation';
const MANAGER = 0;
const MEMBER = 1;

// ---- helpers ------------------------------------------------------------------------------------

const ORGANISATION_FIELDS = ['id', 'brand_id', 'owner_id', 'name', 'country', 'language_code', 'timezone', 'notes', 'created_at', 'updated_at'].sort();

async function createUser(form: Record<string, unknown>): Promise<any> {
  return expectSuccess(await api.post(USERS, form), 'Successfully created new user!');
}
async function updateUser(id: number, form: Record<string, unknown>): Promise<any> {
  return expectSuccess(await api.put(`${USERS}/${id}`, form), 'Successfully updated the user!');
}
const showUser = async (id: number) => expectSuccess(await api.get(`${USERS}/${id}`));
async function createOrganisation(form: Record<string, unknown> = {}): Promise<any> {
  return expectSuccess(await api.post(ORGS, { name: unique('Org'), ...form }), 'Successfully created new organisation!');
}
const showOrganisation = async (id: number) => expectSuccess(await api.get(`${ORGS}/${id}`));
async function createBrand(): Promise<number> {
  return expectSuccess(await api.post('/api/core/brand', { name: unique('Brand') }), 'Successfully created new brand!').id;
}
/** [user id, access level] of an organisation's users. */
const members = async (orgId: number) =>
  (await showOrganisation(orgId)).users.map((u: any) => [u.id, u.organisation_access_level]).sort((a: number[], b: number[]) => a[0] - b[0]);

/** The events emitted since `after` (an event id) that name these organisations or users, as [name, id]. */
async function eventsSince(after: number, ids: { organisations?: number[]; users?: number[] }): Promise<Array<[string, number]>> {
  const rows = await DomainEvent.findAll({ where: { id: { [Op.gt]: after }, name: { [Op.like]: '%.%' } }, order: [['id', 'ASC']] });
  return rows.map((e) => [e.name, JSON.parse(e.payload)] as const).flatMap(([name, p]): Array<[string, number]> => {
    if (name.startsWith('organisation.') && ids.organisations?.includes(p.organisationId)) return [[name, p.organisationId]];
    if (name.startsWith('user.') && ids.users?.includes(p.userId)) return [[name, p.userId]];
    return [];
  });
}
const lastEventId = async () => Number((await DomainEvent.max('id')) ?? 0);

let otherBrandId: number;
beforeAll(async () => {
  otherBrandId = await createBrand();
});

// ---- organisation on create ---------------------------------------------------------------------

describe('`organisation` on user create', () => {
  it('creates a new organisation owned by the user, who is its Manager', async () => {
    const name = unique('New org');
    const u = await createUser({ email: newEmail('m'), organisation: name, country: 'FR', language_code: 'fr' });
    expect(Number.isInteger(u.organisation_id)).toBe(true);
    expect(u.organisation_access_level).toBe(MANAGER);
    expect(Object.keys(u.organisation).sort()).toEqual(ORGANISATION_FIELDS);
    expect(u.organisation).toMatchObject({ id: u.organisation_id, brand_id: 1, owner_id: u.id, name });
    const org = await showOrganisation(u.organisation_id);
    expect(org).toMatchObject({ id: u.organisation_id, brand_id: 1, owner_id: u.id, name });
    expect(org.users.map((m: any) => [m.id, m.organisation_id, m.organisation_access_level])).toEqual([[u.id, org.id, MANAGER]]);
    expect(await showUser(u.id)).toMatchObject({ organisation_id: org.id, organisation_access_level: MANAGER, organisation: u.organisation });
  });

  it('takes the given organisation_access_level', async () => {
    const u = await createUser({ email: newEmail('m'), organisation: unique('Org'), organisation_access_level: MEMBER });
    expect(u.organisation_access_level).toBe(MEMBER);
    expect(u.organisation.owner_id).toBe(u.id);
  });

  it('creates the organisation in the user\'s brand', async () => {
    const u = await createUser({ email: newEmail('m'), brand_id: otherBrandId, organisation: unique('Org') });
    expect(u.organisation).toMatchObject({ brand_id: otherBrandId, owner_id: u.id });
  });

  it('does not create the organisation when the user is refused', async () => {
    const name = unique('Refused org');
    expectError(await api.post(USERS, { email: newEmail('m'), organisation: name, language_code: 'zz' }), 422, 'The selected language code is invalid.');
    expect(await Organisation.count({ where: { name } })).toBe(0);
  });
});

// ---- organisation_id on create --------------------------------------------------------------------

describe('`organisation_id` on user create', () => {
  it('joins an existing organisation as a User (level 1) by default', async () => {
    const org = await createOrganisation();
    const u = await createUser({ email: newEmail('m'), organisation_id: org.id });
    expect(u).toMatchObject({ organisation_id: org.id, organisation_access_level: MEMBER });
    expect(u.organisation).toEqual(Object.fromEntries(ORGANISATION_FIELDS.map((k) => [k, org[k]])));
    expect(await members(org.id)).toEqual([[u.id, MEMBER]]);
    // Joining does not make the user the owner.
    expect((await showOrganisation(org.id)).owner_id).toBeNull();
  });

  it('joins with the given organisation_access_level', async () => {
    const org = await createOrganisation();
    const manager = await createUser({ email: newEmail('m'), organisation_id: org.id, organisation_access_level: MANAGER });
    const member = await createUser({ email: newEmail('m'), organisation_id: org.id, organisation_access_level: MEMBER });
    expect(manager.organisation_access_level).toBe(MANAGER);
    expect(member.organisation_access_level).toBe(MEMBER);
    expect(await members(org.id)).toEqual([[manager.id, MANAGER], [member.id, MEMBER]]);
  });

  it('joins an organisation of the user\'s own (non-default) brand', async () => {
    const org = await createOrganisation({ brand_id: otherBrandId });
    const u = await createUser({ email: newEmail('m'), brand_id: otherBrandId, organisation_id: org.id });
    expect(u).toMatchObject({ brand_id: otherBrandId, organisation_id: org.id, organisation_access_level: MEMBER });
  });

  it.each([
    ['of another brand', async () => (await createOrganisation({ brand_id: otherBrandId })).id],
    ['that does not exist', async () => 999999999],
  ])('refuses an organisation %s', async (_name, orgId) => {
    const email = newEmail('m');
    expectError(await api.post(USERS, { email, organisation_id: await orgId() }), 422, 'The selected organisation id is invalid.');
    expect(await User.count({ where: { email } })).toBe(0);
  });

  it('refuses an organisation of the default brand for a user of another brand', async () => {
    const org = await createOrganisation();
    const email = newEmail('m');
    expectError(await api.post(USERS, { email, brand_id: otherBrandId, organisation_id: org.id }), 422, 'The selected organisation id is invalid.');
    expect(await User.count({ where: { email } })).toBe(0);
  });

  it('refuses organisation_id=0 on create', async () => {
    expectError(await api.post(USERS, { email: newEmail('m'), organisation_id: 0 }), 422, 'The selected organisation id is invalid.');
  });

  it('refuses organisation and organisation_id together, creating nothing', async () => {
    const org = await createOrganisation();
    const name = unique('Both');
    const email = newEmail('m');
    expectError(await api.post(USERS, { email, organisation: name, organisation_id: org.id }), 422, 'The organisation and organisation id fields cannot be used together.');
    expect(await User.count({ where: { email } })).toBe(0);
    expect(await Organisation.count({ where: { name } })).toBe(0);
  });

  it('refuses organisation_access_level for a user without an organisation', async () => {
    const email = newEmail('m');
    expectError(await api.post(USERS, { email, organisation_access_level: MEMBER }), 422, 'The organisation access level can only be set for a user in an organisation.');
    expect(await User.count({ where: { email } })).toBe(0);
  });

  it('refuses an organisation_access_level that is not 0 or 1', async () => {
    const org = await createOrganisation();
    expectError(await api.post(USERS, { email: newEmail('m'), organisation_id: org.id, organisation_access_level: 2 }), 422, 'The organisation access level field must be true or false.');
  });
});

// ---- membership on update -----------------------------------------------------------------------

describe('membership on user update', () => {
  it('organisation_id=0 leaves the organisation', async () => {
    const org = await createOrganisation();
    const u = await createUser({ email: newEmail('m'), organisation_id: org.id });
    const updated = await updateUser(u.id, { organisation_id: 0 });
    expect(updated).toMatchObject({ organisation_id: null, organisation_access_level: null, organisation: null });
    expect(await showUser(u.id)).toMatchObject({ organisation_id: null, organisation_access_level: null, organisation: null });
    expect(await members(org.id)).toEqual([]);
    // Leaving again is harmless.
    expect(await updateUser(u.id, { organisation_id: 0 })).toMatchObject({ organisation_id: null, organisation_access_level: null });
  });

  it('an owner who leaves is no longer the owner; the organisation stays', async () => {
    const owner = await createUser({ email: newEmail('m'), organisation: unique('Owned') });
    const orgId = owner.organisation_id;
    await updateUser(owner.id, { organisation_id: 0 });
    const org = await showOrganisation(orgId);
    expect(org.owner_id).toBeNull();
    expect(org.users).toEqual([]);
  });

  it('an owner who moves to another organisation is no longer the owner of the one they left', async () => {
    const owner = await createUser({ email: newEmail('m'), organisation: unique('Owned') });
    const orgId = owner.organisation_id;
    const other = await createOrganisation();
    expect(await updateUser(owner.id, { organisation_id: other.id })).toMatchObject({ organisation_id: other.id, organisation_access_level: MEMBER });
    expect(await showOrganisation(orgId)).toMatchObject({ owner_id: null, users: [] });
    expect((await showOrganisation(other.id)).owner_id).toBeNull();
    expect(await Organisation.count({ where: { owner_id: owner.id } })).toBe(0);
  });

  it('an owner moved by another organisation\'s access_level is no longer the owner of the one they left', async () => {
    const owner = await createUser({ email: newEmail('m'), organisation: unique('Owned') });
    const orgId = owner.organisation_id;
    const other = await createOrganisation();
    expectSuccess(await api.put(`${ORGS}/${other.id}`, { access_level: { [owner.id]: MANAGER } }), 'Successfully updated the organisation!');
    expect(await showUser(owner.id)).toMatchObject({ organisation_id: other.id, organisation_access_level: MANAGER });
    expect(await showOrganisation(orgId)).toMatchObject({ owner_id: null, users: [] });
    // Also when the other organisation is created with the owner in it.
    const owner2 = await createUser({ email: newEmail('m'), organisation: unique('Owned') });
    const created = await createOrganisation({ access_level: { [owner2.id]: MEMBER } });
    expect((await showUser(owner2.id)).organisation_id).toBe(created.id);
    expect((await showOrganisation(owner2.organisation_id)).owner_id).toBeNull();
  });

  it('an owner who stays keeps the organisation: its own access_level or organisation_id again change nothing', async () => {
    const owner = await createUser({ email: newEmail('m'), organisation: unique('Owned') });
    const orgId = owner.organisation_id;
    await updateUser(owner.id, { organisation_id: orgId, organisation_access_level: MEMBER });
    expectSuccess(await api.put(`${ORGS}/${orgId}`, { access_level: { [owner.id]: MANAGER } }), 'Successfully updated the organisation!');
    expect((await showOrganisation(orgId)).owner_id).toBe(owner.id);
  });

  it('organisation_id moves the user to another organisation as a User, or at the given level', async () => {
    const [a, b] = [await createOrganisation(), await createOrganisation()];
    const u = await createUser({ email: newEmail('m'), organisation_id: a.id, organisation_access_level: MANAGER });
    expect(await updateUser(u.id, { organisation_id: b.id })).toMatchObject({ organisation_id: b.id, organisation_access_level: MEMBER });
    expect(await members(a.id)).toEqual([]);
    expect(await members(b.id)).toEqual([[u.id, MEMBER]]);
    // The same organisation again keeps the level; a level given changes it.
    expect(await updateUser(u.id, { organisation_id: b.id })).toMatchObject({ organisation_id: b.id, organisation_access_level: MEMBER });
    expect(await updateUser(u.id, { organisation_id: b.id, organisation_access_level: MANAGER })).toMatchObject({ organisation_access_level: MANAGER });
  });

  it('organisation_access_level alone changes the level in the current organisation', async () => {
    const org = await createOrganisation();
    const u = await createUser({ email: newEmail('m'), organisation_id: org.id });
    expect(await updateUser(u.id, { organisation_access_level: MANAGER })).toMatchObject({ organisation_id: org.id, organisation_access_level: MANAGER });
    expect(await members(org.id)).toEqual([[u.id, MANAGER]]);
    const loner = await createUser({ email: newEmail('m') });
    expectError(await api.put(`${USERS}/${loner.id}`, { organisation_access_level: MANAGER }), 422, 'The organisation access level can only be set for a user in an organisation.');
  });

  it('refuses an organisation of another brand and leaves the user where it was', async () => {
    const mine = await createOrganisation();
    const theirs = await createOrganisation({ brand_id: otherBrandId });
    const u = await createUser({ email: newEmail('m'), organisation_id: mine.id });
    expectError(await api.put(`${USERS}/${u.id}`, { organisation_id: theirs.id, firstname: 'Moved' }), 422, 'The selected organisation id is invalid.');
    expect(await showUser(u.id)).toMatchObject({ firstname: null, organisation_id: mine.id, organisation_access_level: MEMBER });
  });

  it('`organisation` renames the user\'s organisation when the user is its owner', async () => {
    const owner = await createUser({ email: newEmail('m'), organisation: unique('Before') });
    const member = await createUser({ email: newEmail('m'), organisation_id: owner.organisation_id });
    const name = unique('After');
    const updated = await updateUser(owner.id, { organisation: name });
    expect(updated).toMatchObject({ organisation_id: owner.organisation_id, organisation_access_level: MANAGER });
    expect(updated.organisation).toMatchObject({ id: owner.organisation_id, name, owner_id: owner.id });
    expect((await showOrganisation(owner.organisation_id)).name).toBe(name);
    expect((await showUser(member.id)).organisation).toMatchObject({ id: owner.organisation_id, name });
    expect(await Organisation.count({ where: { name } })).toBe(1);
  });

  it('`organisation` from a member who is not the owner is a 422 and renames nothing', async () => {
    const before = unique('Kept name');
    const owner = await createUser({ email: newEmail('m'), organisation: before });
    const member = await createUser({ email: newEmail('m'), organisation_id: owner.organisation_id, organisation_access_level: MANAGER });
    const after = unique('Hijacked');
    expectError(await api.put(`${USERS}/${member.id}`, { organisation: after, firstname: 'Changed' }), 422, 'The organisation can only be renamed by its owner.');
    expect((await showOrganisation(owner.organisation_id)).name).toBe(before);
    expect(await showUser(member.id)).toMatchObject({ firstname: null, organisation_id: owner.organisation_id });
    expect(await Organisation.count({ where: { name: after } })).toBe(0);
  });

  it('`organisation` for a user without an organisation creates one the user owns', async () => {
    const u = await createUser({ email: newEmail('m') });
    const name = unique('Later org');
    const updated = await updateUser(u.id, { organisation: name });
    expect(updated.organisation_access_level).toBe(MANAGER);
    expect(updated.organisation).toMatchObject({ id: updated.organisation_id, name, owner_id: u.id, brand_id: 1 });
  });

  it('organisation_id=0 with `organisation` leaves and creates a new organisation', async () => {
    const org = await createOrganisation();
    const u = await createUser({ email: newEmail('m'), organisation_id: org.id });
    const name = unique('Fresh');
    const updated = await updateUser(u.id, { organisation_id: 0, organisation: name });
    expect(updated.organisation_id).not.toBe(org.id);
    expect(updated.organisation).toMatchObject({ name, owner_id: u.id });
    expect(updated.organisation_access_level).toBe(MANAGER);
    expect(await members(org.id)).toEqual([]);
  });
});

// ---- organisations claiming an email domain -------------------------------------------------------

describe('users at a domain claimed by an organisation', () => {
  const domain = `${unique('d')}.example.net`.toLowerCase();
  let org: any;

  beforeAll(async () => {
    org = await createOrganisation({ domain: [domain] });
    expect(org.domains).toEqual([domain]);
  });

  it('join it as Users when created in the same brand', async () => {
    const u = await createUser({ email: `someone@${domain}` });
    expect(u).toMatchObject({ organisation_id: org.id, organisation_access_level: MEMBER });
    expect(u.organisation).toMatchObject({ id: org.id, name: org.name });
    const v = await createUser({ email: `SOMEONE.ELSE@${domain.toUpperCase()}` });
    expect(v).toMatchObject({ organisation_id: org.id, organisation_access_level: MEMBER });
    expect((await members(org.id)).map(([id]: number[]) => id)).toEqual(expect.arrayContaining([u.id, v.id]));
  });

  it('do not join it from another brand', async () => {
    const u = await createUser({ email: `other.brand@${domain}`, brand_id: otherBrandId });
    expect(u).toMatchObject({ organisation_id: null, organisation_access_level: null });
  });

  it('do not join it from another domain or a subdomain', async () => {
    expect(await createUser({ email: newEmail('x', `sub.${domain}`) })).toMatchObject({ organisation_id: null });
    expect(await createUser({ email: newEmail('x', `not${domain}`) })).toMatchObject({ organisation_id: null });
  });

  it('follow an explicit organisation instead', async () => {
    const other = await createOrganisation();
    expect(await createUser({ email: `explicit@${domain}`, organisation_id: other.id })).toMatchObject({ organisation_id: other.id });
    const own = await createUser({ email: `own@${domain}`, organisation: unique('Own') });
    expect(own.organisation_id).not.toBe(org.id);
    expect(own.organisation.owner_id).toBe(own.id);
  });
});

// ---- organisation_name filter -------------------------------------------------------------------

describe('GET /api/user/user organisation_name', () => {
  it('lists the users of organisations whose name contains the value', async () => {
    const tag = unique('Named').toLowerCase();
    const a = await createUser({ email: newEmail('m'), organisation: `Alpha ${tag}` });
    const b = await createUser({ email: newEmail('m'), organisation_id: a.organisation_id });
    const c = await createUser({ email: newEmail('m'), organisation: `Beta ${tag}` });
    await createUser({ email: newEmail('m'), organisation: unique('Unrelated') });
    const list = async (q: Record<string, unknown>) => {
      const res = await api.get(USERS, { limit: 1000, ...q });
      return { ids: expectList(res).map((u) => u.id).sort((x, y) => x - y), count: res.body.count };
    };
    expect(await list({ organisation_name: tag })).toEqual({ ids: [a.id, b.id, c.id], count: 3 });
    expect(await list({ organisation_name: `Alpha ${tag}` })).toEqual({ ids: [a.id, b.id], count: 2 });
    expect(await list({ organisation_name: `alpha ${tag.toUpperCase()}` })).toEqual({ ids: [a.id, b.id], count: 2 });
    expect(await list({ organisation_name: `Gamma ${tag}` })).toEqual({ ids: [], count: 0 });
    expect(await list({ organisation_name: tag, organisation_id: c.organisation_id })).toEqual({ ids: [c.id], count: 1 });
  });
});

// ---- verification mail --------------------------------------------------------------------------

/** The verification mails written to the outbox for a user. */
async function verificationRows(userId: number) {
  const rows = await OutboxEntry.findAll({ where: { name: 'user.verification', payload: { [Op.like]: `%${userId}%` } } });
  return rows.filter((r) => JSON.parse(r.payload).userId === userId);
}

describe('send_email', () => {
  it('on create writes one verification mail for a user without a password', async () => {
    const u = await createUser({ email: newEmail('m'), send_email: 1 });
    const rows = await verificationRows(u.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ name: 'user.verification', queue: 'mail' });
    expect(JSON.parse(rows[0].payload)).toEqual({ userId: u.id });
  });

  it.each([
    ['with a password', { send_email: 1, password: 'has a password' }],
    ['with send_email=0', { send_email: 0 }],
    ['without send_email', {}],
  ])('on create writes nothing %s', async (_name, form) => {
    const u = await createUser({ email: newEmail('m'), ...form });
    expect(await verificationRows(u.id)).toHaveLength(0);
  });

  it('on update writes a verification mail only when the user has no password', async () => {
    const u = await createUser({ email: newEmail('m') });
    await updateUser(u.id, { send_email: 1 });
    expect(await verificationRows(u.id)).toHaveLength(1);
    await updateUser(u.id, { firstname: 'No mail' });
    expect(await verificationRows(u.id)).toHaveLength(1);
    await updateUser(u.id, { send_email: 1 });
    expect(await verificationRows(u.id)).toHaveLength(2);
    // A password given with send_email: no mail.
    await updateUser(u.id, { send_email: 1, password: 'password now' });
    expect(await verificationRows(u.id)).toHaveLength(2);
    // A stored password: no mail.
    await updateUser(u.id, { send_email: 1 });
    expect(await verificationRows(u.id)).toHaveLength(2);
  });

  it('a refused update writes no mail', async () => {
    const u = await createUser({ email: newEmail('m') });
    expectError(await api.put(`${USERS}/${u.id}`, { send_email: 1, groups: [999999] }), 422, 'The selected groups.0 is invalid.');
    expect(await verificationRows(u.id)).toHaveLength(0);
  });
});

describe('events of organisations changed through users, and of users changed through organisations', () => {
  it('an organisation created by a user\'s `organisation` (create and update) or a ticket\'s user_organisation is organisation.created', async () => {
    let mark = await lastEventId();
    const user = await createUser({ email: newEmail('e'), organisation: unique('ByCreate') });
    expect(await eventsSince(mark, { organisations: [user.organisation_id] })).toEqual([['organisation.created', user.organisation_id]]);
    const plain = await createUser({ email: newEmail('e') });
    mark = await lastEventId();
    const updated = await updateUser(plain.id, { organisation: unique('ByUpdate') });
    expect(await eventsSince(mark, { organisations: [updated.organisation_id] })).toEqual([['organisation.created', updated.organisation_id]]);
    mark = await lastEventId();
    const email = newEmail('e');
    const ticket = await api.post('/api/ticket/ticket', {
      user_email: email, user_organisation: unique('ByTicket'), subject: 'Hello', text: 'Hi',
      department: (await Department.findOne())!.id, status: (await TicketStatus.findOne())!.id, priority: (await TicketPriority.findOne())!.id,
    });
    expect(ticket.status).toBe(200);
    const byTicket = (await User.findOne({ where: { email } }))!;
    expect(byTicket.organisation_id).not.toBeNull();
    expect(await eventsSince(mark, { organisations: [byTicket.organisation_id!] })).toEqual([['organisation.created', byTicket.organisation_id]]);
  });

  it('the owner renaming it through `organisation` is organisation.updated; the same name again is no event', async () => {
    const owner = await createUser({ email: newEmail('e'), organisation: unique('Before') });
    let mark = await lastEventId();
    await updateUser(owner.id, { organisation: unique('After') });
    expect(await eventsSince(mark, { organisations: [owner.organisation_id] })).toEqual([['organisation.updated', owner.organisation_id]]);
    mark = await lastEventId();
    await updateUser(owner.id, { organisation: (await showOrganisation(owner.organisation_id)).name });
    expect(await eventsSince(mark, { organisations: [owner.organisation_id] })).toEqual([]);
  });

  it('another organisation\'s access_level: user.updated for the users it moves or changes, organisation.updated for the one that lost its owner', async () => {
    const owner = await createUser({ email: newEmail('e'), organisation: unique('Owned') });
    const stays = await createUser({ email: newEmail('e') });
    const other = await createOrganisation({ access_level: { [stays.id]: MEMBER } });
    const mark = await lastEventId();
    expectSuccess(await api.put(`${ORGS}/${other.id}`, { access_level: { [owner.id]: MANAGER, [stays.id]: MEMBER } }), 'Successfully updated the organisation!');
    expect((await showOrganisation(owner.organisation_id)).owner_id).toBeNull();
    expect(await eventsSince(mark, { organisations: [owner.organisation_id, other.id], users: [owner.id, stays.id] })).toEqual([
      ['organisation.updated', owner.organisation_id], ['user.updated', owner.id], ['organisation.updated', other.id],
    ]);
  });

  it('deleting an organisation is user.updated for each of its users (their organisation cleared), then organisation.deleted', async () => {
    const org = await createOrganisation();
    const a = await createUser({ email: newEmail('e'), organisation_id: org.id });
    const b = await createUser({ email: newEmail('e'), organisation_id: org.id });
    const mark = await lastEventId();
    await api.del(`${ORGS}/${org.id}`).expect(200);
    expect((await showUser(a.id)).organisation_id).toBeNull();
    expect(await eventsSince(mark, { organisations: [org.id], users: [a.id, b.id] })).toEqual([
      ['user.updated', a.id], ['user.updated', b.id], ['organisation.deleted', org.id],
    ]);
  });
});
