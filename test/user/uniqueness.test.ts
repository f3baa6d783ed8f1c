/**
 * Uniqueness held by the database (migration 003): one account per email per brand counting main
 * and additional emails, one operator per email, one organisation per domain and brand. Requests
 * that race each other get one winner; the losers get the 422 of the field they sent, whether the
 * service's check or the unique key refused them.
 */
import type { Response } from 'supertest';
import { QueryTypes, type Transaction, UniqueConstraintError, ForeignKeyConstraintError } from 'sequelize';
import { Group, Organisation, OrganisationDomain, PersonEmail, Role, User, UserEmail } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { useApi, unique, newEmail } from '../helpers/app';
import { expectError, expectSuccess } from '../helpers/envelope';
import { leftOpen } from '../helpers/races';

const api = useApi();
const USERS = '/api/user/user';
const OPERATORS = '/api/user/operator';
const ORGS = '/api/user/organisation';

const newDomain = () => `${unique('dom')}.example.org`.toLowerCase();
const BRAND_EMAIL_TAKEN = 'The selected brand id is invalid: an email of the user belongs to another user of that brand.';
const BRAND_DOMAIN_TAKEN = 'The selected brand id is invalid: a domain of the organisation is claimed by another organisation of that brand.';

let adminGroupId: number;
let otherBrandId: number;

beforeAll(async () => {
  adminGroupId = (await Group.findOne({ where: { type: 'operator', name: 'Administrators' } }))!.id;
  otherBrandId = expectSuccess(await api.post('/api/core/brand', { name: unique('Brand') }), 'Successfully created new brand!').id;
});

const createUser = async (form: Record<string, unknown>) => expectSuccess(await api.post(USERS, form), 'Successfully created new user!');
const operatorForm = (email: string) => ({ firstname: 'Op', lastname: unique('Erator'), email, groups: [adminGroupId] });

/** Status and message of each response, counted: `{ '200 Successfully created new user!': 1, '422 ...': 9 }`. */
function outcomes(results: Response[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of results) {
    const key = `${r.status} ${r.body.message}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/** Ten at once, through the whole app (the pool has ten connections). */
const race = (send: (i: number) => Promise<Response>) => Promise.all(Array.from({ length: 10 }, (_, i) => send(i)));

// ---- ten requests at once -------------------------------------------------------------------------

describe('ten requests racing for one value: one wins, nine get the 422 of the field they sent', () => {
  it('users with the same additional email in one brand', async () => {
    const shared = newEmail('shared');
    const forms = Array.from({ length: 10 }, () => ({ email: newEmail('racer'), additional_email: [newEmail('own'), shared] }));
    const results = await race((i) => api.post(USERS, forms[i]));
    expect(outcomes(results)).toEqual({ '200 Successfully created new user!': 1, '422 The additional email.1 has already been taken.': 9 });
    expect(await UserEmail.count({ where: { email: shared } })).toBe(1);
    expect(await PersonEmail.count({ where: { email: shared } })).toBe(1);
    expect(await User.count({ where: { email: forms.map((f) => f.email) } })).toBe(1);
  });

  it('users with the same additional email, sent as JSON', async () => {
    const shared = newEmail('sharedjson');
    const results = await race(() => api.postJson(USERS, { email: newEmail('racer'), additional_email: [shared] }));
    expect(outcomes(results)).toEqual({ '200 Successfully created new user!': 1, '422 The additional email.0 has already been taken.': 9 });
    expect(await UserEmail.count({ where: { email: shared } })).toBe(1);
  });

  it('users with the same email in one brand', async () => {
    const email = newEmail('same');
    const results = await race(() => api.post(USERS, { email, firstname: 'Racer' }));
    expect(outcomes(results)).toEqual({ '200 Successfully created new user!': 1, '422 The email has already been taken.': 9 });
    expect(await User.count({ where: { email } })).toBe(1);
  });

  it('an email sent as the main address by some and as an additional one by others', async () => {
    const shared = newEmail('mixed');
    const forms = Array.from({ length: 10 }, (_, i) => (i % 2 ? { email: shared } : { email: newEmail('racer'), additional_email: [shared] }));
    const results = await race((i) => api.post(USERS, forms[i]));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    results.forEach((r, i) => {
      if (r.status === 200) return;
      expectError(r, 422, i % 2 ? 'The email has already been taken.' : 'The additional email.0 has already been taken.');
    });
    expect(await PersonEmail.count({ where: { email: shared, scope: 'brand:1' } })).toBe(1);
    expect(await User.count({ where: { email: shared } }) + await UserEmail.count({ where: { email: shared } })).toBe(1);
  });

  it('operators with the same email', async () => {
    const email = newEmail('opsame');
    const results = await race(() => api.post(OPERATORS, operatorForm(email)));
    expect(outcomes(results)).toEqual({ '200 Successfully created new operator!': 1, '422 The email has already been taken.': 9 });
    expect(await User.count({ where: { email, type: 'operator' } })).toBe(1);
  });

  it('organisations claiming the same domain in one brand', async () => {
    const shared = newDomain();
    const names = Array.from({ length: 10 }, () => unique('Claimer'));
    const results = await race((i) => api.post(ORGS, { name: names[i], domain: [newDomain(), shared] }));
    expect(outcomes(results)).toEqual({ '200 Successfully created new organisation!': 1, '422 The domain.1 has already been taken.': 9 });
    expect(await OrganisationDomain.count({ where: { domain: shared } })).toBe(1);
    expect(await Organisation.count({ where: { name: names } })).toBe(1);
  });

  it('roles with the same name all get a slug of their own', async () => {
    const name = unique('Race role');
    const results = await race(() => api.post('/api/user/role', { name }));
    expect(outcomes(results)).toEqual({ '200 Successfully created new role!': 10 });
    const slugs = results.map((r) => r.body.data.slug);
    expect(new Set(slugs).size).toBe(10);
    expect(await Role.count({ where: { name } })).toBe(10);
  });
});

// ---- the unique key, when the check cannot see the winner ------------------------------------------

/**
 * Whether a write of this worker's database has been running for a while: with the winner's
 * transaction idle, that write waits for the winner's locks. (PROCESSLIST, not INNODB_TRX: the
 * latter is a cached snapshot that does not always show a waiting statement as LOCK WAIT.)
 */
async function writeWaiting(): Promise<boolean> {
  const [row] = await sequelize().query<{ n: number }>(
    `SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST
     WHERE DB = DATABASE() AND ID <> CONNECTION_ID() AND COMMAND = 'Query' AND TIME_MS > 200 AND INFO REGEXP '^[[:space:]]*(INSERT|UPDATE|DELETE)'`,
    { type: QueryTypes.SELECT },
  );
  return Number(row.n) > 0;
}

/**
 * Runs `setup` in a transaction left open (the winner, not committed yet: the request's check
 * cannot see it), sends the request, waits until the request's write is blocked on the winner's
 * row, then commits the winner: the request's write then fails on the unique key.
 */
async function loseToUncommitted(setup: (t: Transaction) => Promise<unknown>, send: () => Promise<Response>): Promise<Response> {
  const winner = await leftOpen(setup);
  // (supertest sends a request when it is awaited: adopting it as a promise does that now)
  const pending = Promise.resolve().then(send);
  let blocked = false;
  for (let i = 0; i < 150 && !blocked; i++) {
    await new Promise((r) => setTimeout(r, 20));
    blocked = await writeWaiting();
  }
  await winner.commit();
  const res = await pending;
  // Before the unique keys the request was never blocked (nothing stopped its write).
  expect(blocked).toBe(true);
  return res;
}

describe('a write refused by the unique key answers like the check would', () => {
  it('an additional email held by an uncommitted user: names the item sent', async () => {
    const shared = newEmail('held');
    const email = newEmail('loser');
    const res = await loseToUncommitted(async (t) => {
      const winner = await User.create({ type: 'user', brand_id: 1, email: newEmail('winner') }, { transaction: t });
      await UserEmail.create({ user_id: winner.id, email: shared }, { transaction: t });
    }, () => api.post(USERS, { email, additional_email: [newEmail('own'), shared.toUpperCase()] }));
    expectError(res, 422, 'The additional email.1 has already been taken.');
    expect(await User.count({ where: { email } })).toBe(0);
    expect(await PersonEmail.count({ where: { email: shared } })).toBe(1);
  });

  it('a main email that an uncommitted user holds as an additional one', async () => {
    const shared = newEmail('held');
    const res = await loseToUncommitted(async (t) => {
      const winner = await User.create({ type: 'user', brand_id: 1, email: newEmail('winner') }, { transaction: t });
      await UserEmail.create({ user_id: winner.id, email: shared }, { transaction: t });
    }, () => api.post(USERS, { email: shared, firstname: 'Loser' }));
    expectError(res, 422, 'The email has already been taken.');
    expect(await User.count({ where: { email: shared } })).toBe(0);
  });

  it('an update to a main email an uncommitted user holds', async () => {
    const shared = newEmail('held');
    const loser = await createUser({ email: newEmail('loser') });
    const res = await loseToUncommitted(
      (t) => User.create({ type: 'user', brand_id: 1, email: shared }, { transaction: t }),
      () => api.put(`${USERS}/${loser.id}`, { email: shared }),
    );
    expectError(res, 422, 'The email has already been taken.');
    expect((await User.findByPk(loser.id))!.email).toBe(loser.email);
  });

  it('a move to a brand where an uncommitted user holds the email: the brand is refused', async () => {
    const email = newEmail('mover');
    const mover = await createUser({ email });
    const res = await loseToUncommitted(
      (t) => User.create({ type: 'user', brand_id: otherBrandId, email }, { transaction: t }),
      () => api.put(`${USERS}/${mover.id}`, { brand_id: otherBrandId }),
    );
    expectError(res, 422, BRAND_EMAIL_TAKEN);
    expect((await User.findByPk(mover.id))!.brand_id).toBe(1);
  });

  it('an operator email an uncommitted operator holds', async () => {
    const email = newEmail('opheld');
    const res = await loseToUncommitted(
      (t) => User.create({ type: 'operator', brand_id: null, email, firstname: 'Win', lastname: unique('Ner') }, { transaction: t }),
      () => api.post(OPERATORS, operatorForm(email)),
    );
    expectError(res, 422, 'The email has already been taken.');
    expect(await User.count({ where: { email, type: 'operator' } })).toBe(1);
  });

  it('a domain an uncommitted organisation claims: names the item sent', async () => {
    const shared = newDomain();
    const name = unique('Loser org');
    const res = await loseToUncommitted(async (t) => {
      const winner = await Organisation.create({ brand_id: 1, name: unique('Winner org') }, { transaction: t });
      await OrganisationDomain.create({ organisation_id: winner.id, brand_id: 1, domain: shared }, { transaction: t });
    }, () => api.post(ORGS, { name, domain: [newDomain(), newDomain(), shared.toUpperCase()] }));
    expectError(res, 422, 'The domain.2 has already been taken.');
    expect(await Organisation.count({ where: { name } })).toBe(0);
  });

  it('a move of an organisation whose domain an uncommitted organisation of the new brand claims: the brand is refused', async () => {
    const domain = newDomain();
    const mover = expectSuccess(await api.post(ORGS, { name: unique('Mover'), domain: [domain] }), 'Successfully created new organisation!');
    // The domains follow the organisation by ON UPDATE CASCADE, which reports the duplicate its own way.
    const res = await loseToUncommitted(async (t) => {
      const winner = await Organisation.create({ brand_id: otherBrandId, name: unique('Winner org') }, { transaction: t });
      await OrganisationDomain.create({ organisation_id: winner.id, brand_id: otherBrandId, domain }, { transaction: t });
    }, () => api.put(`${ORGS}/${mover.id}`, { brand_id: otherBrandId }));
    expectError(res, 422, BRAND_DOMAIN_TAKEN);
    expect((await Organisation.findByPk(mover.id))!.brand_id).toBe(1);
  });

  it('an additional email longer than the 64 characters MariaDB quotes in its error', async () => {
    const shared = `${unique('long')}@${'l'.repeat(60)}.example.com`.toLowerCase();
    const res = await loseToUncommitted(async (t) => {
      const winner = await User.create({ type: 'user', brand_id: 1, email: newEmail('winner') }, { transaction: t });
      await UserEmail.create({ user_id: winner.id, email: shared }, { transaction: t });
    }, () => api.post(USERS, { email: newEmail('loser'), additional_email: [newEmail('own'), newEmail('own'), shared] }));
    expectError(res, 422, 'The additional email.2 has already been taken.');
  });
});

// ---- the database holds the rules, whoever writes ----------------------------------------------------

describe('the database refuses duplicates written past the API', () => {
  const refusedBy = async (write: Promise<unknown>, key: string) => {
    const err = await write.then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(UniqueConstraintError);
    expect((err as UniqueConstraintError).parent.message).toContain(`for key '${key}'`);
  };

  it('an address held in the brand, as a main or an additional email', async () => {
    const owner = await createUser({ email: newEmail('owner'), additional_email: [newEmail('extra')] });
    const extra = owner.additional_emails[0].email;
    await refusedBy(User.create({ type: 'user', brand_id: 1, email: owner.email }), 'person_emails_email_scope');
    await refusedBy(User.create({ type: 'user', brand_id: 1, email: extra }), 'person_emails_email_scope');
    const other = await User.create({ type: 'user', brand_id: 1, email: newEmail('other') });
    await refusedBy(UserEmail.create({ user_id: other.id, email: owner.email }), 'person_emails_email_scope');
    await refusedBy(UserEmail.create({ user_id: other.id, email: extra }), 'person_emails_email_scope');
    await refusedBy(other.update({ email: extra }), 'person_emails_email_scope');
    // Another brand, and the operators, are other scopes.
    await User.create({ type: 'user', brand_id: otherBrandId, email: extra });
    // (operators with names: other files of this worker list and sort them)
    const operator = () => ({ type: 'operator' as const, brand_id: null, email: extra, firstname: 'Op', lastname: unique('Direct') });
    await User.create(operator());
    await refusedBy(User.create(operator()), 'person_emails_email_scope');
  });

  it('a domain claimed in the brand, and a domain row with a brand not its organisation\'s', async () => {
    const domain = newDomain();
    const [a, b] = await Promise.all([Organisation.create({ brand_id: 1, name: unique('A') }), Organisation.create({ brand_id: 1, name: unique('B') })]);
    await OrganisationDomain.create({ organisation_id: a.id, brand_id: 1, domain });
    await refusedBy(OrganisationDomain.create({ organisation_id: b.id, brand_id: 1, domain }), 'organisation_domains_domain_brand');
    await expect(OrganisationDomain.create({ organisation_id: b.id, brand_id: otherBrandId, domain })).rejects.toBeInstanceOf(ForeignKeyConstraintError);
  });

  it('keeps the claims in step: a deleted user, a changed email and a moved user free their addresses', async () => {
    const [gone, changed, moved] = [newEmail('gone'), newEmail('changed'), newEmail('moved')];
    const goneExtra = newEmail('goneextra');
    const u1 = await createUser({ email: gone, additional_email: [goneExtra] });
    const u2 = await createUser({ email: changed });
    const u3 = await createUser({ email: moved });
    await api.del(`${USERS}/${u1.id}`).expect(200);
    expectSuccess(await api.put(`${USERS}/${u2.id}`, { email: newEmail('new') }), 'Successfully updated the user!');
    expectSuccess(await api.put(`${USERS}/${u3.id}`, { brand_id: otherBrandId }), 'Successfully updated the user!');
    expect(await PersonEmail.findAll({ where: { user_id: u3.id }, raw: true })).toEqual([
      expect.objectContaining({ scope: `brand:${otherBrandId}`, email: moved, user_email_id: null }),
    ]);
    for (const email of [gone, goneExtra, changed, moved]) await createUser({ email });
  });
});

// ---- one address, one of a user's emails -------------------------------------------------------------

describe('an address is one of a user\'s emails once', () => {
  it('swaps the main and an additional email in one update', async () => {
    const [main, extra] = [newEmail('main'), newEmail('extra')];
    const u = await createUser({ email: main, additional_email: [extra] });
    const updated = expectSuccess(await api.put(`${USERS}/${u.id}`, { email: extra, additional_email: [main] }), 'Successfully updated the user!');
    expect(updated.email).toBe(extra);
    expect(updated.additional_emails.map((e: any) => e.email)).toEqual([main]);
  });

  it('an additional email made the main one leaves the additional ones', async () => {
    const [main, extra, kept] = [newEmail('main'), newEmail('extra'), newEmail('kept')];
    const u = await createUser({ email: main, additional_email: [extra, kept] });
    const updated = expectSuccess(await api.put(`${USERS}/${u.id}`, { email: extra }), 'Successfully updated the user!');
    expect(updated.email).toBe(extra);
    expect(updated.additional_emails.map((e: any) => e.email)).toEqual([kept]);
    // The old main address is free.
    await createUser({ email: main });
  });

  it('numbers a taken additional email as sent, duplicates included', async () => {
    const owner = await createUser({ email: newEmail('owner') });
    const own = newEmail('own');
    expectError(await api.post(USERS, { email: newEmail(), additional_email: [own, own, owner.email] }), 422, 'The additional email.2 has already been taken.');
  });

  it('refuses to move a user to a brand where another user has one of its additional emails', async () => {
    const extra = newEmail('extra');
    const u = await createUser({ email: newEmail('mover'), additional_email: [extra] });
    await createUser({ email: extra, brand_id: otherBrandId });
    expectError(await api.put(`${USERS}/${u.id}`, { brand_id: otherBrandId }), 422, BRAND_EMAIL_TAKEN);
    expect((await User.findByPk(u.id))!.brand_id).toBe(1);
    // With new additional emails the move is fine, and the old ones are named if sent again.
    expectError(await api.put(`${USERS}/${u.id}`, { brand_id: otherBrandId, additional_email: [newEmail(), extra] }), 422, 'The additional email.1 has already been taken.');
    const moved = expectSuccess(await api.put(`${USERS}/${u.id}`, { brand_id: otherBrandId, additional_email: [newEmail('fresh')] }), 'Successfully updated the user!');
    expect(moved.brand_id).toBe(otherBrandId);
  });

  it('refuses to move an organisation to a brand where another organisation claims its domain', async () => {
    const domain = newDomain();
    const org = expectSuccess(await api.post(ORGS, { name: unique('Mover'), domain: [domain] }), 'Successfully created new organisation!');
    expectSuccess(await api.post(ORGS, { name: unique('There'), brand_id: otherBrandId, domain: [domain] }), 'Successfully created new organisation!');
    expectError(await api.put(`${ORGS}/${org.id}`, { brand_id: otherBrandId }), 422, BRAND_DOMAIN_TAKEN);
    const moved = expectSuccess(await api.put(`${ORGS}/${org.id}`, { brand_id: otherBrandId, domain: [newDomain()] }), 'Successfully updated the organisation!');
    expect(moved.brand_id).toBe(otherBrandId);
    // Moved without new domains, the organisation's domains follow it to the brand.
    const d2 = newDomain();
    const org2 = expectSuccess(await api.post(ORGS, { name: unique('Follower'), domain: [d2] }), 'Successfully created new organisation!');
    expectSuccess(await api.put(`${ORGS}/${org2.id}`, { brand_id: otherBrandId }), 'Successfully updated the organisation!');
    expect(await OrganisationDomain.findAll({ where: { organisation_id: org2.id }, raw: true })).toEqual([expect.objectContaining({ domain: d2, brand_id: otherBrandId })]);
  });
});
