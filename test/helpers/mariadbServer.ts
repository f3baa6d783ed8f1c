import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as mariadb from 'mariadb';
import { freePort } from './ports';
import { waitWhileProgressing } from './progress';

const run = promisify(execFile);

/** Small InnoDB files and buffers: a test's server holds a few databases of test data. */
const SMALL = ['--innodb-log-file-size=8M', '--innodb-buffer-pool-size=32M'];

/**
 * A mariadbd of the test's own (root without a password, on 127.0.0.1 and a free port, data in
 * a temporary directory), with binary logging and the server id given, so tests can replicate
 * between two of them or join them into a Galera cluster (`args`). `stop` and `start` again keep
 * the data and the port; `remove` stops it and deletes the directory.
 */
export class MariadbServer {
  readonly dir = mkdtempSync(join(tmpdir(), 'hd-mariadb-'));
  private child?: ChildProcess;
  private exited?: Promise<void>;
  private installed = false;

  /** `port` 0: a free one, taken at the first start. */
  constructor(readonly serverId: number, public port = 0, private readonly args: string[] = []) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts the server (installing its data directory the first time) and waits until it answers. */
  async start(extraArgs: string[] = []): Promise<void> {
    const tmp = join(this.dir, 'tmp');
    if (!this.installed) {
      // Each server its own temporary directory: two installs sharing /tmp collide on temporary table names.
      mkdirSync(tmp);
      await run('mariadb-install-db', ['--no-defaults', `--datadir=${join(this.dir, 'data')}`, `--tmpdir=${tmp}`, '--user=root',
        '--auth-root-authentication-method=normal', '--skip-test-db', ...SMALL]);
      // Galera's rsync state transfer runs its receiving daemon as nobody: it must write here.
      if (this.args.some((a) => a.startsWith('--wsrep-on'))) {
        chmodSync(this.dir, 0o755);
        await run('chmod', ['-R', 'a+rwX', join(this.dir, 'data')]);
      }
      this.installed = true;
    }
    this.port ||= await freePort();
    const child = spawn('mariadbd', [
      '--no-defaults', '--user=root', `--datadir=${join(this.dir, 'data')}`, `--socket=${join(this.dir, 'sock')}`,
      `--pid-file=${join(this.dir, 'pid')}`, `--tmpdir=${tmp}`, `--port=${this.port}`, '--bind-address=127.0.0.1', '--skip-name-resolve',
      `--server-id=${this.serverId}`, `--log-bin=${join(this.dir, 'data', 'bin')}`, '--log-slave-updates',
      `--log-error=${join(this.dir, 'error.log')}`, ...SMALL, ...this.args, ...extraArgs,
    ], { stdio: 'ignore' });
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    await waitWhileProgressing(async () => {
      if (!this.running) throw new Error(`mariadbd ${this.serverId} exited while starting (see ${join(this.dir, 'error.log')})`);
      try {
        await this.query('SELECT 1');
        return true;
      } catch {
        return false;
      }
    }, () => [child.pid], `mariadbd ${this.serverId} on port ${this.port}`, { maxMs: 120000 });
  }

  /** Stops the server: SIGTERM (a clean shutdown) or SIGKILL (a crash). */
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    if (!this.running) return;
    this.child!.kill(signal);
    await this.exited;
  }

  async remove(): Promise<void> {
    await this.stop('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }

  url(database: string): string {
    return `mariadb://root@127.0.0.1:${this.port}/${database}`;
  }

  /** A connection of the caller's own (to end). */
  connect(): Promise<mariadb.Connection> {
    return mariadb.createConnection({ host: '127.0.0.1', port: this.port, user: 'root', connectTimeout: 2000 });
  }

  /** Runs one statement on a connection of its own. */
  async query<T = any>(sql: string, values?: unknown[]): Promise<T> {
    const c = await this.connect();
    try {
      return await c.query(sql, values);
    } finally {
      await c.end();
    }
  }

  /** A global status counter (`Com_select`: the SELECTs the server ran). */
  async status(name: string): Promise<number> {
    const [row] = await this.query('SHOW GLOBAL STATUS LIKE ?', [name]);
    return Number(row?.Value ?? 0);
  }
}

/** Makes `replica` replicate everything from `primary` (GTID), and waits until it runs. */
export async function replicate(primary: MariadbServer, replica: MariadbServer): Promise<void> {
  await primary.query("CREATE USER IF NOT EXISTS 'repl'@'127.0.0.1' IDENTIFIED BY 'repl'");
  await primary.query("GRANT REPLICATION SLAVE ON *.* TO 'repl'@'127.0.0.1'");
  await replica.query(`CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=${primary.port}, MASTER_USER='repl', MASTER_PASSWORD='repl', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1`);
  await replica.query('START SLAVE');
  await waitWhileProgressing(async () => {
    const [s] = await replica.query('SHOW SLAVE STATUS');
    if (s?.Last_IO_Error || s?.Last_SQL_Error) throw new Error(`replication failed: ${s.Last_IO_Error || s.Last_SQL_Error}`);
    return s?.Slave_IO_Running === 'Yes' && s?.Slave_SQL_Running === 'Yes';
  }, () => [primary.pid, replica.pid], 'replication to start');
}
