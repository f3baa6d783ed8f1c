process.env.PROCESS_NAME ??= 'web';
import type { Server } from 'node:http';
import { buildApp } from './app';
import { config } from './config';
import { sequelize } from './db/sequelize';
import { logger } from './logger';
import { exitOnStartupError } from './cli/exitOnStartupError';
import { closeQueues } from './queue/producer';

async function main() {
  const cfg = config();
  await sequelize().authenticate();
  const app = buildApp();
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(cfg.port, cfg.host, () => resolve(s));
    s.on('error', reject);
  });
  logger.info({ port: cfg.port, host: cfg.host }, 'web process listening');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'web process stopping');
    const force = setTimeout(() => process.exit(1), cfg.shutdownTimeoutMs);
    force.unref();
    // Stop accepting, let requests in flight finish, then close the pools they used.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections(); // idle keep-alive sockets would otherwise hold close() open
    await closed;
    await closeQueues();
    await sequelize().close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch(exitOnStartupError);
