import './defaultLoginLimitsEnv';
import request from 'supertest';
import { config } from '../../src/config';
import { IpBan } from '../../src/db/models';
import { logger } from '../../src/logger';
import { useApi, nowSec } from '../helpers/app';
import { expectError, expectList, expectSuccess } from '../helpers/envelope';
import { uniqueIpv4, uniqueIpv6 } from './support';

const api = useApi();
const BANNED = /^Your IP address is banned from using the API\. The ban ends at /;
const REASON = 'Automatic: 10 failed API authentications within 10 minutes';

const from = (ip: string, path = '/api/core/brand/1') => request(api.app).get(path).set('X-Forwarded-For', ip);
const wrongToken = (ip: string, n = 0) => from(ip).auth(`hd_wrong_${n}_${'x'.repeat(40)}`, 'x');

/** `n` failed authentications from `ip`, one after the other, each answered 401. */
async function failTimes(ip: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const res = await wrongToken(ip, i);
    expect({ i, status: res.status }).toEqual({ i, status: 401 });
  }
}

const bansOf = async (ip: string) => expectList(await api.get('/api/core/ipban', { ip, limit: 1000 }));

describe('automatic API bans after failed authentications (defaults: 10 in 10 minutes, 1 hour)', () => {
  it('uses the documented defaults', () => {
    expect(config().loginFailures).toEqual({ max: 10, windowSeconds: 600, banSeconds: 3600 });
  });

  it('bans an address after 10 wrong tokens: the 10th is still a 401, the next request a 403 even with a valid token', async () => {
    const ip = uniqueIpv4();
    const before = nowSec();
    await failTimes(ip, 10);
    expectError(await from(ip).auth(api.token, 'x'), 403, BANNED);
    expectError(await wrongToken(ip), 403, BANNED);

    const bans = await bansOf(ip);
    expect(bans).toHaveLength(1);
    expect(bans[0]).toMatchObject({ ip, type: 0, event_api: 1, event_user: 0, event_operator: 0, reason: REASON });
    expect(bans[0].expiry).toBeGreaterThanOrEqual(before + 3600);
    expect(bans[0].expiry).toBeLessThanOrEqual(nowSec() + 3600);
    // Other clients are not affected.
    expect((await from(uniqueIpv4()).auth(api.token, 'x')).status).toBe(200);
  });

  it('does not ban after 9 failures', async () => {
    const ip = uniqueIpv4();
    await failTimes(ip, 9);
    expect((await from(ip).auth(api.token, 'x')).status).toBe(200);
    expect(await bansOf(ip)).toEqual([]);
  });

  it('counts malformed Authorization headers and the dashboard too', async () => {
    const ip = uniqueIpv4();
    for (const header of ['Basic', 'Basic !!!', 'justatoken', 'Bearer abc', `Basic ${Buffer.from(':x').toString('base64')}`]) {
      expect((await from(ip).set('Authorization', header)).status).toBe(401);
    }
    for (let i = 0; i < 4; i++) expect((await from(ip, '/admin/queues').auth(`wrong${i}`, 'x')).status).toBe(401);
    expect((await wrongToken(ip)).status).toBe(401);
    expectError(await from(ip).auth(api.token, 'x'), 403, BANNED);
    expect(await bansOf(ip)).toHaveLength(1);
  });

  it('does not count requests without an Authorization header', async () => {
    const ip = uniqueIpv4();
    for (let i = 0; i < 15; i++) expect((await from(ip)).status).toBe(401);
    expect((await from(ip).auth(api.token, 'x')).status).toBe(200);
    expect(await bansOf(ip)).toEqual([]);
  });

  it('never bans an address whitelisted for the API', async () => {
    const ip = uniqueIpv4();
    expectSuccess(await api.post('/api/core/ipwhitelist', { ip, event_api: 1, event_user: 0, event_operator: 0 }), 'Successfully created new whitelisted ip!');
    await failTimes(ip, 25);
    expect((await from(ip).auth(api.token, 'x')).status).toBe(200);
    expect(await bansOf(ip)).toEqual([]);
  });

  it('bans an address whitelisted only for other events', async () => {
    const ip = uniqueIpv4();
    expectSuccess(await api.post('/api/core/ipwhitelist', { ip, event_api: 0 }), 'Successfully created new whitelisted ip!');
    await failTimes(ip, 10);
    expectError(await from(ip).auth(api.token, 'x'), 403, BANNED);
  });

  it('bans an IPv6 address, however the proxy spells it', async () => {
    const ip = uniqueIpv6();
    await failTimes(ip.toUpperCase(), 10);
    expectError(await from(ip).auth(api.token, 'x'), 403, BANNED);
    expect((await bansOf(ip)).map((b) => b.ip)).toEqual([ip]);
  });

  it('creates one ban when parallel failures race past the limit', async () => {
    const ip = uniqueIpv4();
    const statuses = (await Promise.all(Array.from({ length: 30 }, (_, i) => wrongToken(ip, i)))).map((r) => r.status);
    expect(statuses.filter((s) => s !== 401 && s !== 403)).toEqual([]);
    expect(statuses.filter((s) => s === 401).length).toBeGreaterThanOrEqual(10);
    expect(await IpBan.count({ where: { ip } })).toBe(1);
    expectError(await from(ip).auth(api.token, 'x'), 403, BANNED);
  });

  it('bans again at the next failure after an integrator deletes the automatic ban (count beyond the limit)', async () => {
    const ip = uniqueIpv4();
    await failTimes(ip, 10);
    const [ban] = await bansOf(ip);
    expect((await api.del(`/api/core/ipban/${ban.id}`)).status).toBe(200);
    expect((await from(ip).auth(api.token, 'x')).status).toBe(200);
    // The 11th failure within the window bans again: no more guessing until the window ends.
    expect((await wrongToken(ip, 11)).status).toBe(401);
    expectError(await from(ip).auth(api.token, 'x'), 403, BANNED);
    const again = await bansOf(ip);
    expect(again).toHaveLength(1);
    expect(again[0]).toMatchObject({ type: 0, event_api: 1, reason: REASON });
    expect(again[0].id).not.toBe(ban.id);
  });

  it('makes one ban when parallel failures beyond the limit race after the ban was deleted', async () => {
    const ip = uniqueIpv4();
    await failTimes(ip, 10);
    const [ban] = await bansOf(ip);
    expect((await api.del(`/api/core/ipban/${ban.id}`)).status).toBe(200);
    const statuses = (await Promise.all(Array.from({ length: 20 }, (_, i) => wrongToken(ip, i)))).map((r) => r.status);
    expect(statuses.filter((s) => s !== 401 && s !== 403)).toEqual([]);
    expect(await IpBan.count({ where: { ip } })).toBe(1);
    expectError(await from(ip).auth(api.token, 'x'), 403, BANNED);
  });

  it('logs the ban at warn level, never the token', async () => {
    const warn = jest.spyOn(logger, 'warn');
    try {
      const ip = uniqueIpv4();
      const secret = `hd_secret_${'s'.repeat(40)}`;
      for (let i = 0; i < 10; i++) expect((await from(ip).auth(`${secret}${i}`, 'x')).status).toBe(401);
      const calls = warn.mock.calls.filter((c) => JSON.stringify(c).includes(ip));
      expect(calls).toHaveLength(1);
      expect(calls[0][0]).toMatchObject({ ip, failures: 10, windowSeconds: 600 });
      expect(JSON.stringify(warn.mock.calls)).not.toContain(secret);
    } finally {
      warn.mockRestore();
    }
  });
});
