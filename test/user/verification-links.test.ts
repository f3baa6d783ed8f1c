/**
 * A verification link (/account/verify/<token>) is a credential for the address it was mailed to:
 * an update through the API that changes the email, sets a password or deactivates the person
 * makes the person's outstanding links invalid, for users and operators alike.
 */
import request from 'supertest';
import { Group, User } from '../../src/db/models';
import { issueVerificationToken } from '../../src/user/verification';
import { verifyPassword } from '../../src/user/passwords';
import { useApi, unique, newEmail } from '../helpers/app';
import { expectError, expectSuccess } from '../helpers/envelope';
import { uniqueIpv4 } from '../core/support';

const api = useApi();
const INVALID = 'This verification link is invalid, already used or expired.';

const check = (token: string) => request(api.app).get(`/account/verify/${token}`).set('X-Forwarded-For', uniqueIpv4());
const use = (token: string, password = 'the-link-holder-1') =>
  request(api.app).post(`/account/verify/${token}`).set('X-Forwarded-For', uniqueIpv4()).type('form').send({ password });

async function newUser(form: Record<string, unknown> = {}): Promise<{ id: number; email: string; token: string }> {
  const user = expectSuccess(await api.post('/api/user/user', { email: newEmail('vl'), firstname: 'Vi', lastname: unique('Link'), ...form }), 'Successfully created new user!');
  return { id: user.id, email: user.email, token: (await issueVerificationToken(user.id)).token };
}

async function newOperator(): Promise<{ id: number; token: string }> {
  const groupId = (await Group.findOne({ where: { type: 'operator', name: 'Administrators' } }))!.id;
  const operator = expectSuccess(await api.post('/api/user/operator', {
    firstname: 'Op', lastname: unique('Link'), email: newEmail('vlop'), groups: [groupId],
  }), 'Successfully created new operator!');
  return { id: operator.id, token: (await issueVerificationToken(operator.id)).token };
}

const updateUser = async (id: number, form: Record<string, unknown>) => expectSuccess(await api.put(`/api/user/user/${id}`, form), 'Successfully updated the user!');
const updateOperator = async (id: number, form: Record<string, unknown>) => expectSuccess(await api.put(`/api/user/operator/${id}`, form), 'Successfully updated the operator!');

/** The link answers 404 to GET and POST, and the person's password is not the link holder's. */
async function expectRevoked(id: number, token: string) {
  expectError(await check(token), 404, INVALID);
  expectError(await use(token), 404, INVALID);
  const person = (await User.findByPk(id))!;
  if (person.password) expect(await verifyPassword(person.password, 'the-link-holder-1')).toBe(false);
}

describe('verification links of users', () => {
  it('stay valid through an update that changes none of email, password, active', async () => {
    const u = await newUser();
    await updateUser(u.id, { firstname: 'Renamed', email: u.email, active: 1 });
    expect((await check(u.token)).status).toBe(200);
  });

  it('stop working when the email changes: the old link cannot verify the new address', async () => {
    const u = await newUser();
    const other = newEmail('other');
    await updateUser(u.id, { email: other });
    await expectRevoked(u.id, u.token);
    expect(await User.findByPk(u.id)).toMatchObject({ email: other, email_verified: 0, password: null });
  });

  it('stop working when a password is set through the API, which the link cannot overwrite', async () => {
    const u = await newUser();
    await updateUser(u.id, { password: 'set-by-the-api-1' });
    await expectRevoked(u.id, u.token);
    expect(await verifyPassword((await User.findByPk(u.id))!.password!, 'set-by-the-api-1')).toBe(true);
  });

  it('stop working when the user is deactivated, also after reactivation', async () => {
    const u = await newUser();
    await updateUser(u.id, { active: 0 });
    await updateUser(u.id, { active: 1 });
    await expectRevoked(u.id, u.token);
    expect((await User.findByPk(u.id))!.password).toBeNull();
  });

  it('of an inactive user are refused (one mailed before inactive users stopped getting one): nothing is set', async () => {
    const u = await newUser({ active: 0 });
    await expectRevoked(u.id, u.token);
    expect(await User.findByPk(u.id)).toMatchObject({ active: 0, email_verified: 0, password: null });
  });

  it('a refused update revokes nothing', async () => {
    const u = await newUser();
    expectError(await api.put(`/api/user/user/${u.id}`, { email: newEmail('x'), language_code: 'zz' }), 422, 'The selected language code is invalid.');
    expect((await check(u.token)).status).toBe(200);
  });

  it('a verified user whose email an administrator changes stays verified (decision: the API\'s caller vouches for it)', async () => {
    const u = await newUser({ password: 'a-password-123', email_verified: 1 });
    const other = newEmail('other');
    expect(await updateUser(u.id, { email: other })).toMatchObject({ email: other, email_verified: 1 });
    // The caller can say otherwise in the same request.
    expect(await updateUser(u.id, { email: newEmail('third'), email_verified: 0 })).toMatchObject({ email_verified: 0 });
  });
});

describe('verification links of operators', () => {
  it('stop working when the email changes', async () => {
    const o = await newOperator();
    await updateOperator(o.id, { email: newEmail('opother') });
    await expectRevoked(o.id, o.token);
  });

  it('stop working when a password is set through the API', async () => {
    const o = await newOperator();
    await updateOperator(o.id, { password: 'set-by-the-api-1' });
    await expectRevoked(o.id, o.token);
  });

  it('stop working when the operator is deactivated', async () => {
    const o = await newOperator();
    await updateOperator(o.id, { active: 0 });
    await updateOperator(o.id, { active: 1 });
    await expectRevoked(o.id, o.token);
  });
});
