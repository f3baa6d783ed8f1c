// Imported first by ban.test.ts, before any module reads the configuration: three wrong tokens
// within 10 minutes ban an address for an hour (the defaults, with a smaller count).
process.env.LOGIN_FAILURES_MAX = '3';
process.env.LOGIN_FAILURES_WINDOW_SECONDS = '600';
process.env.LOGIN_BAN_SECONDS = '3600';
