// Imported first by smtp-outage.test.ts, before any module reads the configuration: mail retries
// with small waits that are capped early (50 ms doubling, at most 200 ms), and attempts enough to
// outlast the outage the test makes.
process.env.MAIL_ATTEMPTS = '30';
process.env.MAIL_BACKOFF_MS = '50';
process.env.MAIL_BACKOFF_MAX_MS = '200';

export const OUTAGE = { attempts: 30, backoffMs: 50, maxBackoffMs: 200 };
