import { config } from '../config';
import { retried } from '../queue/jobs';

/**
 * Every mail job: MAIL_ATTEMPTS attempts, the wait doubling from MAIL_BACKOFF_MS up to
 * MAIL_BACKOFF_MAX_MS (by default 32 attempts over about 24 hours: a help desk keeps its mail
 * through an SMTP outage of hours; a permanent refusal, a 5xx, fails at once: ./deliveries.ts);
 * sent jobs kept a week, failed ones 30 days.
 */
export const mailJobOptions = () => {
  const { attempts, backoffMs, maxBackoffMs } = config().mail;
  return retried(attempts, backoffMs, { age: 7 * 24 * 3600, count: 10000 }, 30, maxBackoffMs);
};
