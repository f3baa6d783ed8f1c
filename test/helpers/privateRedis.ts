import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import IORedis from 'ioredis';
import { freePort, freePortsSync } from './ports';
import { closeTransports } from '../../src/mail/transports';
import { closeQueues } from '../../src/queue/producer';
import { startSmtp, type TestSmtp } from './smtp';

/**
 * A redis-server of the test's own on `port`, so a test can take Redis away and bring it back
 * (keeping nothing on disk, like this machine's). Import `usePrivateRedisEnv` first in a test
 * file: the app reads REDIS_URL on first use.
 */
export class PrivateRedis {
  private child?: ChildProcess;

  /** `args`: more redis-server options (`--replicaof`, `--cluster-enabled`; `--dir` for files it writes). */
  constructor(readonly port: number, private readonly args: string[] = []) {}

  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }

  get pid() {
    return this.child?.pid;
  }

  async start(): Promise<void> {
    // A configuration file (a Sentinel's) must come first.
    const [conf, rest] = this.args[0]?.endsWith('.conf') ? [[this.args[0]], this.args.slice(1)] : [[], this.args];
    this.child = spawn('redis-server', [...conf, '--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...rest], { stdio: 'ignore' });
    const client = new IORedis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    const started = Date.now();
    for (;;) {
      // The port was free when it was picked, not reserved: if another process took it meanwhile,
      // this server exits at once and the other one answers. Say so, rather than let a test wait
      // on a server that is not its own.
      if (this.child.exitCode !== null) throw new Error(`redis-server exited at start: port ${this.port} was taken meanwhile`);
      try {
        await client.connect();
        const info = String(await client.call('INFO', 'server'));
        client.disconnect();
        if (/process_id:(\d+)/.exec(info)?.[1] === String(this.child.pid)) return;
      } catch {
        client.disconnect();
      }
      if (Date.now() - started > 10000) throw new Error(`redis-server did not start on port ${this.port}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
    this.child = undefined;
  }
}

/** Polls `check` every 100 ms until it is truthy; gives up after `maxMs` (an upper bound, not a wait). */
export async function until<T>(check: () => Promise<T>, what: string, maxMs = 30000): Promise<NonNullable<T>> {
  const started = Date.now();
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value) return value as NonNullable<T>;
    if (Date.now() - started > maxMs) throw new Error(`Gave up after ${maxMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** One command to the server on `port` (a connection of its own). */
export async function ask(port: number, ...command: [string, ...Array<string | number>]): Promise<unknown> {
  const client = new IORedis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  try {
    await client.connect();
    return await client.call(...command);
  } finally {
    client.disconnect();
  }
}

const pairs = (flat: string[]) => Object.fromEntries(flat.flatMap((v, i) => (i % 2 ? [] : [[v, flat[i + 1]]])));

/**
 * A real Sentinel set on free ports: a master, one replica and three Sentinels (redis-server
 * `--sentinel`, quorum 2) watching it as `name`, which fail over one second after the master stops
 * answering. Files in a temp dir of its own.
 */
export class PrivateSentinelSet {
  readonly dir = mkdtempSync(join(tmpdir(), 'helpdesk-sentinel-'));
  servers: PrivateRedis[] = [];
  sentinels: PrivateRedis[] = [];

  /** `sentinelPorts`: three free ports (the app must know them before it reads its configuration). */
  constructor(private readonly sentinelPorts: number[], readonly name: string) {}

  /** REDIS_SENTINELS for the app. */
  get sentinelList() {
    return this.sentinelPorts.map((p) => `127.0.0.1:${p}`).join(',');
  }

  get pids() {
    return [...this.servers, ...this.sentinels].map((s) => s.pid);
  }

  async start(): Promise<void> {
    const [masterPort, replicaPort] = [await freePort(), await freePort()];
    // A full sync writes an RDB file: in the set's own dir.
    const files = (name: string) => ['--dir', this.dir, '--dbfilename', `${name}.rdb`];
    const master = new PrivateRedis(masterPort, files('master'));
    const replica = new PrivateRedis(replicaPort, ['--replicaof', '127.0.0.1', String(masterPort), ...files('replica')]);
    this.servers = [master, replica];
    await Promise.all(this.servers.map((s) => s.start()));
    await until(async () => /master_link_status:up/.test(String(await ask(replicaPort, 'INFO', 'replication'))), 'the replica to sync');
    for (const [i, port] of this.sentinelPorts.entries()) {
      const conf = join(this.dir, `sentinel-${i}.conf`);
      // The Sentinel rewrites its file (what it learns); it must be its own and writable.
      writeFileSync(conf, [
        `sentinel monitor ${this.name} 127.0.0.1 ${masterPort} 2`,
        `sentinel down-after-milliseconds ${this.name} 1000`,
        `sentinel failover-timeout ${this.name} 10000`,
        `sentinel parallel-syncs ${this.name} 1`,
      ].join('\n') + '\n');
      this.sentinels.push(new PrivateRedis(port, [conf, '--sentinel', '--dir', this.dir]));
    }
    await Promise.all(this.sentinels.map((s) => s.start()));
    // Every Sentinel knows the replica and the two others (hello messages every 2 s).
    for (const s of this.sentinels) {
      await until(async () => {
        const m = pairs((await ask(s.port, 'SENTINEL', 'MASTER', this.name)) as string[]);
        return m['num-slaves'] === '1' && m['num-other-sentinels'] === '2';
      }, `Sentinel ${s.port} to know the set`);
    }
  }

  /** The port of the master the Sentinels name now. */
  async masterPort(): Promise<number> {
    const [, port] = (await ask(this.sentinels[0].port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', this.name)) as string[];
    return Number(port);
  }

  /** Kills the master (SIGKILL) and returns once the Sentinels have promoted the replica. */
  async killMasterAndFailOver(): Promise<{ from: number; to: number }> {
    const from = await this.masterPort();
    const master = this.servers.find((s) => s.port === from)!;
    await master.stop();
    const to = await until(async () => {
      const port = await this.masterPort();
      if (port === from) return undefined;
      // The promoted replica accepts writes.
      return /role:master/.test(String(await ask(port, 'INFO', 'replication'))) ? port : undefined;
    }, 'the Sentinels to fail over', 60000);
    return { from, to };
  }

  async stop(): Promise<void> {
    for (const s of [...this.sentinels, ...this.servers]) await s.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * A Redis Cluster on free ports, made by `redis-cli --cluster create`: three masters, each with
 * `replicas` replicas (the ports: masters × (1 + replicas)), which fail over two seconds after
 * their master stops answering (`cluster-node-timeout`).
 */
export class PrivateCluster {
  readonly dir = mkdtempSync(join(tmpdir(), 'helpdesk-cluster-'));
  nodes: PrivateRedis[] = [];

  /** `ports`: free ports (the app must know some before it reads its configuration). */
  constructor(private readonly ports: number[], private readonly replicas = 0) {}

  /** REDIS_CLUSTER_NODES for the app. */
  get nodeList() {
    return this.ports.map((p) => `127.0.0.1:${p}`).join(',');
  }

  /** The nodes still running. */
  get alive() {
    return this.nodes.filter((n) => n.pid !== undefined);
  }

  async start(): Promise<void> {
    // Each node's cluster bus on a free port of its own: by default it is the node's port + 10,000,
    // which may be another process's, or past 65,535 (redis-server then refuses to start).
    const buses = freePortsSync(this.ports.length * 2).filter((p) => !this.ports.includes(p)).slice(0, this.ports.length);
    for (const [i, port] of this.ports.entries()) {
      const dir = join(this.dir, String(i));
      mkdirSync(dir);
      this.nodes.push(new PrivateRedis(port, ['--cluster-enabled', 'yes', '--cluster-port', String(buses[i]), '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000', '--dir', dir]));
    }
    await Promise.all(this.nodes.map((n) => n.start()));
    // Bounded: a node that cannot reach another's bus would keep it waiting for the join forever.
    await promisify(execFile)('redis-cli', ['--cluster', 'create', ...this.nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', String(this.replicas), '--cluster-yes'], { timeout: 60000 });
    for (const n of this.nodes) {
      await until(async () => {
        if (!/cluster_state:ok/.test(String(await ask(n.port, 'CLUSTER', 'INFO')))) return false;
        // A replica has synced with its master (a failover promotes only a replica with its data).
        const replication = String(await ask(n.port, 'INFO', 'replication'));
        return /role:master/.test(replication) || /master_link_status:up/.test(replication);
      }, `node ${n.port} to join the cluster`);
    }
  }

  /** The master that holds `key`'s slot, as a running node sees it. */
  async nodeOf(key: string): Promise<number> {
    const asked = this.alive[0].port;
    const slot = Number(await ask(asked, 'CLUSTER', 'KEYSLOT', key));
    const shards = (await ask(asked, 'CLUSTER', 'SLOTS')) as Array<[number, number, [string, number]]>;
    return shards.find(([from, to]) => slot >= from && slot <= to)![2][1];
  }

  /**
   * Kills the master of `key`'s slot (SIGKILL) and returns once its replica has taken over: every
   * running node says the cluster is ok and names another master for the slot.
   */
  async killMasterOfAndFailOver(key: string): Promise<{ from: number; to: number }> {
    const from = await this.nodeOf(key);
    await this.nodes.find((n) => n.port === from)!.stop();
    const to = await until(async () => {
      for (const n of this.alive) if (!/cluster_state:ok/.test(String(await ask(n.port, 'CLUSTER', 'INFO')))) return undefined;
      const port = await this.nodeOf(key);
      return port !== from && /role:master/.test(String(await ask(port, 'INFO', 'replication'))) ? port : undefined;
    }, 'the cluster to fail over', 60000);
    return { from, to };
  }

  async stop(): Promise<void> {
    for (const n of this.nodes) await n.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export interface RedisAndSmtp {
  redis: PrivateRedis;
  /** Started in a beforeAll hook: use it in later hooks and in tests. */
  smtp: TestSmtp;
  /** How many mails the SMTP server received for `email`. */
  sentTo(email: string): number;
}

/**
 * A test file's own Redis on `port` and an SMTP server, both started before its tests (in the
 * order of the hooks: call this after `useApi()`); after them the mail transports and the queues
 * close before Redis stops.
 */
export function usePrivateRedisAndSmtp(port: number): RedisAndSmtp {
  const env: RedisAndSmtp = {
    redis: new PrivateRedis(port),
    smtp: undefined as unknown as TestSmtp,
    sentTo: (email) => env.smtp.mailsTo(email).length,
  };
  beforeAll(async () => {
    await env.redis.start();
    env.smtp = await startSmtp();
  });
  afterAll(async () => {
    closeTransports();
    await closeQueues();
    await env.redis.stop();
    await env.smtp.close();
  });
  return env;
}
