import { logger } from '../logger';
import { isConnectionError } from './serviceErrors';

/**
 * A promise rejected with nobody listening. Node ends the process on one (its default since 15).
 * That is right for a bug, but a client library can reject a promise nobody holds when a connection
 * is lost (the mariadb driver did for the SET of its queryTimeout option, which db/sequelize.ts no
 * longer uses): the pool opens another connection and no request is affected. Ending the web
 * process for it would fail every request in flight, so a lost connection is logged and the
 * process goes on; anything else is logged once and ends the process with Node's exit code for
 * it, as before.
 */
export function onStrayRejection(reason: unknown): 'kept running' | 'exit' {
  if (isConnectionError(reason)) {
    logger.warn({ err: reason }, 'a database or Redis connection failed with nothing waiting for it; carrying on');
    return 'kept running';
  }
  logger.fatal({ err: reason }, 'unhandled promise rejection; exiting');
  return 'exit';
}

/** Installs the handler above in a long-running process (web, workers). */
export function guardStrayRejections(): void {
  process.on('unhandledRejection', (reason) => {
    if (onStrayRejection(reason) === 'exit') process.exit(1);
  });
}
