import './lowLoginLimitsEnv';
import request from 'supertest';
import { describeSeconds } from '../../src/http/authFailures';
import { useApi, nowSec } from '../helpers/app';
import { expectError, expectList } from '../helpers/envelope';
import { uniqueIpv4 } from './support';

const api = useApi();
const from = (ip: string) => request(api.app).get('/api/core/brand/1').set('X-Forwarded-For', ip);
const fail = async (ip: string) => expect((await from(ip).auth('hd_not_a_token_at_all_xxxxxxxxxx', 'x')).status).toBe(401);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('automatic API bans with LOGIN_FAILURES_MAX=3, LOGIN_FAILURES_WINDOW_SECONDS=2, LOGIN_BAN_SECONDS=120', () => {
  it('bans after the configured number of failures, for the configured time', async () => {
    const ip = uniqueIpv4();
    const before = nowSec();
    for (let i = 0; i < 3; i++) await fail(ip);
    expectError(await from(ip).auth(api.token, 'x'), 403, /^Your IP address is banned from using the API\. The ban ends at \S+ \(in (2 minutes|\d+ seconds)\)\./);
    const [ban, ...more] = expectList(await api.get('/api/core/ipban', { ip }));
    expect(more).toEqual([]);
    expect(ban).toMatchObject({ type: 0, event_api: 1, reason: 'Automatic: 3 failed API authentications within 2 seconds' });
    expect(ban.expiry).toBeGreaterThanOrEqual(before + 120);
    expect(ban.expiry).toBeLessThanOrEqual(nowSec() + 120);
  });

  it('counts only the failures within the window', async () => {
    const ip = uniqueIpv4();
    await fail(ip);
    await fail(ip);
    await sleep(3100); // the window (2 s, Redis counts whole seconds) is over
    await fail(ip);
    await fail(ip);
    expect((await from(ip).auth(api.token, 'x')).status).toBe(200);
    await fail(ip);
    expect((await from(ip).auth(api.token, 'x')).status).toBe(403);
  });

  it('words the window in the reason', () => {
    expect(['10 minutes', '1 hour', '2 hours', '1 minute', '90 seconds', '1 second'])
      .toEqual([600, 3600, 7200, 60, 90, 1].map(describeSeconds));
  });
});
