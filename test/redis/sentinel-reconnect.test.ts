/**
 * A client of a Sentinel set that is reconnecting when the Sentinels announce a failover: the
 * announcement must not end it. The app's clients find the master through three Sentinels, each
 * behind a proxy of the test's that holds the client's question ("which is the master?") while the
 * test kills the client's connection, fails the set over and waits until the client's failover
 * detector has taken the announcement (it leaves its subscriptions); then the question is answered.
 * ioredis's own connector gave up that reconnection there and ended the client for good.
 */
import { PROXY_PORTS, SENTINEL_MASTER, SENTINEL_PORTS } from './sentinelProxiedEnv';
import type IORedis from 'ioredis';
import { config } from '../../src/config';
import { redisConnection } from '../../src/redis/connection';
import { HoldingProxy } from '../helpers/holdingProxy';
import { PrivateSentinelSet, ask, until } from '../helpers/privateRedis';

const set = new PrivateSentinelSet(SENTINEL_PORTS, SENTINEL_MASTER);
const proxies = PROXY_PORTS.map((port, i) => new HoldingProxy(port, SENTINEL_PORTS[i]));
const clients: IORedis[] = [];

beforeAll(async () => {
  await set.start();
  for (const p of proxies) await p.start();
});

afterAll(async () => {
  for (const c of clients) c.disconnect();
  for (const p of proxies) await p.stop();
  await set.stop();
});

/** A worker's client (it waits for Redis forever), ready. */
async function readyClient(): Promise<IORedis> {
  const client = redisConnection('worker') as IORedis;
  clients.push(client);
  await client.ping();
  return client;
}

/** Connections subscribed to the Sentinels (the failover detectors' subscriptions to +switch-master). */
async function subscriptions(): Promise<number> {
  let n = 0;
  for (const port of SENTINEL_PORTS) n += String(await ask(port, 'CLIENT', 'LIST')).split('\n').filter((l) => /\bsub=[1-9]/.test(l)).length;
  return n;
}

const serverPort = async (client: IORedis) => Number(/tcp_port:(\d+)/.exec(await client.info('server'))![1]);

/** Kills `client`'s connection to the master while the proxies hold what comes next; returns once a reconnection waits on them. */
async function killWhileHeld(client: IORedis): Promise<void> {
  const id = await client.client('ID');
  const master = await serverPort(client);
  for (const p of proxies) p.hold();
  await ask(master, 'CLIENT', 'KILL', 'ID', id);
  await until(async () => proxies.some((p) => p.held > 0), 'the reconnection to ask a Sentinel for the master');
}

const release = () => { for (const p of proxies) p.release(); };

describe('a Sentinel client reconnecting through a failover', () => {
  it('takes the failover announced mid-reconnection and reaches the new master', async () => {
    expect(config().redis).toMatchObject({ kind: 'sentinel', name: SENTINEL_MASTER });
    const client = await readyClient();
    const from = await serverPort(client);
    // Its failover detector is listening (before the proxies hold anything new).
    await until(async () => (await subscriptions()) >= PROXY_PORTS.length, 'the failover detector to subscribe');

    await killWhileHeld(client);
    await ask(SENTINEL_PORTS[0], 'SENTINEL', 'FAILOVER', SENTINEL_MASTER);
    const to = await until(async () => { const port = await set.masterPort(); return port !== from ? port : undefined; }, 'the Sentinels to fail over');
    // The detector took the announcement: it reconnects, leaving its subscriptions.
    await until(async () => (await subscriptions()) === 0, 'the failover detector to take the announcement');
    release();

    // The client is not ended: it writes, on the new master.
    await client.set('sentinel-reconnect', '1');
    expect(client.status).toBe('ready');
    expect(await serverPort(client)).toBe(to);
  });

  it('still ends when the client itself disconnects mid-reconnection', async () => {
    const client = await readyClient();
    await killWhileHeld(client);
    client.disconnect();
    release();
    // Ended, or (wrongly) connected again: whichever comes first.
    const settled = await until(async () => (['end', 'ready'].includes(client.status) ? client.status : undefined), 'the client to end or connect');
    expect(settled).toBe('end');
    await expect(client.ping()).rejects.toThrow('Connection is closed');
  });
});
