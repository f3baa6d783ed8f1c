/**
 * Database faults: with packets dropped (a connection that answers nothing) or the database
 * refusing connections, API requests answer 503 with Retry-After within the configured timeouts,
 * never hang and never 500; once the database is back, requests succeed again.
 */
import './dbFaultEnv';
import { createServer, connect, type Socket, type Server } from 'node:net';
import { QueryTypes } from 'sequelize';
import { migrationSequelize, sequelize } from '../../src/db/sequelize';
import { useApi } from '../helpers/app';
import { expectList } from '../helpers/envelope';

// cut-setup: the connection is closed as the client sends its statement limit (a connection lost
// while it is being set up).
type Mode = 'forward' | 'drop' | 'refuse' | 'cut-setup';
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
    const passing = () => mode === 'forward' || mode === 'cut-setup';
    client.on('data', (d) => {
      if (mode === 'cut-setup' && d.includes('max_statement_time')) client.destroy();
      else if (passing()) upstream.write(d);
    });
    upstream.on('data', (d) => { if (passing()) client.write(d); });
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

  it('sets the statement limit and the time zone on every connection, and no limit for migrations', async () => {
    const session = 'SELECT @@session.max_statement_time AS limitS, @@session.time_zone AS zone';
    const rows = await Promise.all([1, 2, 3].map(() => sequelize().transaction((t) => sequelize().query(session, { type: QueryTypes.SELECT, transaction: t }))));
    for (const [row] of rows) expect(row).toEqual({ limitS: 30, zone: '+00:00' }); // DATABASE_QUERY_TIMEOUT_MS 30000
    const migrations = migrationSequelize();
    try {
      const [row] = await migrations.query(session, { type: QueryTypes.SELECT });
      expect(row).toEqual({ limitS: 0, zone: '+00:00' });
    } finally {
      await migrations.close();
    }
  });

  // The driver's own queryTimeout option sent this SET without waiting for it: the connection
  // counted as made, and the SET's failure was a rejection nobody held (jest pins one on the
  // running test; a process without a guard ends on it). Connecting now fails, and says so.
  it('fails the connect, with no stray rejection, when the connection is lost while being set up', async () => {
    const stray: unknown[] = [];
    const record = (reason: unknown) => { stray.push(reason); };
    process.on('unhandledRejection', record);
    mode = 'cut-setup';
    for (const s of sockets) s.destroy();
    try {
      const { res } = await timed('/api/user/organisation');
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
    } finally {
      mode = 'forward';
    }
    // A rejection is reported after the microtasks of its turn: let a stray one surface first.
    await new Promise((resolve) => setImmediate(resolve));
    process.removeListener('unhandledRejection', record);
    expect(stray).toEqual([]);
    expectList((await timed('/api/user/organisation')).res);
  });
});
