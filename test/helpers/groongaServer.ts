import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePortsSync } from './ports';

const GROONGA = '/usr/bin/groonga';

/**
 * The ticket search on a Groonga server of the test file's own, speaking `protocol`, on a port free
 * now (found synchronously: the configuration is read at import). Called by the file's first
 * import (test/ticket/groongaEnv.ts), before any module reads the configuration; returns the port.
 */
export function groongaEnvironment(protocol: 'gqtp' | 'http'): number {
  const [port] = freePortsSync(1);
  process.env.SEARCH_ENGINE = 'groonga';
  process.env.SEARCH_GROONGA_URL = `${protocol}://127.0.0.1:${port}`;
  // The least the stream holds changes back: the index catches up a second after a write.
  process.env.EXPORT_SETTLE_SECONDS = '1';
  return port;
}

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
 * A Groonga server of the test's own (Debian's groonga-bin, installed by .ci/run) on `port`,
 * speaking GQTP or HTTP, its database in a directory of its own: stopped and started again on the
 * same database, or started on a new one.
 */
export class GroongaServer {
  private child?: ChildProcess;
  private readonly dir = mkdtempSync(join(tmpdir(), 'groonga-'));

  constructor(readonly port: number, readonly protocol: 'gqtp' | 'http' = 'gqtp') {}

  get running(): boolean {
    return !!this.child && this.child.exitCode === null;
  }

  get url(): string {
    return `${this.protocol}://127.0.0.1:${this.port}`;
  }

  /** Starts the server on its database (made when missing, or when `fresh`), and waits until it answers. */
  async start({ fresh = false } = {}): Promise<void> {
    const db = join(this.dir, 'db');
    if (fresh) {
      rmSync(this.dir, { recursive: true, force: true });
      mkdirSync(this.dir, { recursive: true });
    }
    const create = fresh || !existsSync(db) ? ['-n'] : [];
    this.child = spawn(GROONGA, ['-s', '--protocol', this.protocol, '--bind-address', '127.0.0.1', '--port', String(this.port), ...create, db], { stdio: 'ignore' });
    const started = Date.now();
    for (;;) {
      // The port was free when it was picked, not reserved: a server that exits at once found it taken.
      if (this.child.exitCode !== null) throw new Error(`groonga exited at start (code ${this.child.exitCode}): port ${this.port} taken meanwhile?`);
      const up = await this.answers();
      if (up) return;
      if (Date.now() - started > 10000) throw new Error(`groonga did not start on port ${this.port}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Whether the server takes connections (GQTP) or answers `status` (HTTP). */
  private answers(): Promise<boolean> {
    if (this.protocol === 'http') return fetch(`${this.url}/d/status`).then((r) => r.ok, () => false);
    return new Promise((resolve) => {
      const socket = connect(this.port, '127.0.0.1');
      socket.once('connect', () => { socket.destroy(); resolve(true); });
      socket.once('error', () => resolve(false));
    });
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
