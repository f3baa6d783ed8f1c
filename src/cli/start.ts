process.env.PROCESS_NAME ??= 'start';
import { availableParallelism } from 'node:os';
import { spawn, type ChildProcess } from 'node:child_process';
import { config } from '../config';
import { sequelize } from '../db/sequelize';
import { resolveLogFormat } from '../logFormat';
import { exitOnStartupError } from '../lib/exitOnStartupError';
import { wire } from '../wiring';
import { logger } from '../logger';
import { relayLines } from './childOutput';
import { readProcfile, shellCommand } from './procfile';
import { projectRoot } from '../lib/projectRoot';
import { ensureFirstToken, prepareDatabase } from './setup';
import { stalePortWarnings } from '../seed/seed';
import { SUPERVISOR_PID_VARIABLE } from '../lib/supervisor';

/**
 * `npm start`: prepares the database (create, migrate, seed, first token), then runs every
 * process of the Procfile on this machine, like a Procfile runner. One process ending takes the
 * others down, so a half-running system never goes unnoticed.
 */
async function main() {
  config();
  await prepareDatabase();
  const token = await ensureFirstToken();
  for (const warning of await stalePortWarnings(config())) logger.warn(warning);
  await sequelize().close();
  const format = resolveLogFormat(config().logFormat, process.stdout.isTTY === true);
  // The token is a secret: said to the person at the terminal (stderr), never logged.
  if (token) {
    process.stderr.write(`\nA first API token was created. It is shown only this once; keep it:\n\n  ${token}\n\n`
      + `Try: curl -u '${token}:x' http://127.0.0.1:${config().port}/api/core/brand\n\n`);
  }

  const children = new Map<string, ChildProcess>();
  let stopping = false;
  // Each process runs in a process group of its own (detached), and the signal goes to the group:
  // the shell that runs the Procfile line and the program it started stop together.
  const signalGroup = (child: ChildProcess, signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      /* already gone */
    }
  };
  // The processes stop in two rounds: those of the Procfile, then the mail catcher once they have
  // all ended, so that a mail a worker sends while it finishes its job in hand is still caught.
  const stopsLast = (name: string) => name === 'mailcatcher';
  const signalRound = (names: string[]) => {
    for (const name of names) {
      const child = children.get(name);
      if (child) signalGroup(child, 'SIGTERM');
    }
    // A process that ignores SIGTERM past the shutdown timeout is killed.
    setTimeout(() => names.forEach((name) => {
      const child = children.get(name);
      if (child) signalGroup(child, 'SIGKILL');
    }), config().shutdownTimeoutMs + 2000).unref();
  };
  let lastRound = false;
  const stopLastRound = () => {
    if (lastRound || [...children.keys()].some((name) => !stopsLast(name))) return;
    lastRound = true;
    signalRound([...children.keys()]);
  };
  const stopAll = () => {
    if (stopping) return;
    stopping = true;
    signalRound([...children.keys()].filter((name) => !stopsLast(name)));
    stopLastRound();
  };
  // Outside production, a local mail catcher receives what the seeded brand sends (MAIL_CATCHER).
  const catcher = config().mailCatcher;
  const processes = [...readProcfile(), ...(catcher.enabled ? [{ name: 'mailcatcher', command: 'node dist/workers/mailcatcher.js' }] : [])];
  if (catcher.enabled) {
    logger.info({ smtp: `${catcher.host}:${catcher.port}`, page: `${config().appUrl}/admin/mail`, api: '/api/core/mailcatcher' },
      'mail catcher on: the mail the help desk sends is kept here, not delivered (MAIL_CATCHER=0 turns it off)');
  }
  for (const [index, { name, command }] of processes.entries()) {
    // The children write to pipes: they log the way this process would on its own output. With
    // METRICS_PORT, each serves its metrics on a port of its own: the base, then one up per line.
    const metricsPort = config().metrics.port ? { METRICS_PORT: String(config().metrics.port + index) } : {};
    const env = {
      // The web process runs a worker per core unless told otherwise (WEB_CONCURRENCY).
      WEB_CONCURRENCY: String(availableParallelism()),
      // JSON from every child: this process writes each line once, as JSON or pretty (childOutput.ts).
      ...process.env, ...metricsPort, PROCESS_NAME: name, LOG_FORMAT: 'json',
      // Each stops by itself once this process is gone (lib/supervisor.ts): a SIGKILL here reaches none of them.
      [SUPERVISOR_PID_VARIABLE]: String(process.pid),
    };
    const child = spawn(shellCommand(command), { cwd: projectRoot(), shell: true, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env });
    children.set(name, child);
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (code, signal) => resolve([code, signal])));
    let unexpected = false;
    child.once('exit', () => {
      signalGroup(child, 'SIGTERM'); // anything the shell left behind
      if (!stopping) {
        unexpected = true;
        process.exitCode = 1;
        stopAll();
      }
    });
    // A process is done once it has exited and its output is written to the end: a child's last
    // lines (its "stopping") may still be in the pipe when it has exited, and exiting then lost them.
    void Promise.all([
      exited,
      relayLines(child.stdout!, process.stdout, { name, pid: child.pid, stream: 'stdout' }, format),
      relayLines(child.stderr!, process.stdout, { name, pid: child.pid, stream: 'stderr' }, format),
    ]).then(([[code, signal]]) => {
      children.delete(name);
      if (unexpected) logger.error({ exited: name, code, signal }, 'a process exited; stopping the others');
      else logger.info({ stopped: name, code, signal }, 'process stopped');
      if (!children.size) process.exit();
      if (stopping) stopLastRound();
    });
  }
  process.on('SIGINT', () => stopAll());
  process.on('SIGTERM', () => stopAll());
  // The terminal closed: its hang-up reaches this process alone (each process runs detached, in a
  // group of its own), whose default is to die and leave them all running, ports held.
  process.on('SIGHUP', () => stopAll());
}

wire();
main().catch(exitOnStartupError);
