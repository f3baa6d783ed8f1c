// Imported first by request-log.test.ts: the logger writes at info level (tests are otherwise
// silent), before any module reads the configuration.
process.env.LOG_LEVEL = 'info';
