/**
 * The benchmark's environment. This module must be the first import of run.ts: src/config.ts reads
 * process.env once, on first use, and src/logger.ts builds its logger when it is loaded, so the
 * variables have to be in place before any module of src/ is required.
 *
 * The benchmark gets a database and a queue prefix of its own: it writes 100,000-odd rows and
 * piles up IP bans, which must never land in a development or test database.
 */
process.env.DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'mariadb://root@127.0.0.1:3306/helpdesk_bench';
process.env.QUEUE_PREFIX = 'helpdesk_bench';
process.env.LOG_LEVEL = 'silent';
// The app trusts no proxy here: the client address is the socket's (127.0.0.1), which no seeded
// or created ban ever names.
process.env.TRUST_PROXY = '';

/** Seconds each measured scenario runs (HTTP and baseline alike). */
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
/** Concurrent HTTP connections, and concurrent loops of the baseline. */
export const CONCURRENCY = 10;

if (!Number.isFinite(SECONDS) || SECONDS <= 0) {
  throw new Error(`BENCH_SECONDS must be a positive number of seconds, not ${JSON.stringify(process.env.BENCH_SECONDS)}`);
}
