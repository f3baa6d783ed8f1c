import { testPrefix } from './testPrefix';

// Runs before each test file's imports. Every jest worker of every run gets its own database and
// Redis prefix (run = the jest parent's pid, set by globalSetup), so test files running in
// parallel, and two test runs on one machine, never see each other's records or jobs.
const run = process.env.HELPDESK_TEST_RUN ?? String(process.ppid);
const worker = process.env.JEST_WORKER_ID ?? '1';
// TEST_PREFIX names this run's databases and Redis prefixes (default helpdesk_t): two checkouts
// sharing a server can keep theirs apart, and a run drops only its own.
const prefix = testPrefix();
const server = (process.env.TEST_DATABASE_SERVER ?? 'mariadb://root@127.0.0.1:3306').replace(/\/+$/, '');
process.env.NODE_ENV = 'test';
process.env.DATABASE_URL = `${server}/${prefix}${run}_${worker}`;
process.env.QUEUE_PREFIX = `${prefix}${run}_${worker}`;
process.env.REDIS_URL ??= 'redis://127.0.0.1:6379';
// Requests may name their client address (X-Forwarded-For) so ban tests can call from any IP.
process.env.TRUST_PROXY = 'loopback';
// Mail retries fast in tests: three attempts, 100 ms apart and doubling.
process.env.MAIL_ATTEMPTS = '3';
process.env.MAIL_BACKOFF_MS = '100';
// Many tests send wrong tokens from 127.0.0.1 on purpose: a high limit keeps the automatic ban
// for failed authentications out of their way (test/core/auth-bans*.test.ts set their own).
process.env.LOGIN_FAILURES_MAX = '1000000';
// Rate limits high enough that no test meets them (test/ops/rate-limit.test.ts sets its own).
process.env.RATE_LIMIT_PER_TOKEN = '1000000000';
process.env.RATE_LIMIT_PER_IP = '1000000000';
// Webhook deliveries retry fast in tests: 50 ms apart and doubling.
process.env.WEBHOOK_BACKOFF_MS = '50';
process.env.WEBHOOK_ATTEMPTS = '4';
process.env.WEBHOOK_TIMEOUT_MS = '3000';
// Webhook tests deliver to receivers on 127.0.0.1, an internal address the server refuses unless
// listed (test/ecosystem/outbound.test.ts runs without this list).
process.env.OUTBOUND_ALLOW_HOSTS = '127.0.0.1';
