import { config } from '../config';
import { retried } from '../queue/jobs';

/** Every mail job: MAIL_ATTEMPTS attempts, MAIL_BACKOFF_MS doubling; sent jobs kept a week. */
export const mailJobOptions = () => retried(config().mail.attempts, config().mail.backoffMs, { age: 7 * 24 * 3600, count: 10000 });
