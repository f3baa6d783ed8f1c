import { ConfigError } from '../config';

/** A process that cannot start says why on stderr, in one line, and exits non-zero. */
export function exitOnStartupError(err: unknown): never {
  const message = err instanceof ConfigError ? err.message : `Startup failed: ${(err as Error)?.message ?? err}`;
  process.stderr.write(`${message}\n`);
  process.exit(1);
}
