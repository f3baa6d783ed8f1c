// Imported first by auth-bans-limits.test.ts: a small limit, a short window and a short ban,
// before any module reads the configuration.
process.env.LOGIN_FAILURES_MAX = '3';
process.env.LOGIN_FAILURES_WINDOW_SECONDS = '2';
process.env.LOGIN_BAN_SECONDS = '120';
