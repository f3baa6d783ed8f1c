import { ConfigError, loadConfig } from '../config';
import { mariadbProblem } from './serviceErrors';

/** DATABASE_URL as configured (the configuration is valid here: an invalid one fails before any connection). */
function databaseUrl(): string {
  try {
    return loadConfig().database.url;
  } catch {
    return process.env.DATABASE_URL ?? '';
  }
}

/**
 * Names the variable that sets the port of the server whose listen failed with `err`, for the
 * start-up line to tell the user what to change: PORT unless a server says otherwise (the mail
 * catcher's MAIL_CATCHER_PORT, the metrics server's METRICS_PORT). Returns `err`.
 */
export function withPortSetting<E>(err: E, setting: string): E {
  if (err && typeof err === 'object') (err as { portSetting?: string }).portSetting = setting;
  return err;
}

/** The one line that says why a process could not start. */
export function startupErrorMessage(err: unknown): string {
  if (err instanceof ConfigError) return err.message;
  const e = err as (NodeJS.ErrnoException & { port?: number; address?: string; portSetting?: string }) | undefined;
  // A cluster worker's listen fails in the primary's bind (WEB_CONCURRENCY > 1).
  const listening = e?.syscall === 'listen' || e?.syscall === 'bind';
  const setting = e?.portSetting ?? 'PORT';
  if (listening && e.code === 'EADDRINUSE') return `Startup failed: port ${e.port} on ${e.address} is already in use (set ${setting} to a free port).`;
  if (listening && e.code === 'EACCES') return `Startup failed: not allowed to listen on port ${e.port} of ${e.address} (set ${setting}; ports below 1024 need privileges).`;
  // The address a server listens on: HOST beside PORT (MAIL_CATCHER_HOST, METRICS_HOST beside theirs).
  const hostSetting = setting.replace(/PORT$/, 'HOST');
  if (listening && e.code === 'EADDRNOTAVAIL') return `Startup failed: ${e.address} is not an address of this machine (set ${hostSetting}).`;
  // A name to listen on that does not resolve (looked up before the listen: syscall getaddrinfo).
  if (e?.syscall === 'getaddrinfo' && e.code === 'ENOTFOUND' && e.portSetting !== undefined) {
    return `Startup failed: ${(e as { hostname?: string }).hostname} does not resolve to an address (set ${hostSetting}).`;
  }
  const database = mariadbProblem(err, databaseUrl());
  if (database) return `Startup failed: ${database}`;
  return `Startup failed: ${e?.message ?? err}`;
}

/** A process that cannot start says why on stderr, in one line, and exits non-zero. */
export function exitOnStartupError(err: unknown): never {
  process.stderr.write(`${startupErrorMessage(err)}\n`);
  process.exit(1);
}
