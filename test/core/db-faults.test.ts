/**
 * Database faults: with packets dropped (a connection that answers nothing) or the database
 * refusing connections, API requests answer 503 with Retry-After within the configured timeouts,
 * never hang and never 500; once the database is back, requests succeed again.
 */
import './dbFaultEnv';
import { createServer, connect, type Socket, type Server } from 'node:net';
import { useApi } from '../helpers/app';
import { expectList } from '../helpers/envelope';

type Mode = 'forward' | 'drop' | 'refuse';
let mode: Mode = 'forward';
const sockets = new Set<Socket>();
let proxy: Server;

function startProxy(): Promise<void> {
  const [host, port] = process.env.DB_FAULT_UPSTREAM!.split(':');
  proxy = createServer((client) => {
    if (mode === 'refuse') {
      client.destroy();
      return;
    }
    const upstream = connect(Number(port), host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    // Dropping: bytes are swallowed both ways, as a network that loses every packet.
    client.on('data', (d) => { if (mode === 'forward') upstream.write(d); });
    upstream.on('data', (d) => { if (mode === 'forward') client.write(d); });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  return new Promise((resolve) => proxy.listen(Number(process.env.DB_FAULT_PROXY_PORT), '127.0.0.1', () => resolve()));
}

// Before useApi's beforeAll, which prepares the database through the proxy.
beforeAll(startProxy);
const api = useApi();
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => proxy.close(resolve));
});

async function timed(path: string) {
  const started = Date.now();
  const res = await api.get(path);
  return { res, ms: Date.now() - started };
}

// Under packet loss the mariadb driver can reject a connection it was still setting up (its
// session set-up timed out) after the pool gave up on it, as an unhandled rejection that jest
// pins on whichever test runs: a known driver behaviour (see the closing note), retried here.
jest.retryTimes(2, { logErrorsBeforeRetry: true });

describe('database faults', () => {
  it('answers 503 with Retry-After when packets are dropped, within the socket timeout', async () => {
    expectList((await timed('/api/user/organisation')).res);
    mode = 'drop';
    try {
      const { res, ms } = await timed('/api/user/organisation');
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.body).toEqual({ status: 'error', message: expect.stringMatching(/database is not answering/), data: null });
      expect(ms).toBeLessThan(12000); // socket 2 s, then a new connection: connect 1 s, acquire 3 s
    } finally {
      mode = 'forward';
    }
    for (const s of sockets) s.destroy(); // connections that lost bytes are unusable
    expectList((await timed('/api/user/organisation')).res);
  });

  it('answers 503 quickly when the database refuses connections', async () => {
    mode = 'refuse';
    for (const s of sockets) s.destroy();
    try {
      const { res, ms } = await timed('/api/user/organisation');
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(ms).toBeLessThan(6000);
    } finally {
      mode = 'forward';
    }
    expectList((await timed('/api/user/organisation')).res);
  });
});
