/**
 * Two nodes on one machine: two compiled web processes, two mail workers and two schedulers on the same MariaDB
 * and Redis, behind a private HAProxy (Debian's) on a free port. The same answer through either
 * node; a rate limit and a failed-login ban reached through one apply on the other; a mail caused
 * through the balancer is sent once although two workers wait for it; the schedulers' housekeeping
 * runs once per tick although both schedulers keep it.
 */
import { Queue } from 'bullmq';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { config } from '../../src/config';
import { IpBan } from '../../src/db/models';
import { banExpiryJob } from '../../src/core/banExpiry';
import { schedulerIdOf } from '../../src/queue/jobs';
import { QUEUES } from '../../src/queue/names';
import { redisConnection } from '../../src/redis/connection';
import { newEmail, useApi, unique } from '../helpers/app';
import { encodeForm } from '../helpers/form';
import { freePort, listeningPort } from '../helpers/ports';
import { waitWhileProgressing } from '../helpers/progress';
import { startSmtp, type TestSmtp } from '../helpers/smtp';
import { uniqueIpv4 } from '../core/support';
import { verificationEntry } from '../helpers/jobs';
import { projectRoot } from '../../src/lib/projectRoot';
import { privateBuild } from '../helpers/privateBuild';

const api = useApi();
const root = projectRoot();
const { dir, dist, build, remove } = privateBuild('two-nodes');
const children: ChildProcess[] = [];
let smtp: TestSmtp;
let nodes: string[] = [];
let balancer = '';

const EVERY_MS = 400;
const nodeEnv = {
  BAN_EXPIRY_EVERY_MS: String(EVERY_MS), LOG_LEVEL: 'warn', LOGIN_FAILURES_MAX: '3', RATE_LIMIT_PER_IP: '4', RATE_LIMIT_WINDOW_SECONDS: '600',
};

/** A compiled entry point on this test's database and queues; `output()` is what it wrote to stdout. */
function start(entry: string, env: Record<string, string> = {}): ChildProcess & { output: () => string } {
  const child = spawn(process.execPath, [join(dist, entry)], {
    env: {
      ...process.env, NODE_PATH: join(root, 'node_modules'), HOST: '127.0.0.1', ...nodeEnv,
      DATABASE_URL: config().database.url, REDIS_URL: config().redisUrl, QUEUE_PREFIX: config().queuePrefix, ...env,
    },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let output = '';
  child.stdout!.on('data', (c) => { output += c; });
  children.push(child);
  return Object.assign(child, { output: () => output });
}

beforeAll(async () => {
  build();
  smtp = await startSmtp();
  for (let i = 0; i < 2; i++) {
    // On a port the system gives it (PORT=0), read from its log line (listeningPort).
    const web = start('src/server.js', { PORT: '0', LOG_LEVEL: 'info', LOG_FORMAT: 'json' });
    start('workers/mail.js');
    start('workers/scheduler.js');
    const port = await waitWhileProgressing(() => listeningPort(web.output()), () => [web.pid], `web process ${i + 1} to listen`);
    const url = `http://127.0.0.1:${port}`;
    await waitWhileProgressing(() => fetch(`${url}/readyz`).then((r) => r.ok, () => false), () => [web.pid], `web process ${i + 1}`);
    nodes.push(url);
  }
  const port = await freePort();
  const cfg = join(dir, 'haproxy.cfg');
  writeFileSync(cfg, [
    'global', '  maxconn 256',
    'defaults', '  mode http', '  timeout connect 5s', '  timeout client 30s', '  timeout server 30s',
    'frontend desk', `  bind 127.0.0.1:${port}`, '  default_backend nodes',
    'backend nodes', '  balance roundrobin',
    ...nodes.map((u, i) => `  server node${i + 1} ${u.replace('http://', '')}`),
  ].join('\n') + '\n');
  const haproxy = spawn('haproxy', ['-db', '-f', cfg], { stdio: 'ignore' });
  children.push(haproxy);
  balancer = `http://127.0.0.1:${port}`;
  await waitWhileProgressing(() => fetch(`${balancer}/healthz`).then((r) => r.ok, () => false), () => [haproxy.pid], 'haproxy');
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await smtp?.close();
  remove();
});

const auth = (token = api.token) => `Basic ${Buffer.from(`${token}:x`).toString('base64')}`;
const get = (url: string, path: string, ip: string, token?: string) => fetch(`${url}${path}`, { headers: { Authorization: auth(token), 'X-Forwarded-For': ip } });

describe('two nodes behind HAProxy', () => {
  it('answer the same through either node and through the balancer', async () => {
    const bodies = await Promise.all([...nodes, balancer, balancer].map(async (u) => (await get(u, '/api/core/brand/1', uniqueIpv4())).json()));
    expect((bodies[0] as any).status).toBe('success');
    for (const b of bodies) expect(b).toEqual(bodies[0]);
  });

  it('share a rate limit: requests through node 1 count on node 2', async () => {
    const ip = uniqueIpv4();
    for (let i = 0; i < 4; i++) expect((await get(nodes[0], '/api/core/brand/1', ip)).status).toBe(200);
    expect((await get(nodes[1], '/api/core/brand/1', ip)).status).toBe(429);
  });

  it('share failed logins: the ban they earn through the balancer is made once and applies on both nodes', async () => {
    const ip = uniqueIpv4();
    for (let i = 0; i < 3; i++) expect((await get(balancer, '/api/core/brand/1', ip, 'wrong-token-wrong-token')).status).toBe(401);
    expect(await IpBan.count({ where: { ip } })).toBe(1);
    for (const u of nodes) expect((await get(u, '/api/core/brand/1', ip)).status).toBe(403);
  });

  it('send a mail once, though two mail workers wait for it', async () => {
    const brand = await api.post('/api/core/brand', { name: unique('Brand '), default_email: 'desk@brand.test', smtp_host: '127.0.0.1', smtp_port: smtp.port });
    const emails = [newEmail('n1'), newEmail('n2'), newEmail('n3'), newEmail('n4')];
    const users: number[] = [];
    for (const email of emails) {
      const res = await fetch(`${balancer}/api/user/user`, {
        method: 'POST', headers: { Authorization: auth(), 'X-Forwarded-For': uniqueIpv4(), 'Content-Type': 'application/x-www-form-urlencoded' },
        body: encodeForm({ email, brand_id: brand.body.data.id, send_email: 1 }),
      });
      expect(res.status).toBe(200);
      users.push(((await res.json()) as any).data.id);
    }
    await waitWhileProgressing(() => emails.every((e) => smtp.mailsTo(e).length > 0), () => children.map((c) => c.pid), 'the mails');
    // Once each, after every job is done (its outbox entry processed).
    await waitWhileProgressing(async () => {
      for (const id of users) if (!(await verificationEntry(id))?.processed_at) return false;
      return true;
    }, () => children.map((c) => c.pid), 'every entry processed');
    expect(emails.map((e) => smtp.mailsTo(e).length)).toEqual([1, 1, 1, 1]);
  });

  it('run the scheduled housekeeping once per tick, though both schedulers keep it', async () => {
    // BullMQ does not close a connection it was given: the test does.
    const connection = redisConnection('producer');
    const queue = new Queue(QUEUES.scheduler, { connection, prefix: config().bullmqPrefix });
    try {
      const runs = async () => (await queue.getJobs(['completed'], 0, 200)).filter((j) => j.name === 'bans.expire');
      await waitWhileProgressing(async () => (await runs()).length >= 6, () => children.map((c) => c.pid), 'six runs of the ban expiry');
      const done = await runs();
      // One series, kept by both schedulers (the same job scheduler), one job per tick: a scheduler
      // of its own per node would make two series, each tick run twice.
      expect([...new Set(done.map((j) => j.repeatJobKey))]).toEqual([schedulerIdOf(banExpiryJob)]);
      expect(new Set(done.map((j) => j.id)).size).toBe(done.length);
      const started = done.map((j) => j.processedOn!).sort((a, b) => a - b);
      const ticks = Math.floor((started[started.length - 1] - started[0]) / EVERY_MS) + 2;
      expect(started.length).toBeLessThanOrEqual(ticks);
    } finally {
      await queue.close();
      await connection.quit();
    }
  });
});
