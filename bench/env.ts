/**
 * The benchmark's environment. This module must be the first import of run.ts: src/config.ts reads
 * process.env once, on first use, and src/logger.ts builds its logger when it is loaded, so the
 * variables have to be in place before any module of src/ is required.
 *
 * The benchmark gets a database (one per scale: the default name carries BENCH_TICKETS, and
 * BENCH_YEARS when not 2) and a
 * queue prefix of its own: it writes millions of rows, which must never land in a development or
 * test database.
 */

/** Tickets in the data set (5 messages each). */
export const TICKETS = Number(process.env.BENCH_TICKETS ?? 1_000_000);
if (!Number.isInteger(TICKETS) || TICKETS < 100) throw new Error(`BENCH_TICKETS must be an integer of at least 100, not ${JSON.stringify(process.env.BENCH_TICKETS)}`);

/** Years the tickets were created over, up to now (the help desk's age: what the day counters hold grows with it). */
export const YEARS = Number(process.env.BENCH_YEARS ?? 2);
if (!Number.isInteger(YEARS) || YEARS < 1) throw new Error(`BENCH_YEARS must be a whole number of years, at least 1, not ${JSON.stringify(process.env.BENCH_YEARS)}`);

process.env.DATABASE_URL = process.env.BENCH_DATABASE_URL ?? `mariadb://root@127.0.0.1:3306/helpdesk_bench_t${TICKETS}${YEARS === 2 ? '' : `_y${YEARS}`}`;
process.env.QUEUE_PREFIX = process.env.BENCH_QUEUE_PREFIX ?? 'helpdesk_bench';
process.env.LOG_LEVEL = 'silent';
// The app trusts no proxy here: the client address is the socket's (127.0.0.1), which no seeded
// or created ban ever names.
process.env.TRUST_PROXY = '';
// The rate limits stay on (their Redis round trips are part of every request) but out of reach,
// here and in the servers the benchmark starts (they inherit this environment): the runs count
// under one address, so a second run within a window would otherwise be refused.
process.env.RATE_LIMIT_PER_TOKEN = '1000000000';
process.env.RATE_LIMIT_PER_IP = '1000000000';
// The bulk load's statements (100,000 tickets each, index builds) run for minutes: no statement
// or socket limit here or in the servers it starts, unless one is given.
process.env.DATABASE_QUERY_TIMEOUT_MS ??= '0';
process.env.DATABASE_SOCKET_TIMEOUT_MS ??= '0';

/** Seconds each measured scenario runs (our server and the baseline alike). */
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
/** Concurrent HTTP connections of the load generator. */
export const CONCURRENCY = Number(process.env.BENCH_CONNECTIONS ?? 16);

if (!Number.isFinite(SECONDS) || SECONDS <= 0) {
  throw new Error(`BENCH_SECONDS must be a positive number of seconds, not ${JSON.stringify(process.env.BENCH_SECONDS)}`);
}
