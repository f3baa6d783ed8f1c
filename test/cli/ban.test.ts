/**
 * `npm run ban -- list|delete`: a way out of an IP ban without SQL. A delete goes through the
 * model as the API's does, so the ban version is bumped and every web process lets the address
 * in at its next request.
 */
import './banLimitsEnv';
import request from 'supertest';
import { banVersion } from '../../src/auth/accessCache';
import { banCommand } from '../../src/cli/banCommand';
import { IpBan } from '../../src/db/models';
import { useApi, nowSec } from '../helpers/app';
import { expectSuccess } from '../helpers/envelope';
import { uniqueIpv4, uniqueIpv6 } from '../core/support';

const api = useApi();
const HEADER = 'id\tip\tapplies to\tends\treason\n';

async function run(...argv: string[]) {
  let out = '';
  let err = '';
  const code = await banCommand(argv, { out: (t) => { out += t; }, err: (t) => { err += t; } });
  return { code, out, err };
}

const from = (ip: string) => request(api.app).get('/api/core/brand/1').set('X-Forwarded-For', ip);
const wrongToken = (ip: string, n: number) => from(ip).auth(`hd_wrong_${n}_${'x'.repeat(40)}`, 'x');
const iso = (t: number) => new Date(t * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

describe('the ban command', () => {
  it('lifts the automatic ban of an address that sent wrong tokens: its next request with the right token passes', async () => {
    const ip = uniqueIpv4();
    for (let i = 0; i < 3; i++) expect((await wrongToken(ip, i)).status).toBe(401);
    const refused = await from(ip).auth(api.token, 'x');
    expect(refused.status).toBe(403);
    expect(refused.body.message).toContain(`npm run ban -- delete ${ip}`);

    const [ban] = await IpBan.findAll({ where: { ip } });
    const listed = await run('list', ip);
    expect(listed).toEqual({
      code: 0, err: '', out: `${HEADER}${ban.id}\t${ip}\tapi\t${iso(ban.expiry!)}\tAutomatic: 3 failed API authentications within 10 minutes\n`,
    });

    const before = await banVersion();
    expect(before).not.toBeNull();
    expect(await run('delete', ip)).toEqual({ code: 0, out: `Deleted 1 ban (${ip}).\n`, err: '' });
    // The ban version moved on: every web process's cached ban answers are stale at once.
    expect(await banVersion()).not.toBe(before);
    expect((await from(ip).auth(api.token, 'x')).status).toBe(200);
    expect(await run('list', ip)).toEqual({ code: 0, out: HEADER, err: '' });
  });

  it('deletes a ban by its id, and lists every ban with where it applies and when it ends', async () => {
    const ip = uniqueIpv4();
    const permanent = expectSuccess(await api.post('/api/core/ipban', { ip, type: 1, reason: 'by\thand\nhere' }), 'Successfully created new ban!');
    const expiry = nowSec() + 7200;
    const temporary = expectSuccess(await api.post('/api/core/ipban', { ip, type: 0, event_api: 0, event_operator: 0, expiry_time: expiry }), 'Successfully created new ban!');
    const all = await run('list');
    expect(all.code).toBe(0);
    expect(all.out.startsWith(HEADER)).toBe(true);
    expect(all.out).toContain(`\n${permanent.id}\t${ip}\tapi,user,operator\tnever\tby hand here\n`);
    expect(all.out).toContain(`\n${temporary.id}\t${ip}\tuser\t${iso(expiry)}\t-\n`);

    expect((await from(ip).auth(api.token, 'x')).status).toBe(403);
    expect(await run('delete', String(permanent.id))).toEqual({ code: 0, out: `Deleted 1 ban (${ip}).\n`, err: '' });
    expect((await from(ip).auth(api.token, 'x')).status).toBe(200); // the other ban is not for the API
    expect(await IpBan.count({ where: { ip } })).toBe(1);
  });

  it('finds an IPv6 address however it is written', async () => {
    const ip = `${uniqueIpv6()}`;
    expectSuccess(await api.post('/api/core/ipban', { ip, type: 1 }), 'Successfully created new ban!');
    const expanded = ip.toUpperCase();
    expect((await run('list', expanded)).out).toContain(`\t${ip}\t`);
    expect(await run('delete', expanded)).toEqual({ code: 0, out: `Deleted 1 ban (${ip}).\n`, err: '' });
  });

  it('exits 1 when there is nothing to delete, and 2 with the usage for what it cannot read', async () => {
    expect(await run('delete', uniqueIpv4())).toEqual({ code: 1, out: 'Deleted 0 bans.\n', err: '' });
    expect(await run('delete', '999999999')).toEqual({ code: 1, out: 'Deleted 0 bans.\n', err: '' });
    expect(await run('delete')).toEqual({ code: 2, out: '', err: 'ban delete needs a ban id or an IP address\n' });
    expect(await run('delete', '10.0.0.0/8')).toMatchObject({ code: 2, out: '' });
    expect(await run('list', 'nobody')).toEqual({ code: 2, out: '', err: 'ban list: not an IP address: nobody\n' });
    const unknown = await run('lift');
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('npm run --silent ban -- delete ID|IP');
  });
});
