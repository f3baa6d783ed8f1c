import request from 'supertest';
import { ApiToken } from '../../src/db/models';
import { hashToken } from '../../src/auth/tokens';
import { tokenCommand } from '../../src/cli/tokenCommand';
import { GIVEN_TOKEN_NAME, ensureFirstToken } from '../../src/cli/setup';
import { useApi, unique } from '../helpers/app';

const api = useApi();

async function run(...argv: string[]) {
  let out = '';
  let err = '';
  const code = await tokenCommand(argv, { out: (t) => { out += t; }, err: (t) => { err += t; } });
  return { code, out, err };
}

describe('the token command', () => {
  it('create prints the new token alone, stores only its hash, and the token works', async () => {
    const name = unique('cli');
    const { code, out, err } = await run('create', '--name', name);
    expect(code).toBe(0);
    expect(err).toBe('');
    expect(out).toMatch(/^hd_[A-Za-z0-9_-]{43}\n$/);
    const token = out.trim();
    const row = await ApiToken.findOne({ where: { name } });
    expect(row!.token_hash).toBe(hashToken(token));
    expect(JSON.stringify(row!.toJSON())).not.toContain(token);
    expect((await request(api.app).get('/api/core/brand').auth(token, 'anything')).status).toBe(200);
  });

  it('list shows names and never a token', async () => {
    const name = unique('listed');
    const created = (await run('create', '--name', name)).out.trim();
    const { code, out } = await run('list');
    expect(code).toBe(0);
    expect(out.split('\n')[0]).toBe('id\tname\tcreated\tlast used\tscopes\texpires');
    expect(out).toContain(`\t${name}\t`);
    expect(out).not.toContain(created);
  });

  it('revoke by name stops the token working; an unknown one exits 1', async () => {
    const name = unique('gone');
    const token = (await run('create', '--name', name)).out.trim();
    expect(await run('revoke', name)).toMatchObject({ code: 0, out: 'Revoked 1 token.\n' });
    expect((await request(api.app).get('/api/core/brand').auth(token, 'x')).status).toBe(401);
    expect(await run('revoke', name)).toEqual({ code: 1, out: '', err: `token revoke: no token has the name ${name}\n` });
    expect(await run('revoke', '4294967295')).toEqual({ code: 1, out: '', err: 'token revoke: no token has the id 4294967295\n' });
  });

  it('refuses a create without a name, and an unknown command, with exit code 2', async () => {
    expect((await run('create')).code).toBe(2);
    // A name of digits alone would be read as an id by revoke.
    expect(await run('create', '--name', '12')).toEqual({ code: 2, out: '', err: 'token create: --name must not be only digits (revoke reads a number as a token id)\n' });
    expect(await ApiToken.count({ where: { name: '12' } })).toBe(0);
    const unknown = await run('frobnicate');
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('usage:');
  });
});

describe('API_TOKEN, stored by the seed and npm start', () => {
  it('replaces the token stored for the previous API_TOKEN when it changes (rotation), and leaves other tokens alone', async () => {
    const old = `rotation-old-${unique('t')}`.padEnd(24, 'x');
    const rotated = `rotation-new-${unique('t')}`.padEnd(24, 'x');
    const other = (await run('create', '--name', unique('kept'))).out.trim();
    expect(await ensureFirstToken(old)).toBeNull();
    expect(await ensureFirstToken(old)).toBeNull(); // again: the same one token
    const stored = async () => (await ApiToken.findAll({ where: { name: GIVEN_TOKEN_NAME } })).map((t) => t.token_hash);
    expect(await stored()).toEqual([hashToken(old)]);

    expect(await ensureFirstToken(rotated)).toBeNull();
    expect(await stored()).toEqual([hashToken(rotated)]);
    const status = async (token: string) => (await request(api.app).get('/api/core/brand').auth(token, 'x')).status;
    expect({ old: await status(old), rotated: await status(rotated), other: await status(other) }).toEqual({ old: 401, rotated: 200, other: 200 });
  });
});
