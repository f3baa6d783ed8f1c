/**
 * Look-alike emails: an IDN domain is one address whether written in Unicode or punycode (stored
 * in its ASCII form), and an email with invisible characters is refused.
 */
import { canonicalEmail } from '../../src/lib/validation';
import { unique, useApi } from '../helpers/app';
import { expectError, expectSuccess } from '../helpers/envelope';

const api = useApi();
const USERS = '/api/user/user';

describe('look-alike emails', () => {
  it('stores an IDN domain in punycode; the Unicode and punycode forms are one address', async () => {
    const local = unique('idn').toLowerCase();
    const user = expectSuccess(await api.post(USERS, { email: `${local}@Bücher.example` }), 'Successfully created new user!');
    expect(user.email).toBe(`${local}@xn--bcher-kva.example`);
    expectError(await api.post(USERS, { email: `${local}@xn--bcher-kva.example` }), 422, 'The email has already been taken.');
    expectError(await api.post(USERS, { email: `${local}@bücher.example` }), 422, 'The email has already been taken.');
    const other = unique('idn').toLowerCase();
    expectSuccess(await api.post(USERS, { email: `${other}@xn--bcher-kva.example` }), 'Successfully created new user!');
    expectError(await api.post(USERS, { email: `${other}@BÜCHER.example` }), 422, 'The email has already been taken.');
  });

  it.each([
    ['zero-width space', '\u200B'], ['zero-width joiner', '\u200D'], ['word joiner', '\u2060'], ['BOM', '\uFEFF'], ['soft hyphen', '\u00AD'], ['RLO', '\u202E'],
  ])('refuses an email with a %s', async (_name, ch) => {
    const local = unique('zw').toLowerCase();
    expectError(await api.post(USERS, { email: `${local.slice(0, 3)}${ch}${local.slice(3)}@example.com` }), 422, 'The email must not contain invisible characters.');
    expectError(await api.post(USERS, { email: `${local}@exam${ch}ple.com` }), 422, 'The email must not contain invisible characters.');
  });

  it('canonical form', () => {
    expect(canonicalEmail(' A@Bücher.Example ')).toBe('a@xn--bcher-kva.example');
    expect(canonicalEmail('a@xn--bcher-kva.example')).toBe('a@xn--bcher-kva.example');
  });
});
