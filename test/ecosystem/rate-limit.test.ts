/**
 * Rate limits per API token and per client address, counted in Redis: headers on every API
 * response, 429 in the envelope with Retry-After beyond a limit, a new window after the last,
 * never for addresses whitelisted for the API.
 */
import './lowRateLimitsEnv';
import request from 'supertest';
import { createToken } from '../../src/auth/tokens';
import { nowSec, useApi } from '../helpers/app';
import { expectError, expectSuccess } from '../helpers/envelope';
import { uniqueIpv4 } from '../core/support';
import { config } from '../../src/config';
import { counterClient } from '../../src/redis/windowCounter';

const api = useApi();

// Earlier test files of this jest worker share its Redis prefix and counted requests from the
// loopback address with their own (high) limits and longer windows: start from no count.
beforeAll(async () => {
  const redis = counterClient();
  const keys = await redis.keys(`${config().queuePrefix}:ratelimit:*`);
  if (keys.length) await redis.del(...keys);
});
const from = (ip: string, token: string) => request(api.app).get('/api/core/brand/1').set('X-Forwarded-For', ip).auth(token, 'x');
const newToken = async () => (await createToken('rate limit test')).token;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('rate limits (RATE_LIMIT_PER_TOKEN=5, RATE_LIMIT_PER_IP=8, RATE_LIMIT_WINDOW_SECONDS=2)', () => {
  it('count per token, with the headers, and answer 429 in the envelope with Retry-After beyond the limit', async () => {
    const token = await newToken();
    const ip = uniqueIpv4();
    for (let i = 1; i <= 5; i++) {
      const res = await from(ip, token);
      expectSuccess(res);
      // The token's limit is the closer one: it is the one shown.
      expect(res.headers['x-ratelimit-limit']).toBe('5');
      expect(res.headers['x-ratelimit-remaining']).toBe(String(5 - i));
      const reset = Number(res.headers['x-ratelimit-reset']);
      expect(reset).toBeGreaterThan(nowSec());
      expect(reset).toBeLessThanOrEqual(nowSec() + 3);
    }
    const refused = await from(ip, token);
    expectError(refused, 429, /^Too many requests for this API token: the limit is 5 per 2 seconds\. Try again in [12] seconds\.$/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    // Another token from the same address is not limited by the first one's count.
    expectSuccess(await from(ip, await newToken()));
  });

  it('count per address, failed authentications too, across tokens', async () => {
    const ip = uniqueIpv4();
    for (let i = 0; i < 3; i++) expect((await request(api.app).get('/api/core/brand/1').set('X-Forwarded-For', ip)).status).toBe(401);
    for (let i = 0; i < 5; i++) expectSuccess(await from(ip, await newToken()));
    const refused = await from(ip, await newToken());
    expectError(refused, 429, /^Too many requests from your IP address: the limit is 8 per 2 seconds\./);
    expect(refused.headers['x-ratelimit-limit']).toBe('8');
    expect(refused.headers['retry-after']).toBeDefined();
  });

  it('start again with the next window', async () => {
    const token = await newToken();
    const ip = uniqueIpv4();
    for (let i = 0; i < 5; i++) expectSuccess(await from(ip, token));
    expect((await from(ip, token)).status).toBe(429);
    await sleep(3100); // the window (2 s; Redis counts whole seconds) is over
    const res = await from(ip, token);
    expectSuccess(res);
    expect(res.headers['x-ratelimit-remaining']).toBe('4');
  });

  it('never apply to an address whitelisted for the API', async () => {
    const ip = uniqueIpv4();
    expectSuccess(await api.post('/api/core/ipwhitelist', { ip, event_api: 1, event_user: 0, event_operator: 0 }), 'Successfully created new whitelisted ip!');
    const token = await newToken();
    for (let i = 0; i < 12; i++) {
      const res = await from(ip, token);
      expectSuccess(res);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
    // Whitelisted for other events only: limited.
    const other = uniqueIpv4();
    expectSuccess(await api.post('/api/core/ipwhitelist', { ip: other, event_api: 0 }), 'Successfully created new whitelisted ip!');
    for (let i = 0; i < 5; i++) expectSuccess(await from(other, await newToken()));
    expect((await from(other, await newToken())).headers['x-ratelimit-limit']).toBe('8');
  });

  it('leave the paths outside /api alone', async () => {
    const ip = uniqueIpv4();
    for (let i = 0; i < 10; i++) {
      const res = await request(api.app).get('/healthz').set('X-Forwarded-For', ip);
      expect(res.status).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
  });
});
