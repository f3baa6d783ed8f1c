/**
 * The processes as `npm start` runs them: the project is built with the build script of
 * package.json (into a directory of this test's own), and the compiled web process is started.
 */
import { execSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useApi } from '../helpers/app';
import { killWhenStalled } from '../helpers/progress';

useApi(); // this worker's database, created and migrated
const root = join(__dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'helpdesk-build-'));
const dist = join(dir, 'dist');
const tsconfig = join(dir, 'tsconfig.json');

/** `npm run build`, aimed at this test's directory. */
function build(): void {
  const script: string = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts.build;
  expect(script).toContain('tsconfig.build.json');
  execSync(script.replace('tsconfig.build.json', tsconfig), { cwd: root, stdio: 'pipe', env: { ...process.env, PATH: `${join(root, 'node_modules', '.bin')}:${process.env.PATH}` } });
}

/**
 * Runs the compiled web process until it exits or `until` matches its output (then stops it);
 * `onOutput` sees the process and its output so far, when started and at each chunk.
 */
function runWeb(
  env: Record<string, string>, until?: RegExp, onOutput?: (child: ChildProcess, stdout: string) => void,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(dist, 'src/server.js')], {
      env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', NODE_PATH: join(root, 'node_modules'), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    killWhenStalled(child);
    onOutput?.(child, stdout);
    child.stdout.on('data', (c) => {
      stdout += c;
      if (until?.test(stdout)) child.kill('SIGTERM');
      onOutput?.(child, stdout);
    });
    child.stderr.on('data', (c) => { stderr += c; });
    child.on('exit', (code) => {
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs a compiled command (`npm run seed`, `npm run token -- ...`) to its end, or kills it once it stalls (a command that hangs). */
function runCommand(script: string, args: string[] = []): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(dist, 'src/cli', script), ...args], {
      env: { ...process.env, LOG_LEVEL: 'warn', NODE_PATH: join(root, 'node_modules') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    killWhenStalled(child, { idleMs: 10000 });
    child.stdout.on('data', (c) => { stdout += c; });
    child.stderr.on('data', (c) => { stderr += c; });
    child.on('exit', (code, signal) => {
      resolve({ code, signal, stdout, stderr });
    });
  });
}

beforeAll(() => {
  writeFileSync(tsconfig, JSON.stringify({
    extends: join(root, 'tsconfig.build.json'),
    compilerOptions: { outDir: dist, typeRoots: [join(root, 'node_modules', '@types')] },
    include: ['src', 'workers', 'migrations', 'bench'].map((d) => join(root, d)),
  }));
  build(); // the first, full build
  expect(existsSync(join(dist, 'src/server.js'))).toBe(true);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm run build', () => {
  it('does not compile an unchanged tree again (nothing is written)', () => {
    const before = statSync(join(dist, 'src/server.js')).mtimeMs;
    build();
    expect(statSync(join(dist, 'src/server.js')).mtimeMs).toBe(before);
  });
});

describe('the commands', () => {
  // A write bumps a cache version in Redis: a command that left that connection open never exited.
  it('seed, migrate and token create, list and revoke finish and exit 0', async () => {
    const name = `cli-exit-${process.pid}`;
    const seed = await runCommand('seed.js');
    expect(seed).toMatchObject({ code: 0, signal: null, stdout: 'Seed applied.\n' });
    expect(await runCommand('migrate.js')).toMatchObject({ code: 0, signal: null, stdout: expect.stringMatching(/^(Applied \d+ migrations?: .*|Nothing to apply: the database is up to date\.)\nMigrations applied: \d+\n$/) });
    const created = await runCommand('token.js', ['create', '--name', name]);
    expect(created).toMatchObject({ code: 0, signal: null, stderr: '' });
    expect(created.stdout).toMatch(/^hd_[A-Za-z0-9_-]{43}\n$/);
    const listed = await runCommand('token.js', ['list']);
    expect(listed).toMatchObject({ code: 0, signal: null });
    expect(listed.stdout).toContain(`\t${name}\t`);
    expect(await runCommand('token.js', ['revoke', name])).toMatchObject({ code: 0, signal: null, stdout: 'Revoked 1 token.\n' });
  });

  it('--help prints the usage and exits 0; an unknown command is named, with the usage, and exits 2', async () => {
    // One entry point (cli/command.ts runCommand) for every tool: two of them stand for all.
    for (const script of ['token.js', 'ban.js']) {
      const help = await runCommand(script, ['--help']);
      expect({ script, code: help.code, stderr: help.stderr }).toEqual({ script, code: 0, stderr: '' });
      expect(help.stdout).toMatch(/^usage:/);
      const unknown = await runCommand(script, ['frob']);
      expect({ script, code: unknown.code, stdout: unknown.stdout }).toEqual({ script, code: 2, stdout: '' });
      expect(unknown.stderr).toBe(`Unknown command: frob.\n${help.stdout}`);
    }
  });
});

describe('the web process at start', () => {
  it('says in one line that PORT is bad, and exits 1', async () => {
    const { code, stdout, stderr } = await runWeb({ PORT: 'abc' });
    expect({ code, stdout, stderr }).toEqual({ code: 1, stdout: '', stderr: 'Invalid configuration: PORT must be a number\n' });
  });

  it('says in one line that the port is in use, and exits 1', async () => {
    const holder: Server = await new Promise((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => resolve(s));
    });
    try {
      const port = (holder.address() as { port: number }).port;
      const { code, stdout, stderr } = await runWeb({ PORT: String(port) });
      expect(code).toBe(1);
      expect(stdout).not.toContain('listening'); // it did not claim to listen
      expect(stderr).toBe(`Startup failed: port ${port} on 127.0.0.1 is already in use (set PORT to a free port).\n`);
    } finally {
      holder.close();
    }
  });

  it.each([['one process', '1'], ['two workers', '2']])('with METRICS_PORT in use (%s): exits 1 with the reason, never having said it listens', async (_, workers) => {
    const holder: Server = await new Promise((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => resolve(s));
    });
    try {
      const port = (holder.address() as { port: number }).port;
      const { code, stdout, stderr } = await runWeb({ METRICS_PORT: String(port), METRICS_HOST: '127.0.0.1', WEB_CONCURRENCY: workers });
      expect(code).toBe(1);
      expect(stdout).not.toContain('listening');
      expect(stderr).toContain(`Startup failed: port ${port} on 127.0.0.1 is already in use (set METRICS_PORT to a free port).`);
    } finally {
      holder.close();
    }
  });

  it('stops on a SIGTERM that arrives while it starts, without listening, exit 0', async () => {
    // The database is reached through a proxy that holds the connection until the process has
    // taken the signal: its startup then goes on (during the drain, and under way when the drain
    // ends), and must open no port once it is stopping.
    const db = new URL(process.env.DATABASE_URL!);
    const mariadb = { port: Number(db.port || 3306), host: db.hostname };
    let release!: () => void;
    const released = new Promise<void>((resolve) => { release = resolve; });
    let web: ChildProcess | undefined;
    const sockets: Socket[] = [];
    const proxy: Server = await new Promise((resolve) => {
      const s = createServer((client) => {
        sockets.push(client);
        web?.kill('SIGTERM');
        void released.then(() => {
          const upstream = connect(mariadb.port, mariadb.host);
          sockets.push(upstream);
          // The web process resets its connections as it closes them.
          for (const s of [client, upstream]) s.on('error', () => undefined);
          client.pipe(upstream).pipe(client);
        });
      }).listen(0, '127.0.0.1', () => resolve(s));
    });
    try {
      db.host = `127.0.0.1:${(proxy.address() as { port: number }).port}`;
      const { code, stdout, stderr } = await runWeb({ DATABASE_URL: db.toString(), LOG_FORMAT: 'json', SHUTDOWN_DRAIN_MS: '500' }, undefined, (child, out) => {
        web = child;
        if (out.includes('web process stopping')) release();
      });
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      const messages = stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l).msg);
      expect(messages).toContain('web process stopping');
      expect(messages).not.toContain('web process listening');
    } finally {
      release();
      for (const s of sockets) s.destroy();
      proxy.close();
    }
  });

  it('says so when a request in flight holds it past SHUTDOWN_TIMEOUT_MS, and exits 1', async () => {
    let socket: Socket | undefined;
    let continued = '';
    const { code, stdout } = await runWeb({ LOG_FORMAT: 'json', SHUTDOWN_TIMEOUT_MS: '300' }, undefined, (child, out) => {
      const line = out.split('\n').find((l) => l.includes('"web process listening"'));
      if (!line || socket) return;
      // A body announced and never sent: the request stays in flight, so the server cannot close.
      // The signal waits for the server's 100 Continue, sent once it has read the request's
      // headers: sent sooner, it could find the connection idle (no request read yet), which
      // closeIdleConnections() closes, and the process exited 0 (seen on Node.js 26).
      socket = connect(JSON.parse(line).port, '127.0.0.1', () => {
        socket!.write('POST /account/verify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n');
      });
      socket.once('data', (chunk) => {
        continued = chunk.toString();
        socket!.write('{');
        child.kill('SIGTERM');
      });
      socket.on('error', () => undefined);
    });
    socket?.destroy();
    expect(continued).toMatch(/^HTTP\/1\.1 100 Continue\r\n/);
    expect(code).toBe(1);
    const lines = stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['web process stopping', 'web process did not stop in time; exiting']));
    expect(lines.find((l) => l.msg === 'web process did not stop in time; exiting')).toMatchObject({ level: 50, timeoutMs: 300 });
  });

  it('logs pretty lines with LOG_FORMAT=pretty, and JSON to a pipe otherwise', async () => {
    const pretty = await runWeb({ LOG_FORMAT: 'pretty' }, /web process listening/);
    expect(pretty.stdout).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO  web \| web process listening port=\d+ host=127\.0\.0\.1$/m);
    const json = await runWeb({}, /web process listening/);
    const first = JSON.parse(json.stdout.split('\n')[0]);
    expect(first).toMatchObject({ level: 30, proc: 'web', msg: 'web process listening', host: '127.0.0.1' });
    // PORT=0: the port the system gave it, which a supervisor or a test then connects to.
    expect(first.port).toBeGreaterThan(0);
  });
});

describe('WEB_CONCURRENCY: web workers under node:cluster', () => {
  it('runs that many workers, says it listens once, and stops them all gracefully on SIGTERM, exit 0', async () => {
    const { code, stdout } = await runWeb({ WEB_CONCURRENCY: '2', LOG_FORMAT: 'json' }, /web process listening/);
    expect(code).toBe(0);
    const lines = stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const listening = lines.filter((l) => l.msg === 'web process listening');
    expect(listening).toHaveLength(1);
    expect(listening[0]).toMatchObject({ workers: 2, port: expect.any(Number), host: '127.0.0.1' });
    const stopping = lines.filter((l) => l.msg === 'web process stopping');
    expect(new Set(stopping.map((l) => l.pid)).size).toBe(2);
    expect(stopping.map((l) => l.pid)).not.toContain(listening[0].pid); // the workers stop; the primary announced
  });

  it('serves METRICS_PORT from the primary with every worker\'s counts summed: each scrape counts every request', async () => {
    const metricsPort = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as { port: number };
        s.close(() => resolve(port));
      });
    });
    const requests = 12;
    const scrapes: number[] = [];
    let failure: unknown;
    let started = false;
    const counted = (text: string) => text.split('\n').filter((l) => l.startsWith('helpdesk_http_requests_total{') && l.includes('route="/health"'))
      .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
    const { code } = await runWeb({ WEB_CONCURRENCY: '2', LOG_FORMAT: 'json', METRICS_PORT: String(metricsPort) }, undefined, (child, stdout) => {
      const line = stdout.split('\n').find((l) => l.includes('"web process listening"'));
      if (!line || started) return;
      started = true;
      const { port } = JSON.parse(line);
      void (async () => {
        try {
          // Each on a connection of its own: the shared port spreads them over both workers.
          for (let i = 0; i < requests; i++) await fetch(`http://127.0.0.1:${port}/health`, { headers: { Connection: 'close' } });
          for (let i = 0; i < 4; i++) scrapes.push(counted(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()));
        } catch (err) {
          failure = err;
        } finally {
          child.kill('SIGTERM');
        }
      })();
    });
    expect(failure).toBeUndefined();
    expect(code).toBe(0);
    expect(scrapes).toEqual([requests, requests, requests, requests]);
  });

  it('exits 1 with the one-line reason when the workers cannot listen', async () => {
    const holder: Server = await new Promise((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => resolve(s));
    });
    try {
      const port = (holder.address() as { port: number }).port;
      const { code, stderr } = await runWeb({ PORT: String(port), WEB_CONCURRENCY: '2' });
      expect(code).toBe(1);
      expect(stderr).toContain(`Startup failed: port ${port} on 127.0.0.1 is already in use`);
    } finally {
      holder.close();
    }
  });
});
