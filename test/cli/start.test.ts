/**
 * `npm start` and the processes it runs, compiled into a directory of this test's own (with a
 * package.json and the Procfile, so that start.js finds them there): every process's shutdown
 * lines reach the output and the mail catcher stops after the workers; SIGTERM sent to `npm start`'s
 * own npm process stops them all, and so does its SIGKILL (each notices it is gone); start-up lines that name
 * the variable to change (MAIL_CATCHER_PORT, METRICS_PORT) or the command to run (`npm run
 * migrate`); the configured connect timeout; the migrate command's arguments; the ban command
 * exits once done.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import * as mariadb from 'mariadb';
import { config } from '../../src/config';
import { QueryTypes } from 'sequelize';
import { IpBan } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { projectRoot } from '../../src/lib/projectRoot';
import { useApi } from '../helpers/app';
import { freePort, listeningPort } from '../helpers/ports';
import { privateBuild } from '../helpers/privateBuild';
import { silentServer } from '../helpers/silentServer';
import { killWhenStalled, waitWhileProgressing, withDescendants } from '../helpers/progress';
import { uniqueIpv4 } from '../core/support';

useApi(); // this worker's database, created, migrated and seeded
const root = projectRoot();
const { dir, dist, build, remove } = privateBuild('start');

beforeAll(() => {
  build();
  // start.js takes the nearest directory above it with a package.json as the project: its
  // Procfile, and where the processes run (`node dist/...`). Its `start` is the project's, so
  // that `npm start` runs it as it does in the project.
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ private: true, scripts: { start: scripts.start } })}\n`);
  copyFileSync(join(root, 'Procfile'), join(dir, 'Procfile'));
});
afterAll(remove);

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running: Run[] = [];
afterAll(() => {
  for (const r of running) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
});

/** A compiled entry point on this test's database and queues; killed if it stalls. */
function run(entry: string, env: Record<string, string> = {}, args: string[] = []): Run {
  return runCommand(process.execPath, [join(dist, entry), ...args], env);
}

/** A command run in this test's directory, on this test's database and queues; killed if it stalls. */
function runCommand(command: string, args: string[], env: Record<string, string> = {}): Run {
  const { PROCESS_NAME: _name, ...inherited } = process.env;
  const child = spawn(command, args, {
    cwd: dir,
    env: { ...inherited, NODE_PATH: join(root, 'node_modules'), HOST: '127.0.0.1', LOG_LEVEL: 'info', LOG_FORMAT: 'json', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c) => { stdout += c; });
  child.stderr!.on('data', (c) => { stderr += c; });
  killWhenStalled(child);
  // `close`: the process has exited and its output is read to the end.
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  const r = { child, stdout: () => stdout, stderr: () => stderr, done };
  running.push(r);
  return r;
}

const jsonLines = (text: string): Array<Record<string, any>> => text.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));

/** A port something else holds for the length of `work`. */
async function withPortTaken<T>(work: (port: number) => Promise<T>): Promise<T> {
  const holder: Server = await new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => resolve(s));
  });
  try {
    return await work((holder.address() as { port: number }).port);
  } finally {
    holder.close();
  }
}

/** A database URL on the test's MariaDB server, with another database name. */
const databaseUrl = (name: string) => {
  const url = new URL(config().database.url);
  url.pathname = `/${name}`;
  return url.toString();
};

describe('a process\'s log', () => {
  it('keeps its last lines, in order, when it exits right after them while the libuv threadpool is busy', async () => {
    // pino's asynchronous writes wait in the threadpool; exiting flushed the later lines first.
    writeFileSync(join(dist, 'log-then-exit.js'), [
      "const { pbkdf2 } = require('node:crypto');",
      "const { logger } = require('./src/logger.js');",
      "for (let i = 0; i < 8; i++) pbkdf2('x', 'y', 200000, 32, 'sha512', () => {});",
      "for (let i = 1; i <= 3; i++) logger.info({ i }, 'line');",
      'process.exit(0);',
    ].join('\n'));
    const r = run('log-then-exit.js');
    expect((await r.done).code).toBe(0);
    expect(jsonLines(r.stdout()).map((l) => l.i)).toEqual([1, 2, 3]);
  });
});

describe('npm start, stopped with SIGTERM', () => {
  it('writes every process\'s shutdown lines, says when each has stopped, and stops the mail catcher after the others', async () => {
    const start = run('src/cli/start.js', {
      PORT: String(await freePort()), MAIL_CATCHER: '1', MAIL_CATCHER_PORT: String(await freePort()), WEB_CONCURRENCY: '1',
    });
    const procfile = ['web', 'worker-mail', 'worker-scheduler', 'worker-webhooks', 'worker-mailbox'];
    await waitWhileProgressing(() => {
      if (start.child.exitCode !== null) throw new Error(`npm start exited: ${start.stdout()}${start.stderr()}`);
      const lines = jsonLines(start.stdout());
      const said = (proc: string, msg: string) => lines.some((l) => l.proc === proc && l.msg === msg);
      return said('web', 'web process listening') && said('mailcatcher', 'mail catcher listening (SMTP)')
        && procfile.slice(1).every((proc) => said(proc, 'worker started'));
    }, () => [start.child.pid], 'every process to start');

    start.child.kill('SIGTERM');
    const { code } = await start.done;
    expect({ code, stderr: start.stderr() }).toEqual({ code: 0, stderr: '' });
    const lines = jsonLines(start.stdout());
    const index = (match: (l: Record<string, any>) => boolean) => lines.findIndex(match);
    const stopped = (name: string) => index((l) => l.proc === 'start' && l.msg === 'process stopped' && l.stopped === name);

    // Each process's own line (`npm start` exited before the last ones were read), then the one of
    // `npm start` once that process's output is written to the end.
    const stopping: Record<string, string> = { web: 'web process stopping', mailcatcher: 'mail catcher stopping' };
    const own = (name: string) => index((l) => l.proc === name && l.msg === (stopping[name] ?? 'worker stopping'));
    const everyProcess = [...procfile, 'mailcatcher'];
    expect(Object.fromEntries(everyProcess.map((name) => [name, own(name) >= 0]))).toEqual(Object.fromEntries(everyProcess.map((name) => [name, true])));
    expect(everyProcess.filter((name) => !(stopped(name) > own(name)))).toEqual([]);
    // Each stopped on its own, with code 0: the program's exit, not its shell's death by the signal.
    expect(everyProcess.map((name) => [name, lines[stopped(name)].code, lines[stopped(name)].signal])).toEqual(everyProcess.map((name) => [name, 0, null]));
    // The catcher is asked to stop once every other process has stopped (a worker's last mail is
    // still caught). By the lines' times: `npm start` writes its own lines asynchronously (pino),
    // so they may reach the output a moment after a line it relays.
    const catcherStopping = index((l) => l.proc === 'mailcatcher' && l.msg === 'mail catcher stopping');
    expect(procfile.filter((name) => !(lines[stopped(name)].time <= lines[catcherStopping].time))).toEqual([]);
    expect(index((l) => l.proc === 'mailcatcher' && l.msg === 'mail catcher stopped')).toBeGreaterThan(catcherStopping);
    expect(stopped('mailcatcher')).toBe(lines.length - 1);
  });
});

describe('npm start, its terminal closed (SIGHUP)', () => {
  it('stops every process it runs', async () => {
    const start = run('src/cli/start.js', { PORT: String(await freePort()), MAIL_CATCHER: '0', WEB_CONCURRENCY: '1' });
    const procfile = ['web', 'worker-mail', 'worker-scheduler', 'worker-webhooks', 'worker-mailbox'];
    await waitWhileProgressing(() => {
      if (start.child.exitCode !== null) throw new Error(`npm start exited: ${start.stdout()}${start.stderr()}`);
      const lines = jsonLines(start.stdout());
      return lines.some((l) => l.proc === 'web' && l.msg === 'web process listening')
        && procfile.slice(1).every((proc) => lines.some((l) => l.proc === proc && l.msg === 'worker started'));
    }, () => [start.child.pid], 'every process to start');
    const started = withDescendants([start.child.pid!]).filter((pid) => pid !== start.child.pid);
    try {
      start.child.kill('SIGHUP');
      expect((await start.done).code).toBe(0);
      expect(started.filter(alive)).toEqual([]);
    } finally {
      for (const pid of started.filter(alive)) process.kill(pid, 'SIGKILL');
    }
  });
});

describe('npm start, killed (SIGKILL: it can stop no one)', () => {
  it('every process it ran stops by itself, the web process\'s cluster workers and the mail catcher too', async () => {
    const start = run('src/cli/start.js', {
      PORT: String(await freePort()), MAIL_CATCHER: '1', MAIL_CATCHER_PORT: String(await freePort()), WEB_CONCURRENCY: '2',
    });
    const procfile = ['web', 'worker-mail', 'worker-scheduler', 'worker-webhooks', 'worker-mailbox'];
    await waitWhileProgressing(() => {
      if (start.child.exitCode !== null) throw new Error(`npm start exited: ${start.stdout()}${start.stderr()}`);
      const lines = jsonLines(start.stdout());
      return lines.some((l) => l.proc === 'web' && l.msg === 'web process listening')
        && lines.some((l) => l.proc === 'mailcatcher' && l.msg === 'mail catcher listening (SMTP)')
        && procfile.slice(1).every((proc) => lines.some((l) => l.proc === proc && l.msg === 'worker started'));
    }, () => [start.child.pid], 'every process to start');
    const started = withDescendants([start.child.pid!]).filter((pid) => pid !== start.child.pid);
    // The Procfile's five, the mail catcher and two cluster workers.
    expect(started.length).toBeGreaterThanOrEqual(procfile.length + 3);
    try {
      start.child.kill('SIGKILL');
      await start.done;
      await waitWhileProgressing(() => started.filter(alive).length === 0, () => started.filter(alive), 'the processes to stop');
    } finally {
      for (const pid of started.filter(alive)) process.kill(pid, 'SIGKILL');
    }
  });
});

/** Whether a process is running (a zombie, exited but not yet waited for, is not). */
const alive = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
};

describe('npm start, its npm process sent SIGTERM (as a service manager or `kill` does)', () => {
  it('stops start.js and every process it runs before npm exits', async () => {
    // npm runs the script with `sh -c`; dash, Debian's sh, does not pass the signal on to the
    // program it waits for, unless `exec` made that program the shell itself.
    const npm = runCommand('npm', ['start'], {
      PORT: String(await freePort()), MAIL_CATCHER: '0', WEB_CONCURRENCY: '1', npm_config_update_notifier: 'false',
    });
    const procfile = ['web', 'worker-mail', 'worker-scheduler', 'worker-webhooks', 'worker-mailbox'];
    await waitWhileProgressing(() => {
      if (npm.child.exitCode !== null) throw new Error(`npm start exited: ${npm.stdout()}${npm.stderr()}`);
      const lines = jsonLines(npm.stdout());
      const said = (proc: string, msg: string) => lines.some((l) => l.proc === proc && l.msg === msg);
      return said('web', 'web process listening') && procfile.slice(1).every((proc) => said(proc, 'worker started'));
    }, () => [npm.child.pid], 'every process to start');
    const started = withDescendants([npm.child.pid!]).filter((pid) => pid !== npm.child.pid);
    expect(started.length).toBeGreaterThanOrEqual(1 + procfile.length);

    try {
      npm.child.kill('SIGTERM');
      // A process says it is stopping as soon as the signal reaches it, while npm, which only
      // passes it on, does no work: npm idle and no such line means the signal was lost.
      await waitWhileProgressing(() => jsonLines(npm.stdout()).some((l) => procfile.includes(l.proc) && / stopping$/.test(l.msg)),
        () => [npm.child.pid], 'the processes to say they are stopping');
      await npm.done;
      expect(started.filter(alive)).toEqual([]);
    } finally {
      for (const pid of started.filter(alive)) process.kill(pid, 'SIGKILL');
    }
    const lines = jsonLines(npm.stdout());
    expect(procfile.filter((name) => !lines.some((l) => l.proc === 'start' && l.msg === 'process stopped' && l.stopped === name))).toEqual([]);
  });
});

describe('a port in use, at start', () => {
  it('the mail catcher names MAIL_CATCHER_PORT, not PORT', async () => {
    await withPortTaken(async (port) => {
      const catcher = run('workers/mailcatcher.js', { MAIL_CATCHER_PORT: String(port) });
      expect(await catcher.done).toEqual({ code: 1, signal: null });
      expect(catcher.stderr()).toBe(`Startup failed: port ${port} on 127.0.0.1 is already in use (set MAIL_CATCHER_PORT to a free port).\n`);
    });
  });

  it('a worker\'s metrics server names METRICS_PORT, not PORT', async () => {
    await withPortTaken(async (port) => {
      const worker = run('workers/webhooks.js', { METRICS_PORT: String(port) });
      expect(await worker.done).toEqual({ code: 1, signal: null });
      expect(worker.stderr()).toBe(`Startup failed: port ${port} on 127.0.0.1 is already in use (set METRICS_PORT to a free port).\n`);
    });
  });
});

describe('a database not created or not migrated (a Procfile line run before the release step, `npm run seed`)', () => {
  const server = () => {
    const url = new URL(config().database.url);
    return mariadb.createConnection({ host: url.hostname, port: Number(url.port || 3306), user: decodeURIComponent(url.username || 'root'), password: decodeURIComponent(url.password) });
  };

  it('the web process says to run `npm run seed` when the database does not exist', async () => {
    const name = `${config().database.name}_missing`;
    const web = run('src/server.js', { PORT: String(await freePort()), DATABASE_URL: databaseUrl(name) });
    expect(await web.done).toEqual({ code: 1, signal: null });
    expect(web.stderr()).toBe(`Startup failed: MariaDB at ${databaseUrl(name)} (DATABASE_URL) has no database \`${name}\`: `
      + 'run `npm run seed` first (it creates the database, migrates it and adds the records a new install needs).\n');
  });

  it('two processes that prepare a new database at once (`npm run seed` twice) both succeed, and seed it once', async () => {
    const name = `${config().database.name}_twice`;
    const conn = await server();
    try {
      await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
      const seeds = [0, 1].map(() => run('src/cli/seed.js', { DATABASE_URL: databaseUrl(name) }));
      const ended = await Promise.all(seeds.map(async (s) => ({ ...(await s.done), failed: s.stderr().includes('Startup failed') ? s.stderr() : null })));
      expect(ended).toEqual([0, 1].map(() => ({ code: 0, signal: null, failed: null })));
      // Each setting and each status once: one process seeded, the other found it seeded.
      const [settings] = await conn.query(`SELECT COUNT(*) AS n, COUNT(DISTINCT scope, name) AS once FROM \`${name}\`.settings`);
      const [statuses] = await conn.query(`SELECT COUNT(*) AS n, COUNT(DISTINCT name) AS once FROM \`${name}\`.ticket_statuses`);
      expect([Number(settings.n), Number(statuses.n)]).toEqual([Number(settings.once), Number(statuses.once)]);
      expect(Number(settings.n)).toBeGreaterThan(0);
    } finally {
      await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await conn.end();
    }
  });

  it('a worker says so too, in one line, and exits 1 before it takes a job', async () => {
    const name = `${config().database.name}_missing`;
    for (const entry of ['workers/mail.js', 'workers/scheduler.js']) {
      const worker = run(entry, { DATABASE_URL: databaseUrl(name), METRICS_PORT: '0' });
      expect(await worker.done).toEqual({ code: 1, signal: null });
      expect(worker.stderr()).toBe(`Startup failed: MariaDB at ${databaseUrl(name)} (DATABASE_URL) has no database \`${name}\`: `
        + 'run `npm run seed` first (it creates the database, migrates it and adds the records a new install needs).\n');
      expect(worker.stdout()).not.toContain('worker started');
    }
  });

  it('/readyz says to run `npm run seed` on an empty database, in one sentence', async () => {
    const name = `${config().database.name}_empty`;
    const conn = await server();
    try {
      await conn.query(`CREATE DATABASE IF NOT EXISTS \`${name}\``);
      const web = run('src/server.js', { PORT: '0', DATABASE_URL: databaseUrl(name) });
      const port = await waitWhileProgressing(() => {
        if (web.child.exitCode !== null) throw new Error(`the web process exited: ${web.stderr()}`);
        return listeningPort(web.stdout());
      }, () => [web.child.pid], 'the web process to listen');
      const res = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect({ status: res.status, body: await res.json() }).toEqual({
        status: 503,
        body: {
          status: 'error', data: null,
          message: `Not ready: migrations: not known: MariaDB at ${databaseUrl(name)} (DATABASE_URL) has no table \`migrations\`: `
            + 'the database is not migrated; run `npm run seed` (it migrates, and adds the records a new install needs).',
        },
      });
      web.child.kill('SIGTERM');
      await web.done;
    } finally {
      await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await conn.end();
    }
  });
});

describe('a MariaDB that does not answer', () => {
  it('is said in our words, after DATABASE_CONNECT_TIMEOUT_MS (not a fixed 5 seconds)', async () => {
    // A server that accepts connections and never says a word: the driver's connect timeout ends it.
    const silent = await silentServer();
    try {
      const url = `mariadb://root@127.0.0.1:${silent.port}/helpdesk`;
      const migrate = run('src/cli/migrate.js', { DATABASE_URL: url, DATABASE_CONNECT_TIMEOUT_MS: '500' });
      expect(await migrate.done).toEqual({ code: 1, signal: null });
      const m = /^Startup failed: MariaDB at (\S+) \(DATABASE_URL\) is unreachable \(timed out after (\d+) ms\): check that MariaDB is running and listening there, or set DATABASE_URL\.\n$/
        .exec(migrate.stderr());
      expect(m?.[1]).toBe(url);
      expect(Number(m![2])).toBeGreaterThanOrEqual(500);
      expect(Number(m![2])).toBeLessThan(5000);
    } finally {
      silent.close();
    }
  });
});

describe('the compiled migrate command', () => {
  it('refuses an argument it does not know (exit 2, its usage), and status lists without creating the database', async () => {
    const name = `${config().database.name}9003`; // like the worker's: a failed run's teardown drops it
    const typo = run('src/cli/migrate.js', { DATABASE_URL: databaseUrl(name) }, ['downn']);
    expect(await typo.done).toEqual({ code: 2, signal: null });
    expect(typo.stderr()).toMatch(/^Unknown command: downn\.\nusage:\n {2}npm run migrate /);
    const status = run('src/cli/migrate.js', { DATABASE_URL: databaseUrl(name), LOG_LEVEL: 'warn' }, ['status']);
    expect(await status.done).toEqual({ code: 0, signal: null });
    expect(status.stdout()).toMatch(/^pending\t001_core\n[^]*0 applied, \d+ pending\.\n$/);
    const schemas: unknown[] = await sequelize().query('SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', { replacements: [name], type: QueryTypes.SELECT });
    expect(schemas).toEqual([]);
  });
});

describe('the compiled ban command', () => {
  it('lists and deletes, and exits 0 once done (its database and Redis connections closed)', async () => {
    const ip = uniqueIpv4();
    await IpBan.create({ ip, type: 1, event_api: 1, event_user: 0, event_operator: 0 });
    const listed = run('src/cli/ban.js', { LOG_LEVEL: 'warn' }, ['list', ip]);
    expect(await listed.done).toEqual({ code: 0, signal: null });
    expect(listed.stdout()).toMatch(new RegExp(`^id\\tip\\tapplies to\\tends\\treason\\n\\d+\\t${ip.replace(/\./g, '\\.')}\\tapi\\tnever\\t-\\n$`));
    const deleted = run('src/cli/ban.js', { LOG_LEVEL: 'warn' }, ['delete', ip]);
    expect(await deleted.done).toEqual({ code: 0, signal: null });
    expect(deleted.stdout()).toBe(`Deleted 1 ban (${ip}).\n`);
    expect(await IpBan.count({ where: { ip } })).toBe(0);
  });
});
