import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { config } from '../../src/config';
import { jobIdOf } from '../../src/queue/outbox';
import { useApi, unique } from '../helpers/app';
import { mailQueue, verificationEntry } from '../helpers/jobs';
import { startSmtp, waitFor, type TestSmtp } from '../helpers/smtp';

const root = join(__dirname, '..', '..');
// Compiled for this test alone (a `npm run build` running meanwhile cannot swap files under it);
// inside node_modules so the compiled code resolves the project's packages.
const build = join(root, 'node_modules', '.cache', `helpdesk-test-build-${process.pid}`);
const api = useApi();
let smtp: TestSmtp;
let jobs: ReturnType<typeof mailQueue>;

/** The mail worker exactly as the Procfile runs it, on this test's database and queues. */
function startWorkerProcess(script = 'mail', env: Record<string, string> = {}): { child: ChildProcess; exited: Promise<number | null>; output: () => string } {
  let output = '';
  const child = spawn(process.execPath, [join(build, `workers/${script}.js`)], {
    env: { ...process.env, LOG_LEVEL: 'info', DATABASE_URL: config().database.url, REDIS_URL: config().redisUrl, QUEUE_PREFIX: config().queuePrefix, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (c) => { output += c; });
  child.stderr!.on('data', (c) => { output += c; });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

/** SIGTERM, then the exit code, or 'timeout' when it has not exited within 15 s. */
async function stopped(worker: ReturnType<typeof startWorkerProcess>): Promise<number | null | 'timeout'> {
  worker.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([worker.exited, new Promise<'timeout'>((r) => { timer = setTimeout(() => r('timeout'), 15000); })]);
  clearTimeout(timer);
  return code;
}

beforeAll(() => {
  // The worker process runs the compiled code.
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', build], { stdio: 'inherit' });
});

afterAll(() => rmSync(build, { recursive: true, force: true }));

beforeAll(async () => {
  smtp = await startSmtp({ delayMs: 1500 }); // every message takes 1.5 s to be accepted
  jobs = mailQueue();
});

afterAll(async () => {
  await jobs.close();
  await smtp.close();
});

describe('the mail worker process on SIGTERM', () => {
  it('finishes the mail it is sending, then exits 0', async () => {
    const b = await api.post('/api/core/brand', { name: unique('Brand '), default_email: 'desk@brand.test', smtp_host: '127.0.0.1', smtp_port: smtp.port });
    const email = `${unique('sig')}@example.com`;
    const u = await api.post('/api/user/user', { email, brand_id: b.body.data.id, send_email: 1 });
    const entry = (await waitFor(() => verificationEntry(u.body.data.id), 5000, 'the outbox entry'))!;

    const worker = startWorkerProcess();
    try {
      await waitFor(async () => (await (await jobs.job(jobIdOf(entry)))?.getState()) === 'active', 20000, 'the job to be active');
      expect(await stopped(worker)).toBe(0);
      expect(worker.output()).toContain('worker stopping');
      // The mail in flight was delivered, and its job completed rather than left to stall.
      expect(smtp.mailsTo(email)).toHaveLength(1);
      expect(await (await jobs.job(jobIdOf(entry)))!.getState()).toBe('completed');
      expect((await entry.reload()).processed_at).not.toBeNull();
    } finally {
      if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
    }
  });

  it('still waiting for Redis at start-up (the scheduler registers its jobs there): stops with its own lines, exit 0', async () => {
    // A port nothing listens on: Redis is away.
    const away = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const worker = startWorkerProcess('scheduler', { REDIS_URL: `redis://127.0.0.1:${away}` });
    try {
      await waitFor(() => worker.output().includes('Redis is unreachable'), 20000, 'the worker to say Redis is away');
      expect(await stopped(worker)).toBe(0);
      expect(worker.output()).toContain('worker stopping');
      expect(worker.output()).not.toContain('worker started');
    } finally {
      if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
    }
  });
});
