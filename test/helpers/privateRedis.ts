import { spawn, type ChildProcess } from 'node:child_process';
import IORedis from 'ioredis';

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
