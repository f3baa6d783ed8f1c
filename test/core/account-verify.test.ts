/**
 * /account/verify/<token> against abuse: the link is checked before any password is hashed, and
 * both methods are throttled per client address (VERIFY_ATTEMPTS_MAX, default 20 in 10 minutes).
 */
import request from 'supertest';
import { config } from '../../src/config';
import { User } from '../../src/db/models';
import * as passwords from '../../src/user/passwords';
import { issueVerificationToken } from '../../src/user/verification';
import { useApi, unique, newEmail } from '../helpers/app';
import { expectError, expectSuccess } from '../helpers/envelope';
import { uniqueIpv4 } from './support';

const api = useApi();
const INVALID = 'This verification link is invalid, already used or expired.';
const BOGUS = 'A'.repeat(43);

async function newLink(): Promise<{ userId: number; token: string }> {
  const user = expectSuccess(await api.post('/api/user/user', { email: newEmail('verify'), firstname: 'Vi', lastname: unique('Link') }), 'Successfully created new user!');
  return { userId: user.id, token: (await issueVerificationToken(user.id)).token };
}

function expectVerified(res: request.Response) {
  expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { status: 'success', message: 'Your email address is verified and your password is set.', data: null } });
}

const get = (ip: string, token: string) => request(api.app).get(`/account/verify/${token}`).set('X-Forwarded-For', ip);
const post = (ip: string, token: string, password = 'a-good-password-1') => request(api.app).post(`/account/verify/${token}`).set('X-Forwarded-For', ip).type('form').send({ password });

describe('POST /account/verify/<token>: the link before the password', () => {
  let hashed: jest.SpyInstance;
  beforeEach(() => {
    hashed = jest.spyOn(passwords, 'hashPassword');
  });
  afterEach(() => hashed.mockRestore());

  it('answers a bogus link with 404 without hashing the password', async () => {
    expectError(await post(uniqueIpv4(), BOGUS), 404, INVALID);
    expectError(await post(uniqueIpv4(), 'short'), 404, INVALID);
    expect(hashed).not.toHaveBeenCalled();
  });

  it('answers a used link with 404 without hashing the password', async () => {
    const { token } = await newLink();
    expectVerified(await post(uniqueIpv4(), token));
    expect(hashed).toHaveBeenCalledTimes(1);
    expectError(await post(uniqueIpv4(), token, 'another-password-2'), 404, INVALID);
    expect(hashed).toHaveBeenCalledTimes(1);
  });

  it('still validates the password of a valid link, and sets it', async () => {
    const { userId, token } = await newLink();
    expectError(await post(uniqueIpv4(), token, 'short'), 422, 'The password must be at least 8 characters.');
    expect(hashed).not.toHaveBeenCalled();
    expectVerified(await post(uniqueIpv4(), token, 'long-enough-password'));
    expect((await User.findByPk(userId))!.email_verified).toBe(1);
    expect(await passwords.verifyPassword((await User.findByPk(userId))!.password!, 'long-enough-password')).toBe(true);
  });
});

describe('verification links are throttled per address', () => {
  it('defaults to 20 attempts in 10 minutes', () => {
    expect(config().verifyAttempts).toEqual({ max: 20, windowSeconds: 600 });
  });

  it('answers the 21st request within the window with 429, Retry-After and the envelope, GET and POST alike', async () => {
    const ip = uniqueIpv4();
    const { token } = await newLink();
    for (let i = 0; i < 10; i++) expect((await get(ip, `${BOGUS}${i}`)).status).toBe(404);
    for (let i = 0; i < 9; i++) expect((await post(ip, `${BOGUS}${i}`)).status).toBe(404);
    expect((await get(ip, token)).status).toBe(200); // the 20th
    for (const res of [await get(ip, token), await post(ip, token)]) {
      expectError(res, 429, /^Too many attempts from your IP address\. Try again in \d+ seconds\.$/);
      const retryAfter = Number(res.headers['retry-after']);
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(600);
    }
    // The link itself is untouched, and other addresses may still use it.
    expectVerified(await post(uniqueIpv4(), token));
  });
});
