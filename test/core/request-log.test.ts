/**
 * What the request log shows: never a verification token, never a query string, never the
 * Authorization header. The app's own logger is captured (its destination swapped for an array).
 */
import './infoLogEnv';
import pino from 'pino';
import express from 'express';
import request from 'supertest';
import { logger } from '../../src/logger';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loggableUrl, requestLogger } from '../../src/http/requestLog';
import { originForm } from '../../src/http/requestTarget';
import { httpServer, listen } from '../../src/http/nodeServer';
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

describe('an absolute-form request target (what a client sends through a proxy)', () => {
  /** Sends `GET <target>` as the request line, as curl's --request-target does. */
  async function sendTarget(target: string): Promise<{ status: number; body: any }> {
    const server = httpServer(api.app);
    await listen(server, 0, '127.0.0.1');
    try {
      const { port } = server.address() as AddressInfo;
      return await new Promise((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path: target.replace('PORT', String(port)), headers: { authorization: `Basic ${Buffer.from(`${api.token}:x`).toString('base64')}` } }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c) => { body += c; });
          res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(body) }));
        });
        req.on('error', reject);
        req.end();
      });
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  }

  it('is answered as its path, and logged as its path: no verification token, no user:password', async () => {
    const user = expectSuccess(await api.post('/api/user/user', { email: newEmail('abs'), firstname: 'Ab', lastname: unique('Solute') }), 'Successfully created new user!');
    const { token } = await issueVerificationToken(user.id);
    lines.length = 0;
    const verify = await sendTarget(`http://127.0.0.1:PORT/account/verify/${token}`);
    expect(verify.status).toBe(200);
    const brand = await sendTarget('http://USERINFOSECRET:pw@127.0.0.1:PORT/api/core/brand/1?x=1');
    expect({ status: brand.status, id: brand.body.data?.id }).toEqual({ status: 200, id: 1 });
    expect(requestLines().map((l) => l.req.url)).toEqual(['/account/verify/[redacted]', '/api/core/brand/1']);
    for (const secret of [token, 'USERINFOSECRET']) expect(logged()).not.toContain(secret);
  });

  it.each([
    ['http://host/a/b?c=1', '/a/b?c=1'],
    ['HTTPS://host:8443', '/'],
    ['http://host?q=1', '/?q=1'],
    ['/already/origin', '/already/origin'],
    ['*', '*'],
  ])('%s is %s', (target, path) => {
    expect(originForm(target)).toBe(path);
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
