// Runs before each test file's imports: every jest worker gets its own database and Redis prefix,
// so files running in parallel never see each other's records or jobs.
const worker = process.env.JEST_WORKER_ID ?? '1';
const server = (process.env.TEST_DATABASE_SERVER ?? 'mariadb://root@127.0.0.1:3306').replace(/\/+$/, '');
process.env.NODE_ENV = 'test';
process.env.DATABASE_URL = `${server}/helpdesk_test_${worker}`;
process.env.QUEUE_PREFIX = `helpdesk_test_${worker}`;
process.env.REDIS_URL ??= 'redis://127.0.0.1:6379';
// Requests may name their client address (X-Forwarded-For) so ban tests can call from any IP.
process.env.TRUST_PROXY = 'loopback';
