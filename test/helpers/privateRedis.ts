import { spawn, type ChildProcess } from 'node:child_process';
import IORedis from 'ioredis';
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

  constructor(readonly port: number) {}

  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const client = new IORedis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    const started = Date.now();
    for (;;) {
      try {
        await client.connect();
        await client.ping();
        client.disconnect();
        return;
      } catch {
        client.disconnect();
        if (Date.now() - started > 10000) throw new Error(`redis-server did not start on port ${this.port}`);
        await new Promise((r) => setTimeout(r, 100));
      }
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
