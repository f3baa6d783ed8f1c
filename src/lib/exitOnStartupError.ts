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

/** The one line that says why a process could not start. */
export function startupErrorMessage(err: unknown): string {
  if (err instanceof ConfigError) return err.message;
  const e = err as (NodeJS.ErrnoException & { port?: number; address?: string }) | undefined;
  // A cluster worker's listen fails in the primary's bind (WEB_CONCURRENCY > 1).
  const listening = e?.syscall === 'listen' || e?.syscall === 'bind';
  if (listening && e.code === 'EADDRINUSE') return `Startup failed: port ${e.port} on ${e.address} is already in use (set PORT to a free port).`;
  if (listening && e.code === 'EACCES') return `Startup failed: not allowed to listen on port ${e.port} of ${e.address} (set PORT; ports below 1024 need privileges).`;
  const database = mariadbProblem(err, databaseUrl());
  if (database) return `Startup failed: ${database}`;
  return `Startup failed: ${e?.message ?? err}`;
}

/** A process that cannot start says why on stderr, in one line, and exits non-zero. */
export function exitOnStartupError(err: unknown): never {
  process.stderr.write(`${startupErrorMessage(err)}\n`);
  process.exit(1);
}
