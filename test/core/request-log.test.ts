/**
 * What the request log shows: never a verification token, never a query string, never the
 * Authorization header. The app's own logger is captured (its destination swapped for an array).
 */
import './infoLogEnv';
import pino from 'pino';
import express from 'express';
import request from 'supertest';
import { logger } from '../../src/logger';
import { loggableUrl, requestLogger } from '../../src/http/requestLog';
import { issueVerificationToken } from '../../src/user/verification';
import { useApi, unique, newEmail } from '../helpers/app';
import { expectSuccess } from '../helpers/envelope';
import { uniqueIpv4 } from './support';

const lines: string[] = [];
const sink = logger as unknown as Record<symbol, unknown>;
const original = sink[pino.symbols.streamSym];
sink[pino.symbols.streamSym] = { write: (line: string) => lines.push(line) };
afterAll(() => {
  sink[pino.symbols.streamSym] = original;
});

const api = useApi();
const logged = () => lines.join('');
const requestLines = () => lines.map((l) => JSON.parse(l)).filter((l) => l.req);

describe('the request log', () => {
  it('shows /account/verify/[redacted], never the token, for valid and bogus links on GET and POST', async () => {
    const user = expectSuccess(await api.post('/api/user/user', { email: newEmail('log'), firstname: 'Lo', lastname: unique('Gged') }), 'Successfully created new user!');
    const { token } = await issueVerificationToken(user.id);
    const bogus = `bogus${'Q'.repeat(40)}`;
    lines.length = 0;
    const ip = uniqueIpv4();
    expect((await request(api.app).get(`/account/verify/${token}`).set('X-Forwarded-For', ip)).status).toBe(200);
    expect((await request(api.app).get(`/ACCOUNT/Verify/${bogus}?again=${token}`).set('X-Forwarded-For', ip)).status).toBe(404);
    expect((await request(api.app).get(`/account/%76erify/${bogus}/`).set('X-Forwarded-For', ip)).status).toBe(404);
    expect((await request(api.app).post(`/account/verify/${token}`).set('X-Forwarded-For', ip).type('form').send({ password: 'password-of-log' })).status).toBe(200);

    const reqs = requestLines();
    expect(reqs.map((l) => `${l.req.method} ${l.req.url} ${l.res.statusCode}`)).toEqual([
      'GET /account/verify/[redacted] 200',
      'GET /ACCOUNT/Verify/[redacted] 404',
      'GET /account/verify/[redacted] 404',
      'POST /account/verify/[redacted] 200',
    ]);
    for (const secret of [token, bogus, 'password-of-log']) expect(logged()).not.toContain(secret);
  });

  it('leaves out query strings and the Authorization header', async () => {
    lines.length = 0;
    const secret = unique('querysecret');
    expect((await api.get('/api/core/brand', { api_key: secret })).status).toBe(200);
    expect(requestLines().map((l) => l.req.url)).toEqual(['/api/core/brand']);
    expect(logged()).not.toContain(secret);
    expect(logged()).not.toContain(api.token);
  });
});

describe('loggableUrl', () => {
  it.each([
    ['/account/verify/abc_DEF-123', '/account/verify/[redacted]'],
    ['/account/verify/abc/extra?x=1', '/account/verify/[redacted]'],
    ['/account//verify/abc', '/account//verify/[redacted]'],
    ['/Account/VERIFY/abc', '/Account/VERIFY/[redacted]'],
    ['/account/verif%79/abc', '/account/verify/[redacted]'],
    ['/account/verify/%E0%A4%A', '/account/verify/[redacted]'],
    ['/api/core/brand?token=abc#frag', '/api/core/brand'],
    ['/account/other', '/account/other'],
  ])('shows %s as %s', (url, shown) => {
    expect(loggableUrl(url)).toBe(shown);
  });
});

describe('requestLogger', () => {
  it('logs each request once at its end: id, method, URL, status, time; a 5xx as "request errored"', async () => {
    const app = express();
    app.use(requestLogger());
    app.get('/fine', (_req, res) => { res.json({ ok: true }); });
    app.get('/broken', (_req, res) => { res.status(503).json({ ok: false }); });
    lines.length = 0;
    const fine = await request(app).get('/fine?secret=1').set('X-Request-Id', 'trace-1');
    const broken = await request(app).get('/broken');
    expect(fine.headers['x-request-id']).toBe('trace-1');
    expect(broken.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const reqs = requestLines();
    expect(reqs).toHaveLength(2);
    expect(reqs[0]).toMatchObject({ level: 30, msg: 'request completed', reqId: 'trace-1', req: { method: 'GET', url: '/fine' }, res: { statusCode: 200 } });
    expect(reqs[1]).toMatchObject({ level: 30, msg: 'request errored', reqId: broken.headers['x-request-id'], req: { method: 'GET', url: '/broken' }, res: { statusCode: 503 } });
    for (const l of reqs) expect(typeof l.responseTime).toBe('number');
  });
});
