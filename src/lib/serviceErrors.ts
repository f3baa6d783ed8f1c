/**
 * Errors of the services the processes depend on, said in our words: which service, where (the
 * URL without its password), why, and what to check. Used at start-up, by `/readyz`, and by the
 * Redis outage log (ops/redisOutage.ts).
 */

/** A URL with its password (if any) replaced, fit for a log line or an error message. */
export function withoutPassword(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '****';
    return u.toString().replace(/\/$/, '');
  } catch {
    return '(an invalid URL)';
  }
}

const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EPIPE: 'connection closed',
  // The mariadb driver's (errno 45012): nothing answered within the connect timeout.
  ER_CONNECTION_TIMEOUT: 'timed out',
};

const CONNECTION_MESSAGES = /Connection is closed|Stream isn't writeable|max retries per request|Command timed out|connect ETIMEDOUT|did not answer within|ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ECONNRESET|EHOSTUNREACH/i;

interface ErrLike { name?: string; code?: string; errno?: number; message?: string; sqlMessage?: string; sqlState?: string; parent?: ErrLike; original?: ErrLike }

/** The network error underneath (sequelize wraps the driver's in `parent`). */
const root = (err: ErrLike): ErrLike => err.parent ?? err.original ?? err;

/** A failure to reach the service (as opposed to an error it answered with). */
export function isConnectionError(err: unknown): boolean {
  const e = root((err ?? {}) as ErrLike);
  return (!!e.code && e.code in REASONS) || CONNECTION_MESSAGES.test(e.message ?? '');
}

/** Why, in a few words: `connection refused`, `host not found`, `timed out`, else the error's own text. */
export function reasonOf(err: unknown): string {
  const e = root((err ?? {}) as ErrLike);
  // `Connection timeout: failed to create socket after 5001ms`: how long it waited tells which timeout applied.
  const waited = e.code === 'ER_CONNECTION_TIMEOUT' ? /after (\d+) ?ms/.exec(e.message ?? '') : null;
  if (waited) return `timed out after ${waited[1]} ms`;
  if (e.code && REASONS[e.code]) return REASONS[e.code];
  if (/timed out|ETIMEDOUT|did not answer within/i.test(e.message ?? '')) return 'timed out';
  if (/Connection is closed|Stream isn't writeable|max retries per request/i.test(e.message ?? '')) return 'no connection';
  return e.message ?? String(err);
}

/** `MariaDB at mariadb://root@127.0.0.1:3399/helpdesk (DATABASE_URL) is unreachable (connection refused)`, and what to check. */
export function mariadbProblem(err: unknown, url: string): string | null {
  const e = root((err ?? {}) as ErrLike);
  // The driver's errors carry an SQL state (its network errors too); sequelize names its own.
  const fromMariadb = e.sqlState !== undefined || /^Sequelize/.test((err as ErrLike | undefined)?.name ?? '');
  if (!fromMariadb) return null;
  const where = `MariaDB at ${withoutPassword(url)} (DATABASE_URL)`;
  if (/^ER_ACCESS_DENIED/.test(e.code ?? '')) return `${where} refused the login: check the user and password in DATABASE_URL.`;
  // A database not created yet, or not migrated: the processes of the Procfile expect both
  // (`npm start` prepares them; on a Procfile platform it is the release step, docs/operations.md).
  const text = e.sqlMessage ?? e.message ?? '';
  if (e.errno === 1049 || e.code === 'ER_BAD_DB_ERROR') {
    const name = /Unknown database '([^']+)'/.exec(text)?.[1];
    return `${where} has no database${name ? ` \`${name}\`` : ''}: run \`npm run seed\` first (it creates the database, migrates it and adds the records a new install needs).`;
  }
  if (e.errno === 1146 || e.code === 'ER_NO_SUCH_TABLE') {
    const table = /Table '(?:[^'.]*\.)?([^']+)' doesn't exist/.exec(text)?.[1];
    return `${where} has no table${table ? ` \`${table}\`` : ''}: the database is not migrated; run \`npm run seed\` (it migrates, and adds the records a new install needs).`;
  }
  if (!isConnectionError(err)) return null;
  return `${where} is unreachable (${reasonOf(err)}): check that MariaDB is running and listening there, or set DATABASE_URL.`;
}

/**
 * `Redis at redis://127.0.0.1:6379 (REDIS_URL) is unreachable (connection refused)`, and what to
 * check; `at`: where the configured Redis is and its setting (redisWhere, src/redis/topology.ts:
 * the URL, a Sentinel master or a cluster).
 */
export function redisProblem(err: unknown, { where, setting }: { where: string; setting: string }): string {
  return `Redis at ${where} (${setting}) is unreachable (${reasonOf(err)}): check that Redis is running and listening there, or set ${setting}.`;
}
