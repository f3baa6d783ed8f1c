/**
 * Large bodies: a Content-Length over the limit is refused (413 in the envelope) before the body
 * is read; while LARGE_BODY_CONCURRENCY large bodies are in flight, one more gets 503 with
 * Retry-After at once; small requests are not held up.
 */
import './largeBodiesEnv';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { largeBodiesInFlight } from '../../src/http/largeBodies';
import { useApi } from '../helpers/app';
import { waitFor } from '../helpers/smtp';

const api = useApi();
let server: Server;
let port: number;

beforeAll(async () => {
  server = api.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Starts a POST with these headers; the caller writes (or not) the body. */
function start(headers: Record<string, string | number>) {
  const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/api/user/organisation', headers: {
    Authorization: `Basic ${Buffer.from(`${api.token}:x`).toString('base64')}`, 'Content-Type': 'application/json', ...headers,
  } });
  const response = new Promise<{ res: IncomingMessage; body: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve({ res, body }));
    });
    req.on('error', reject);
  });
  return { req, response };
}

describe('large bodies', () => {
  it('refuses a Content-Length over the limit before reading the body, and closes the connection', async () => {
    const { req, response } = start({ 'Content-Length': 500 * 1024 * 1024 });
    req.write('{"name":"'); // a few bytes of 500 MB, then nothing: the answer must not wait for the rest
    const { res, body } = await response;
    expect(res.statusCode).toBe(413);
    expect(res.headers.connection).toBe('close');
    expect(JSON.parse(body)).toEqual({ status: 'error', message: `The request body is larger than the limit of ${25 * 1024 * 1024} bytes.`, data: null });
    req.destroy();
  });

  it('answers 503 with Retry-After while the bound of large bodies is taken, and frees it after', async () => {
    const big = JSON.stringify({ name: 'Big', notes: 'x'.repeat(8000) });
    const first = start({ 'Content-Length': Buffer.byteLength(big) });
    first.req.write(big.slice(0, 100)); // in flight, its body still arriving
    await waitFor(() => largeBodiesInFlight() === 1, 10000, 'the first large body to be in flight');

    const second = start({ 'Content-Length': Buffer.byteLength(big) });
    second.req.end(big);
    const refused = await second.response;
    expect(refused.res.statusCode).toBe(503);
    expect(refused.res.headers['retry-after']).toBe('2');
    expect(JSON.parse(refused.body)).toMatchObject({ status: 'error', data: null, message: expect.stringMatching(/try again/) });

    // A small request is not held up by the large one.
    const small = start({});
    small.req.end(JSON.stringify({ name: 'Small' }));
    expect((await small.response).res.statusCode).toBe(200);

    first.req.end(big.slice(100));
    expect((await first.response).res.statusCode).toBe(200);
    await waitFor(() => largeBodiesInFlight() === 0, 10000, 'the slot to be freed');
    const third = start({ 'Content-Length': Buffer.byteLength(big) });
    third.req.end(big);
    expect((await third.response).res.statusCode).toBe(200);
  });
});
