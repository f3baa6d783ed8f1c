// Imported first by auth-bans-no-redis.test.ts: a Redis address where nothing listens, before
// any module reads the configuration.
process.env.REDIS_URL = 'redis://127.0.0.1:1';
delete process.env.LOGIN_FAILURES_MAX;
