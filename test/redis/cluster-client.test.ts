/**
 * The cluster client the app and its workers use (FailoverSafeCluster) ends when it is
 * disconnected, and stays ended: the two cases where ioredis's own waits for ever, and a BullMQ
 * worker's close or fetch loop with it (src/redis/failoverSafeCluster.ts).
 */
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { Cluster } from 'ioredis';
import { FailoverSafeCluster } from '../../src/redis/failoverSafeCluster';
import { freePort, freePortsSync } from '../helpers/ports';
import { PrivateCluster, ask, until } from '../helpers/privateRedis';

/**
 * A TCP proxy that passes bytes both ways but holds each client's end (its FIN) until `release()`:
 * the client's socket stays open, half-closed, meanwhile, as a connection whose close is slow.
 */
class EndHoldingProxy {
  private server?: Server;
  private readonly held: Array<() => void> = [];
  private readonly sockets = new Set<Socket>();

  constructor(readonly port: number, private readonly target: number) {}

  /** How many clients ended their side and wait for `release()`. */
  get ending(): number {
    return this.held.length;
  }

  /** How many clients are connected (their socket not closed). */
  get connected(): number {
    return this.clients.size;
  }

  private readonly clients = new Set<Socket>();

  start(): Promise<void> {
    this.server = createServer({ allowHalfOpen: true }, (client) => {
      this.clients.add(client);
      client.on('close', () => this.clients.delete(client));
      const upstream = connect(this.target, '127.0.0.1');
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('error', () => s.destroy());
        s.on('close', () => this.sockets.delete(s));
      }
      client.pipe(upstream, { end: false });
      upstream.pipe(client, { end: false });
      client.on('end', () => this.held.push(() => { upstream.end(); client.end(); }));
    });
    return new Promise((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
  }

  release(): void {
    for (const end of this.held.splice(0)) end();
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => this.server?.close(resolve) ?? resolve(undefined));
  }
}

const clients: Cluster[] = [];
afterAll(() => Promise.all(clients.map(async (c) => {
  if (c.status === 'end') return;
  const ended = once(c, 'end');
  c.disconnect();
  await ended;
})));

const cluster = new PrivateCluster(freePortsSync(3));
beforeAll(() => cluster.start());
afterAll(() => cluster.stop());

function client(...args: ConstructorParameters<typeof FailoverSafeCluster>): FailoverSafeCluster {
  const c = new FailoverSafeCluster(...args);
  c.on('error', () => undefined); // a node that cannot be reached is what these tests make
  clients.push(c);
  return c;
}

/**
 * A ready client, started from the node on `startup`, whose connection to `node` goes through
 * `proxy` (the address the cluster gives for it is mapped to the proxy's); and that connection.
 */
async function clientThroughProxy(proxy: EndHoldingProxy, node: { port: number }, startup: number) {
  const c = client([{ host: '127.0.0.1', port: startup }], {
    natMap: { [`127.0.0.1:${node.port}`]: { host: '127.0.0.1', port: proxy.port } },
    clusterRetryStrategy: () => 100,
    // A loaded machine may answer CLUSTER SLOTS after ioredis's 1 s: a connect() would then
    // reject ("None of startup nodes is available") though the client retries on its own.
    slotsRefreshTimeout: 10000,
  });
  // (Not events.once: an error the client recovers from on its own would reject it.)
  await new Promise((resolve) => c.once('ready', resolve));
  // Every node connection open, the proxied one among them.
  await Promise.all(c.nodes('all').map((n) => n.ping()));
  const proxied = c.nodes('all').find((n) => n.options.port === proxy.port)!;
  expect(proxied.status).toBe('ready');
  return { c, proxied };
}

/**
 * Disconnects `c` and waits for its end, then for every connection through `proxy` to end its
 * side, which the proxy holds (the client's subscriber may have one there too).
 */
async function disconnectHeld(c: Cluster, proxy: EndHoldingProxy): Promise<void> {
  const ended = once(c, 'end');
  c.disconnect();
  await ended;
  await until(async () => proxy.ending === proxy.connected, 'the proxied connections to end their side');
}

it('stays ended when a node connection ends after the client did', async () => {
  const [first, second] = cluster.nodes;
  const proxy = new EndHoldingProxy(await freePort(), first.port);
  await proxy.start();
  try {
    const { c, proxied: late } = await clientThroughProxy(proxy, first, second.port);

    await disconnectHeld(c, proxy);
    // The proxied connection has not ended yet: it ends now, after the client.
    expect(late.status).not.toBe('end');
    const lateEnd = once(late, 'end');
    proxy.release();
    await lateEnd;
    // ioredis's own client goes back to 'close' here, where nothing ends or reconnects it.
    expect(c.status).toBe('end');

    // And it connects again when asked.
    await c.connect();
    expect(await c.set('cluster-client-test', 'back')).toBe('OK');
  } finally {
    await proxy.stop();
  }
});

it('connects again while a node connection of its last connection still ends', async () => {
  // The startup node is reached through the proxy (as the cluster names it too): its connection's
  // end is held while the client ends and connects again.
  const [first] = cluster.nodes;
  const proxy = new EndHoldingProxy(await freePort(), first.port);
  await proxy.start();
  try {
    const { c, proxied: old } = await clientThroughProxy(proxy, first, proxy.port);

    await disconnectHeld(c, proxy);
    const connecting = c.connect().then(() => 'connected', (err: Error) => `failed: ${err.message}`);
    // The old connection to the startup node ends while the new one to the same address starts:
    // ioredis's pool knows connections by address, and the old one's end took the new one out of
    // the pool, which emptied it, and the client, disconnected by hand before, ended.
    const oldEnd = once(old, 'end');
    proxy.release();
    await oldEnd;
    expect(await connecting).toBe('connected');
    expect(await c.set('cluster-client-reconnect', 'ok')).toBe('OK');
    expect(c.nodes('all').map((n) => n.status)).not.toContain('end');

    // Disconnected again while such a connect() waits: it fails, and the client stays ended.
    await Promise.all(c.nodes('all').map((n) => n.ping()));
    await disconnectHeld(c, proxy);
    const abandoned = c.connect().then(() => 'connected', (err: Error) => `failed: ${err.message}`);
    c.disconnect();
    proxy.release();
    expect(await abandoned).toBe('failed: Connection is closed.');
    expect(c.status).toBe('end');
  } finally {
    await proxy.stop();
  }
});

it('ends when it is disconnected while no node can be reached', async () => {
  // Nothing listens there: the client reconnects again and again, its pool of node connections empty.
  // (A short disconnectTimeout: ioredis leaves that timer, 2 s by default, to a refused connection
  // it disconnects, and it would outlive the test.)
  const c = client([{ host: '127.0.0.1', port: await freePort() }], { clusterRetryStrategy: () => 50, redisOptions: { disconnectTimeout: 100 } });
  // (Not events.once: the client emits an error first.)
  await new Promise((resolve) => c.once('reconnecting', resolve));
  expect(c.nodes('all')).toHaveLength(0);
  c.disconnect();
  // ioredis's own stays 'disconnecting' for ever (it waits for a node connection to end).
  await until(async () => c.status === 'end', 'the client to end', 5000);
});

it('waits in connect() for its retries when no startup node answers the first attempt', async () => {
  // The startup node is a proxy that does not listen yet: the first attempt is refused.
  const proxy = new EndHoldingProxy(await freePort(), cluster.nodes[0].port);
  try {
    const c = client([{ host: '127.0.0.1', port: proxy.port }], { lazyConnect: true, clusterRetryStrategy: () => 100, redisOptions: { disconnectTimeout: 100 } });
    const retrying = new Promise((resolve) => c.once('reconnecting', resolve));
    const connecting = c.connect().then(() => 'connected', (err: Error) => `failed: ${err.message}`);
    await retrying;
    await proxy.start();
    // ioredis's own rejected here: 'None of startup nodes is available'.
    expect(await connecting).toBe('connected');
    expect(await c.set('cluster-client-retry', 'ok')).toBe('OK');
  } finally {
    await proxy.stop();
  }
});

it('settles connect() when the cluster is ok again after a failed ready check, or when it is disconnected', async () => {
  // A master stops and no replica takes over: the other nodes say cluster_state:fail, and a
  // client's ready check fails; the client tries again on its own.
  const stopped = cluster.nodes[2];
  await stopped.stop();
  const live = cluster.nodes.filter((n) => n !== stopped);
  await until(async () => {
    for (const n of live) if (!/cluster_state:fail/.test(String(await ask(n.port, 'CLUSTER', 'INFO')))) return false;
    return true;
  }, 'the cluster to fail');

  const startup = [{ host: '127.0.0.1', port: live[0].port }];
  const failedReadyCheck = (c: Cluster) => new Promise<void>((resolve) => {
    c.on('connect', () => c.once('reconnecting', () => resolve()));
  });
  // The outcome of connect(), or 'pending' (ioredis's own): an upper bound, not a wait.
  const connecting = (c: Cluster) => {
    let timer: NodeJS.Timeout | undefined;
    const pending = new Promise<string>((resolve) => { timer = setTimeout(() => resolve('pending'), 30000); });
    const outcome = c.connect().then(() => 'connected', (err: Error) => `failed: ${err.message}`);
    return Promise.race([outcome, pending]).finally(() => clearTimeout(timer));
  };

  // Disconnected meanwhile: connect() fails.
  const ended = client(startup, { lazyConnect: true, clusterRetryStrategy: () => 100 });
  const endedFailed = failedReadyCheck(ended);
  const endedConnect = connecting(ended);
  await endedFailed;
  ended.disconnect();
  expect(await endedConnect).toBe('failed: Connection is closed.');

  // The cluster ok again: connect() resolves (ioredis's own stays pending, its first attempt left behind).
  const waiting = client(startup, { lazyConnect: true, clusterRetryStrategy: () => 100 });
  const waitingFailed = failedReadyCheck(waiting);
  const waitingConnect = connecting(waiting);
  await waitingFailed;
  await stopped.start();
  expect(await waitingConnect).toBe('connected');
  expect(waiting.status).toBe('ready');
});
