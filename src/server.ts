process.env.PROCESS_NAME ??= 'web';
import cluster, { type Worker } from 'node:cluster';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp } from './app';
import { config } from './config';
import { sequelize } from './db/sequelize';
import { logger } from './logger';
import { exitOnStartupError } from './lib/exitOnStartupError';
import { guardStrayRejections } from './lib/strayRejections';
import { closeQueues } from './queue/producer';
import { publishesSettled } from './queue/outbox';
import { closeCounters } from './redis/windowCounter';
import { startDraining } from './ops/health';
import { answerClusterMetrics, clusterMetrics, startMetricsServer } from './ops/metrics';
import { wire } from './wiring';
import { httpServer, listen } from './http/nodeServer';
import { stopWhenSupervisorGone } from './lib/supervisor';

async function main() {
  guardStrayRejections();
  wire();
  const cfg = config();
  let server: Server | undefined;
  // The signal handlers come first: a SIGTERM sent while the process starts (a node:cluster worker
  // replacing one that died, stopped with the rest) or as soon as it says it listens must find
  // them (Node's default would end it without a graceful stop).
  let metrics: Awaited<ReturnType<typeof startMetricsServer>> | undefined;
  let starting: Promise<void> | undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'web process stopping');
    const force = setTimeout(() => {
      logger.error({ timeoutMs: cfg.shutdownTimeoutMs }, 'web process did not stop in time; exiting');
      process.exit(1);
    }, cfg.shutdownTimeoutMs);
    force.unref();
    // Readiness fails first, while the port still answers, so load balancers stop sending
    // requests here (SHUTDOWN_DRAIN_MS); then stop accepting, let requests in flight finish, and
    // close the pools they used.
    startDraining();
    if (cfg.shutdownDrainMs > 0) await new Promise((r) => setTimeout(r, cfg.shutdownDrainMs));
    // A signal during startup: the startup ends first (a listen() under way would otherwise open
    // a port after this closed none), opening nothing more once stopping; then what it opened is closed.
    await starting?.catch(() => undefined);
    if (server) {
      const closed = new Promise<void>((resolve) => server!.close(() => resolve()));
      server.closeIdleConnections(); // idle keep-alive sockets would otherwise hold close() open
      await closed;
    }
    metrics?.close();
    // The publishes the last requests' commits started finish (or give up to the sweep) first.
    await publishesSettled();
    await closeQueues();
    closeCounters();
    await sequelize().close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // A node:cluster worker stops with its primary, which watches.
  if (cluster.isPrimary) stopWhenSupervisorGone();
  starting = (async () => {
    await sequelize().authenticate();
    if (stopping) return;
    const app = buildApp();
    server = await listen(httpServer(app), cfg.port, cfg.host);
    if (stopping) return;
    // The port it listens on (PORT=0: the one the system gave it). Under node:cluster the primary
    // says it once, for all its workers.
    const port = (server?.address() as AddressInfo | null | undefined)?.port ?? cfg.port;
    // Under node:cluster the primary serves METRICS_PORT, for all its workers. Before the line that
    // says it listens: a METRICS_PORT in use stops the process, which must not have said it runs.
    if (cluster.isWorker) answerClusterMetrics();
    else metrics = await startMetricsServer();
    if (stopping) return;
    if (cluster.isWorker) logger.debug({ port, host: cfg.host }, 'web worker listening');
    else logger.info({ port, host: cfg.host }, 'web process listening');
  })();
  await starting;
}

/**
 * WEB_CONCURRENCY > 1: this process is a node:cluster primary that runs that many web workers
 * (each the `main` above, sharing the port) and nothing else. A worker that dies is replaced; one
 * that dies before it listens (a bad configuration, a port in use) stops the whole process with
 * its exit code, as a single web process would. SIGTERM/SIGINT reach every worker, which stop
 * gracefully as above; the primary exits when they all have (forced after SHUTDOWN_TIMEOUT_MS).
 */
function primary(workers: number) {
  const cfg = config();
  let stopping = false;
  const listening = new Set<Worker>();
  let announced = false;
  const fork = () => {
    const worker = cluster.fork();
    worker.once('listening', (address) => {
      listening.add(worker);
      if (!announced && listening.size === workers) {
        announced = true;
        logger.info({ port: address.port, host: cfg.host, workers }, 'web process listening');
      }
    });
    worker.once('exit', (code, signal) => {
      const started = listening.delete(worker);
      if (stopping) {
        if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
        return;
      }
      if (!started) {
        stopping = true;
        for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
        process.exit(code || 1);
      }
      logger.error({ workerPid: worker.process.pid, code, signal }, 'web worker died; starting another');
      fork();
    });
  };
  // METRICS_PORT first: one in use stops the process before any worker says it listens.
  startMetricsServer(clusterMetrics()).then(() => {
    if (!stopping) for (let i = 0; i < workers; i++) fork();
  }).catch(exitOnStartupError);
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, workers: Object.keys(cluster.workers ?? {}).length }, 'web primary stopping its workers');
    setTimeout(() => {
      logger.error({ timeoutMs: cfg.shutdownTimeoutMs + 1000 }, 'web workers did not stop in time; exiting');
      process.exit(1);
    }, cfg.shutdownTimeoutMs + 1000).unref();
    const alive = Object.values(cluster.workers ?? {});
    if (!alive.length) process.exit(0);
    for (const w of alive) w?.process.kill('SIGTERM');
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  stopWhenSupervisorGone();
}

function run() {
  const workers = cluster.isPrimary ? config().webConcurrency : 1;
  if (workers > 1) primary(workers);
  else main().catch(exitOnStartupError);
}

try {
  run();
} catch (err) {
  exitOnStartupError(err);
}
