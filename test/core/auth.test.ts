import { createHash } from 'node:crypto';
import request from 'supertest';
import { QueryTypes } from 'sequelize';
import { createToken, revokeToken } from '../../src/auth/tokens';
import { sequelize } from '../../src/db/sequelize';
import { useApi, unique } from '../helpers/app';

const api = useApi();
const PATH = '/api/core/brand/1';

const basic = (credentials: string) => `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`;

function expectUnauthorized(res: request.Response) {
  expect(res.status).toBe(401);
  expect(res.headers['www-authenticate']).toMatch(/^Basic\b/);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body).toEqual({ status: 'error', message: expect.any(String), data: null });
  expect(res.body.message.length).toBeGreaterThan(0);
}

const withAuthorization = (value: string) => request(api.app).get(PATH).set('Authorization', value);

describe('authentication failures: 401, WWW-Authenticate and the envelope', () => {
  it('refuses a request without an Authorization header', async () => {
    expectUnauthorized(await request(api.app).get(PATH));
  });

  it('refuses a request without a token on every kind of call', async () => {
    expectUnauthorized(await request(api.app).get('/api/core/ipban'));
    expectUnauthorized(await request(api.app).post('/api/core/spamrule').type('form').send({ text: 'x', type: 0 }));
    expectUnauthorized(await request(api.app).put('/api/core/brand/1').type('form').send({ name: 'Hacked' }));
    expectUnauthorized(await request(api.app).delete('/api/core/ipban/1'));
    const brand = await api.get(PATH);
    expect(brand.body.data.name).not.toBe('Hacked');
  });

  it.each([
    ['a Basic header without credentials', 'Basic'],
    ['a Basic header with characters outside base64', 'Basic !!!not-base64!!!'],
    ['a header with no scheme', 'justatoken'],
  ])('refuses %s', async (_name, value) => {
    expectUnauthorized(await withAuthorization(value));
  });

  it('refuses a scheme other than Basic, even with a valid token', async () => {
    expectUnauthorized(await withAuthorization(`Bearer ${api.token}`));
    expectUnauthorized(await withAuthorization(`Digest ${Buffer.from(`${api.token}:x`).toString('base64')}`));
  });

  it('refuses an empty user name', async () => {
    expectUnauthorized(await withAuthorization(basic(':password')));
    expectUnauthorized(await withAuthorization(basic(':')));
    expectUnauthorized(await withAuthorization(basic('')));
  });

  it('refuses a wrong token', async () => {
    expectUnauthorized(await withAuthorization(basic(`${unique('hd_wrong')}:x`)));
    expectUnauthorized(await withAuthorization(basic(`${api.token}x:x`)));
    expectUnauthorized(await withAuthorization(basic(`${api.token.slice(0, -1)}:x`)));
  });

  it('refuses the token sent as the password', async () => {
    expectUnauthorized(await withAuthorization(basic(`someone:${api.token}`)));
  });

  it('refuses a very long user name', async () => {
    expectUnauthorized(await withAuthorization(basic(`${'a'.repeat(5000)}:x`)));
  });
});

describe('authentication with a token', () => {
  it('accepts the token as the user name whatever the password', async () => {
    for (const password of ['x', '', 'anything at all', api.token]) {
      const res = await request(api.app).get(PATH).auth(api.token, password);
      expect(res.status).toBe(200);
      expect(res.body.data.id).toBe(1);
    }
  });

  it('accepts the token as the user name without a colon', async () => {
    const res = await withAuthorization(basic(api.token));
    expect(res.status).toBe(200);
  });

  it('accepts the scheme name in any case', async () => {
    const res = await withAuthorization(`basic ${Buffer.from(`${api.token}:x`).toString('base64')}`);
    expect(res.status).toBe(200);
  });

  it('stops accepting a token once it is revoked', async () => {
    const { token, record } = await createToken(unique('revoked'));
    expect((await request(api.app).get(PATH).auth(token, 'x')).status).toBe(200);
    expect(await revokeToken(String(record.id))).toBe(1);
    expectUnauthorized(await request(api.app).get(PATH).auth(token, 'x'));
    // Other tokens keep working.
    expect((await request(api.app).get(PATH).auth(api.token, 'x')).status).toBe(200);
  });

  it('stops accepting a token revoked by name', async () => {
    const name = unique('byname');
    const { token } = await createToken(name);
    expect((await request(api.app).get(PATH).auth(token, 'x')).status).toBe(200);
    expect(await revokeToken(name)).toBe(1);
    expectUnauthorized(await request(api.app).get(PATH).auth(token, 'x'));
  });

  it('stores tokens hashed: no row of api_tokens holds the token text', async () => {
    const { token } = await createToken(unique('hashed'));
    expect((await request(api.app).get(PATH).auth(token, 'x')).status).toBe(200);
    const rows = await sequelize().query<Record<string, unknown>>('SELECT * FROM api_tokens', { type: QueryTypes.SELECT });
    const dump = JSON.stringify(rows);
    for (const t of [token, api.token]) {
      expect(dump).not.toContain(t);
      expect(dump).not.toContain(t.slice(3));
      const sha256 = createHash('sha256').update(t, 'utf8').digest('hex');
      expect(rows.filter((r) => r.token_hash === sha256)).toHaveLength(1);
    }
  });
});
