// Imported first by rate-limit.test.ts, before any module reads the configuration: small limits
// and a short window (test/helpers/env.ts sets them out of every other test's way).
process.env.RATE_LIMIT_PER_TOKEN = '5';
process.env.RATE_LIMIT_PER_IP = '8';
process.env.RATE_LIMIT_WINDOW_SECONDS = '2';
