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

/**
 * Requests that must fall in one window (2 seconds from the first request's count) and their
 * answers, checked after: `prepare` makes what they need (new tokens, a new address: new counts),
 * then `send` sends them. On a busy machine, requests one after another can outlast the window,
 * which then starts again mid-way; so when `send` took the window's length or more, the whole is
 * made and sent again. Within less, every count fell in the window its first one started.
 */
async function inOneWindow<C, R>(prepare: () => Promise<C>, send: (context: C) => Promise<R>): Promise<{ context: C; answers: R }> {
  const windowMs = config().rateLimit.windowSeconds * 1000;
  let slowest = 0;
  for (let attempt = 0; attempt < 5; attempt++) {
    const context = await prepare();
    const started = Date.now();
    const answers = await send(context);
    const took = Date.now() - started;
    if (took < windowMs) return { context, answers };
    slowest = Math.max(slowest, took);
  }
  throw new Error(`five attempts each outlasted the rate limits' window (${windowMs} ms; the slowest ${slowest} ms)`);
}

describe('rate limits (RATE_LIMIT_PER_TOKEN=5, RATE_LIMIT_PER_IP=8, RATE_LIMIT_WINDOW_SECONDS=2)', () => {
  it('count per token, with the headers, and answer 429 in the envelope with Retry-After beyond the limit', async () => {
    const { answers } = await inOneWindow(
      async () => ({ ip: uniqueIpv4(), token: await newToken(), another: await newToken() }),
      async ({ ip, token, another }) => {
        const counted = [];
        for (let i = 1; i <= 5; i++) counted.push({ res: await from(ip, token), at: nowSec() });
        // Another token from the same address is not limited by the first one's count.
        return { counted, refused: await from(ip, token), another: await from(ip, another) };
      },
    );
    answers.counted.forEach(({ res, at }, i) => {
      expectSuccess(res);
      // The token's limit is the closer one: it is the one shown.
      expect(res.headers['x-ratelimit-limit']).toBe('5');
      expect(res.headers['x-ratelimit-remaining']).toBe(String(4 - i));
      const reset = Number(res.headers['x-ratelimit-reset']);
      expect(reset).toBeGreaterThan(at);
      expect(reset).toBeLessThanOrEqual(at + 3);
    });
    const { refused } = answers;
    expectError(refused, 429, /^Too many requests for this API token: the limit is 5 per 2 seconds\. Try again in [12] seconds\.$/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expectSuccess(answers.another);
  });

  it('count per address, failed authentications too, across tokens', async () => {
    const { answers } = await inOneWindow(
      async () => ({ ip: uniqueIpv4(), tokens: await Promise.all(Array.from({ length: 6 }, newToken)) }),
      async ({ ip, tokens }) => {
        const answers = [];
        for (let i = 0; i < 3; i++) answers.push(await request(api.app).get('/api/core/brand/1').set('X-Forwarded-For', ip));
        for (const token of tokens) answers.push(await from(ip, token));
        return answers;
      },
    );
    answers.slice(0, 3).forEach((res) => expect(res.status).toBe(401));
    answers.slice(3, 8).forEach((res) => expectSuccess(res));
    const refused = answers[8];
    expectError(refused, 429, /^Too many requests from your IP address: the limit is 8 per 2 seconds\./);
    expect(refused.headers['x-ratelimit-limit']).toBe('8');
    expect(refused.headers['retry-after']).toBeDefined();
  });

  it('start again with the next window', async () => {
    const { context: { ip, token }, answers } = await inOneWindow(
      async () => ({ ip: uniqueIpv4(), token: await newToken() }),
      async ({ ip, token }) => {
        const answers = [];
        for (let i = 0; i < 6; i++) answers.push(await from(ip, token));
        return answers;
      },
    );
    answers.slice(0, 5).forEach((res) => expectSuccess(res));
    expect(answers[5].status).toBe(429);
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
    const { answers } = await inOneWindow(async () => {
      const other = uniqueIpv4();
      expectSuccess(await api.post('/api/core/ipwhitelist', { ip: other, event_api: 0 }), 'Successfully created new whitelisted ip!');
      return { other, tokens: await Promise.all(Array.from({ length: 6 }, newToken)) };
    }, async ({ other, tokens }) => {
      const answers = [];
      for (const token of tokens) answers.push(await from(other, token));
      return answers;
    });
    answers.slice(0, 5).forEach((res) => expectSuccess(res));
    expect(answers[5].headers['x-ratelimit-limit']).toBe('8');
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
