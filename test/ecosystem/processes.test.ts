/**
 * The compiled processes, as the Procfile runs them (built into a directory of this test's own):
 * a web process killed in the middle of a request with an Idempotency-Key, whose retry on another
 * web process does not do the work twice; readiness while draining after SIGTERM and without
 * Redis; the webhooks worker process delivering and serving its metrics; the mailbox worker
 * process killed in the middle of a poll and started again. Every port is a free one.
 */
import './processesEnv';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { config } from '../../src/config';
import { Department, DepartmentBrand, DepartmentEmail, IdempotencyKey, IncomingMail, IpBan, Ticket, Webhook } from '../../src/db/models';
import { IN_PROGRESS, RESPONSE_LOST } from '../../src/http/idempotency';
import { unique, useApi } from '../helpers/app';
import { encodeForm } from '../helpers/form';
import { expectSuccess } from '../helpers/envelope';
import { startReceiver } from '../helpers/receiver';
import { waitFor } from '../helpers/smtp';
import { uniqueIpv4 } from '../core/support';
import { startDovecot } from '../helpers/dovecot';
import { rawMail } from '../mailbox/support';
import { freePort, listeningPort } from '../helpers/ports';
import { waitWhileProgressing } from '../helpers/progress';
import { projectRoot } from '../../src/lib/projectRoot';
import { privateBuild } from '../helpers/privateBuild';

const api = useApi();
const { dist, build, remove } = privateBuild('ecosystem-build');
const root = projectRoot();

beforeAll(build);
afterAll(remove);

interface Proc {
  child: ChildProcess;
  exited: Promise<number | null>;
  output: () => string;
}
const started: Proc[] = [];

afterAll(() => {
  for (const p of started) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
});

/** A compiled entry point on this test's database and queues. */
function run(entry: string, env: Record<string, string>): Proc {
  let output = '';
  const child = spawn(process.execPath, [join(dist, entry)], {
    env: {
      ...process.env, NODE_PATH: join(root, 'node_modules'), HOST: '127.0.0.1', LOG_LEVEL: 'warn',
      DATABASE_URL: config().database.url, REDIS_URL: config().redisUrl, QUEUE_PREFIX: config().queuePrefix, ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (c) => { output += c; });
  child.stderr!.on('data', (c) => { output += c; });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const proc = { child, exited, output: () => output };
  started.push(proc);
  return proc;
}

/** The compiled web process, once it says it listens: on a port the system gives it (PORT=0, listeningPort). */
async function web(env: Record<string, string> = {}): Promise<Proc & { url: string }> {
  const proc = run('src/server.js', { PORT: '0', LOG_LEVEL: 'info', LOG_FORMAT: 'json', ...env });
  const port = await waitWhileProgressing(async () => {
    if (proc.child.exitCode !== null) throw new Error(`the web process exited: ${proc.output()}`);
    return listeningPort(proc.output());
  }, () => [proc.child.pid], 'the web process to listen');
  const url = `http://127.0.0.1:${port}`;
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
  return { ...proc, url };
}

const auth = () => `Basic ${Buffer.from(`${api.token}:x`).toString('base64')}`;
const createBan = (url: string, ip: string, key: string) => fetch(`${url}/api/core/ipban`, {
  method: 'POST',
  headers: { Authorization: auth(), 'Content-Type': 'application/x-www-form-urlencoded', 'Idempotency-Key': key },
  body: encodeForm({ ip, type: 1, reason: 'killed mid-request' }),
});
const kill = async (p: Proc) => {
  p.child.kill('SIGKILL');
  await p.exited;
};

describe('a web process killed in the middle of a request with an Idempotency-Key', () => {
  it('after its work committed, before its response was stored: the retry does not do the work again', async () => {
    const ip = uniqueIpv4();
    const key = randomUUID();
    // Holds the response 10 s after the commit, before it is stored; the key's lock lasts 3 s.
    const first = await web({ TEST_HOLD_RESPONSE: 'before-store:10000', IDEMPOTENCY_LOCK_SECONDS: '3', IDEMPOTENCY_WAIT_MS: '100' });
    const second = await web({ IDEMPOTENCY_WAIT_MS: '100' });
    const lost = createBan(first.url, ip, key).catch((err: Error) => err);
    await waitWhileProgressing(() => IpBan.count({ where: { ip } }), () => [first.child.pid], 'the ban to be committed');
    // While the first holds the key, a retry elsewhere is told it is still being processed.
    const meanwhile = await createBan(second.url, ip, key);
    expect({ status: meanwhile.status, body: await meanwhile.json() }).toEqual({ status: 409, body: { status: 'error', message: IN_PROGRESS, data: null } });

    await kill(first);
    expect(String(await lost)).toMatch(/fetch failed/); // the client saw the connection drop
    // Once the dead process's lock expires, the retry finds the committed claim: no second ban.
    const retried = await waitFor(async () => {
      const res = await createBan(second.url, ip, key);
      const body = (await res.json()) as any;
      return body.message === IN_PROGRESS ? null : { status: res.status, body };
    }, 30000, 'the lock of the killed process (3 s) to expire');
    expect(retried).toEqual({ status: 409, body: { status: 'error', message: RESPONSE_LOST, data: null } });
    expect(await IpBan.count({ where: { ip } })).toBe(1);
    await kill(second);
  });

  it('after its response was stored, before it was sent: the retry gets that response, and the work was done once', async () => {
    const ip = uniqueIpv4();
    const key = randomUUID();
    const first = await web({ TEST_HOLD_RESPONSE: 'after-store:10000', IDEMPOTENCY_LOCK_SECONDS: '2' });
    const lost = createBan(first.url, ip, key).catch((err: Error) => err);
    const keyHash = createHash('sha256').update(key, 'utf8').digest('hex');
    const stored = await waitWhileProgressing(async () => (await IdempotencyKey.findAll({ where: { path: '/api/core/ipban', key_hash: keyHash } })).find((r) => r.response !== null), () => [first.child.pid], 'the response to be stored');
    expect(stored.status_code).toBe(200);
    expect(stored.response!.startsWith('v1:')).toBe(true); // encrypted at rest
    await kill(first);
    expect(String(await lost)).toMatch(/fetch failed/);

    const second = await web();
    const res = await createBan(second.url, ip, key);
    const body = (await res.json()) as any;
    expect(res.status).toBe(200);
    expect(res.headers.get('idempotent-replayed')).toBe('true');
    expect(body).toMatchObject({ status: 'success', message: 'Successfully created new ban!', data: { ip } });
    expect(await IpBan.count({ where: { ip } })).toBe(1);
    expect(body.data.id).toBe((await IpBan.findOne({ where: { ip } }))!.id);
    await kill(second);
  });
});

describe('readiness of the web process', () => {
  it('answers 503 from SIGTERM on while it drains, then exits 0', async () => {
    const proc = await web({ SHUTDOWN_DRAIN_MS: '1500', LOG_LEVEL: 'info' });
    expect((await fetch(`${proc.url}/readyz`)).status).toBe(200);
    proc.child.kill('SIGTERM');
    const draining = await waitFor(async () => {
      const res = await fetch(`${proc.url}/readyz`);
      return res.status === 503 ? res : null;
    }, 2000, 'readiness to fail');
    expect(await draining.json()).toEqual({ status: 'error', message: 'Not ready: the process is shutting down.', data: null });
    expect(draining.headers.get('connection')).toBe('close');
    // Liveness still answers while it drains; requests in flight are still served.
    expect((await fetch(`${proc.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${proc.url}/api/core/brand/1`, { headers: { Authorization: auth() } })).status).toBe(200);
    expect(await proc.exited).toBe(0);
    expect(proc.output()).toContain('web process stopping');
  });

  it('is not ready without Redis (and says why), while alive', async () => {
    const proc = await web({ REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
    const res = await fetch(`${proc.url}/readyz`);
    expect(res.status).toBe(503);
    expect(((await res.json()) as any).message).toMatch(/^Not ready: redis: Redis at redis:\/\/127\.0\.0\.1:\d+ \(REDIS_URL\) is unreachable \(/);
    expect((await fetch(`${proc.url}/healthz`)).status).toBe(200);
    await kill(proc);
  });
});

describe('the webhooks worker process (Procfile: worker-webhooks)', () => {
  it('delivers, and serves its metrics on METRICS_PORT', async () => {
    const receiver = await startReceiver();
    const metricsPort = await freePort();
    const worker = run('workers/webhooks.js', { METRICS_PORT: String(metricsPort) });
    const progressing = () => [worker.child.pid];
    try {
      const hook = expectSuccess(await api.post('/api/core/webhook', { url: `${receiver.url}?${unique('p')}`, events: ['organisation.created'] }), 'Successfully created new webhook!');
      await api.post('/api/user/organisation', { name: unique('Org ') });
      await waitWhileProgressing(() => receiver.at(hook.url).length === 1, progressing, 'the delivery by the worker process').catch((err) => {
        throw new Error(`${err.message}; the worker said: ${worker.output()}`);
      });
      const metrics = await waitWhileProgressing(async () => {
        const text = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text(), () => '');
        return /helpdesk_jobs_total\{[^}]*queue="webhooks"[^}]*outcome="completed"[^}]*\} 1/.test(text) ? text : null;
      }, progressing, 'the worker metrics');
      expect(metrics).toContain('helpdesk_webhook_deliveries_total{outcome="succeeded"} 1');
      await Webhook.destroy({ where: { id: hook.id } });
      worker.child.kill('SIGTERM');
      expect(await worker.exited).toBe(0);
    } finally {
      await receiver.close();
    }
  });
});

describe('the mailbox worker process (Procfile: worker-mailbox) killed in the middle of a poll', () => {
  it('loses nothing and doubles nothing when it is started again', async () => {
    const address = `crash-${unique('c').toLowerCase()}@crash.test`;
    const dovecot = await startDovecot([{ user: address, password: 'pw' }]);
    try {
      const total = 100;
      for (let i = 0; i < total; i++) await dovecot.append(address, await rawMail({ from: `sender${i}@customers.test`, to: address, subject: `Mail ${i}` }));
      // A department that maps no email template: the new tickets queue no mail for later test files.
      const department = await Department.create({ name: unique('Crash dept ') });
      await DepartmentBrand.create({ department_id: department.id, brand_id: 1 });
      const mailbox = expectSuccess(await api.post(`/api/ticket/department/${department.id}/email`, {
        address, type: 1, protocol: 'imap', server: '127.0.0.1', port: dovecot.ports.imap, encryption: 'none', username: address, password: 'pw',
      }), 'Successfully created new department email!');
      const lines = () => IncomingMail.count({ where: { department_email_id: mailbox.id } });
      // Batches of 10: the kill lands in the middle of the poll, between or inside batches.
      const env = { MAILBOX_POLL_EVERY_MS: '200', MAILBOX_BATCH_SIZE: '10' };

      const first = run('workers/mailbox.js', env);
      await waitWhileProgressing(async () => (await lines()) >= 10, () => [first.child.pid], 'the first worker to import some mail').catch((err) => {
        throw new Error(`${err.message}; the worker said: ${first.output()}`);
      });
      await kill(first);
      const atKill = await lines();
      expect(atKill).toBeLessThan(total); // it really was in the middle of the poll

      const second = run('workers/mailbox.js', env);
      await waitWhileProgressing(async () => (await lines()) >= total, () => [second.child.pid], 'the second worker to finish the mailbox');
      // Two poll rounds end after the last import (each marks the mailbox polled): a mail imported
      // twice would be in the ledger by then.
      for (let round = 0; round < 2; round++) {
        await DepartmentEmail.update({ last_polled_at: null }, { where: { id: mailbox.id } });
        await waitWhileProgressing(async () => (await DepartmentEmail.findByPk(mailbox.id))?.last_polled_at, () => [second.child.pid], 'a poll round to end');
      }
      const ledger = await IncomingMail.findAll({ where: { department_email_id: mailbox.id } });
      expect(ledger).toHaveLength(total);
      expect(ledger.every((l) => l.decision === 'new_ticket')).toBe(true);
      expect(new Set(ledger.map((l) => l.message_id)).size).toBe(total);
      expect(await Ticket.count({ where: { department_email_id: mailbox.id } })).toBe(total);
      // Every mail the second worker saw is flagged; at most the batch in hand at the kill was imported but not flagged.
      const unseen = (await dovecot.messages(address)).filter((m) => !m.flags.includes('\\Seen'));
      expect(unseen.length).toBeLessThanOrEqual(10);
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    } finally {
      await dovecot.stop();
    }
  }, 600000); // 100 mails appended, then two workers' runs, each wait bounded by its progress
});
