// Imported first by messageIdFirst.test.ts, before any module reads the configuration: mail jobs
// retry within 200 ms, with attempts enough (a minute and more of them) to outlast the failures
// the test makes until it ends them.
process.env.MAIL_ATTEMPTS = '500';
process.env.MAIL_BACKOFF_MS = '20';
process.env.MAIL_BACKOFF_MAX_MS = '200';
