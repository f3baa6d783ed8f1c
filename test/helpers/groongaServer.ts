import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const GROONGA = '/usr/bin/groonga';

/**
 * Installs Debian's groonga-bin (the `groonga` command; it starts no service) with apt-get when it
 * is missing and this runs as root; otherwise throws saying how. Synchronous: called from jest's
 * globalSetup, before any test file starts.
 */
export function ensureGroongaInstalled(): void {
  if (existsSync(GROONGA)) return;
  if (process.getuid?.() !== 0 || !existsSync('/usr/bin/apt-get')) {
    throw new Error(`The Groonga search tests need ${GROONGA}: run \`apt-get install groonga-bin\` as root (Debian/Ubuntu), or use .ci/run`);
  }
  const opts = { stdio: ['ignore', 2, 2] as ['ignore', number, number], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } };
  process.stderr.write('groonga is missing: installing groonga-bin with apt-get\n');
  execFileSync('apt-get', ['update'], opts);
  execFileSync('apt-get', ['install', '-y', 'groonga-bin'], opts);
}

/**
 * A Groonga HTTP server of the test's own (Debian's groonga-bin, installed by .ci/run) on `port`,
 * its database in a directory of its own: stopped and started again on the same database, or
 * started on a new one.
 */
export class GroongaServer {
  private child?: ChildProcess;
  private readonly dir = mkdtempSync(join(tmpdir(), 'groonga-'));

  constructor(readonly port: number) {}

  get running(): boolean {
    return !!this.child && this.child.exitCode === null;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts the server on its database (made when missing, or when `fresh`), and waits until it answers. */
  async start({ fresh = false } = {}): Promise<void> {
    const db = join(this.dir, 'db');
    if (fresh) {
      rmSync(this.dir, { recursive: true, force: true });
      mkdirSync(this.dir, { recursive: true });
    }
    const create = fresh || !existsSync(db) ? ['-n'] : [];
    this.child = spawn(GROONGA, ['-s', '--protocol', 'http', '--bind-address', '127.0.0.1', '--port', String(this.port), ...create, db], { stdio: 'ignore' });
    const started = Date.now();
    for (;;) {
      // The port was free when it was picked, not reserved: a server that exits at once found it taken.
      if (this.child.exitCode !== null) throw new Error(`groonga exited at start (code ${this.child.exitCode}): port ${this.port} taken meanwhile?`);
      const up = await fetch(`${this.url}/d/status`).then((r) => r.ok, () => false);
      if (up) return;
      if (Date.now() - started > 10000) throw new Error(`groonga did not start on port ${this.port}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  }

  /** Stops the server and removes its database. */
  async remove(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
