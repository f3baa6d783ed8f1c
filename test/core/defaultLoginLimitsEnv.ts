// Imported first by auth-bans.test.ts: the automatic ban at its defaults (test/helpers/env.ts
// raises the limit for every other file), before any module reads the configuration.
delete process.env.LOGIN_FAILURES_MAX;
delete process.env.LOGIN_FAILURES_WINDOW_SECONDS;
delete process.env.LOGIN_BAN_SECONDS;
