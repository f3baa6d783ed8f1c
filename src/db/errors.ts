import { ConnectionError, TimeoutError } from 'sequelize';
import { isConnectionError } from '../lib/serviceErrors';

/**
 * Database errors sorted by whether a later attempt can get past them. A transient one (the
 * database, not the request or the mail, is the trouble) is a 503 with Retry-After for the API
 * (http/errors.ts) and fails a mailbox poll so the next poll takes the mail again
 * (mailbox/ingest.ts); any other is the work's own (a 500, a mail's `error`). Deadlocks are first
 * retried within the process (./transaction.ts).
 */

interface DriverError { errno?: number; code?: string; sqlState?: string; sqlMessage?: string; message?: string; parent?: DriverError; original?: DriverError }

/** The driver's error under Sequelize's (`parent`), or the error itself. */
const driverError = (err: unknown): DriverError => {
  const e = (err ?? {}) as DriverError;
  return e.parent ?? e.original ?? e;
};

/** The server's error number of a database error (under Sequelize's or the driver's own), if any. */
export const errnoOf = (err: unknown): number | undefined => driverError(err).errno;

/**
 * Lock conflicts with other transactions' writes: a deadlock (1213, also Galera's certification
 * failure), a lock wait timeout (1205), and 1467 (Failed to read auto-increment value from storage
 * engine), which is how InnoDB reports a deadlock met while taking a table's AUTO-INC lock (an
 * INSERT ... SELECT holds it for the whole statement), the transaction rolled back as for 1213
 * (MDEV-33593: seen as a 500 on a user's delete under concurrent writes). ./transaction.ts runs
 * the transaction again on each; the database answered: it is busy, not down.
 */
const LOCK_CONFLICT_ERRNOS: ReadonlySet<number> = new Set([1213, 1205, 1467]);

/**
 * Server errors that a later attempt can get past: a lock conflict (after db/transaction.ts has
 * retried it), too many connections, a server shutting down or read-only (a failover), a
 * connection or statement killed, a statement stopped by max_statement_time (DATABASE_QUERY_TIMEOUT_MS).
 */
const SERVER_ERRNOS = new Set([...LOCK_CONFLICT_ERRNOS, 1040, 1053, 1290, 1927, 1317, 1969]);

/** The mariadb driver's own errors for a connection lost, refused, timed out, or a pool without one to give. */
const DRIVER_CODES = new Set([
  'ER_CONNECTION_ALREADY_CLOSED', 'ER_CMD_NOT_EXECUTED_DESTROYED', 'ER_SOCKET_UNEXPECTED_CLOSE', 'ER_CONNECTION_TIMEOUT',
  'ER_CMD_CONNECTION_CLOSED', 'ER_SOCKET', 'ER_SOCKET_TIMEOUT', 'ER_GET_CONNECTION_TIMEOUT', 'ER_POOL_ALREADY_CLOSED',
  'ER_CLOSING_POOL', 'ER_POOL_NO_CONNECTION', 'ER_INITIAL_TIMEOUT_ERROR', 'ER_PING_TIMEOUT', 'ER_STATEMENT_TIMEOUT',
]);

/**
 * Thrown by work whose snapshot (REPEATABLE READ: taken at the transaction's first plain read)
 * predates rows it has since locked: a change committed while it waited for the lock, and its
 * plain reads would mix the state before that change with the state after. The whole transaction
 * runs again (./transaction.ts), with a snapshot that sees the change, as a later request would.
 */
export class SnapshotBehindLock extends Error {
  constructor(what: string) {
    super(`The transaction's snapshot predates the ${what} it locked.`);
  }
}

/** Whether `err` is the database's passing trouble (deadlock, lock wait, connection lost or refused, no pooled connection in time), not the work's. */
export function isTransientDbError(err: unknown): boolean {
  if (err instanceof SnapshotBehindLock) return true;
  // Sequelize's connection errors include the pool's acquire timeout (ConnectionAcquireTimeoutError).
  if (err instanceof ConnectionError || err instanceof TimeoutError) return true;
  const e = driverError(err);
  if (e.errno !== undefined && SERVER_ERRNOS.has(e.errno)) return true;
  if (e.code && DRIVER_CODES.has(e.code)) return true;
  // SQLSTATE class 08: a connection exception; 40001: a serialization failure (deadlock).
  if (/^08|^40001$/.test(String(e.sqlState ?? ''))) return true;
  return isConnectionError(err);
}

/**
 * Whether `err` is a transient error that is a lock conflict with other writes (a deadlock, a lock
 * wait timeout, a snapshot behind a lock), not an outage: the API says the database is busy.
 */
export function isLockConflict(err: unknown): boolean {
  if (err instanceof SnapshotBehindLock) return true;
  const e = driverError(err);
  return (e.errno !== undefined && LOCK_CONFLICT_ERRNOS.has(e.errno)) || String(e.sqlState ?? '') === '40001';
}

/**
 * The error in a few words, without the SQL statement (Sequelize's message is the driver's, which
 * ends with the whole statement and its parameters: the mail's own data): the server's message
 * and the error's code, e.g. `Data too long for column 'email' at row 1 (ER_DATA_TOO_LONG)`.
 */
export function errorText(err: unknown): string {
  const e = driverError(err);
  if (e.sqlMessage) return e.code && e.code !== 'UNKNOWN' ? `${e.sqlMessage} (${e.code})` : e.sqlMessage;
  const message = (err as { message?: string } | null)?.message ?? String(err);
  return message.split('\nsql:')[0];
}
