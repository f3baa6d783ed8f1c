import { config } from '../config';
import { expireBans } from '../core/banExpiry';
import { logger } from '../logger';
import { jobsOn } from '../jobs';
import { QUEUES } from '../queue/names';
import type { TaskDefinition, WorkerSpec } from '../queue/runWorker';
import { sweepOutbox } from '../queue/outbox';
import { expireIdempotencyKeys } from '../http/idempotency';
import { closeInactiveTickets, sendFeedbackRequests } from '../ticket/housekeeping';

/** A housekeeping job: runs `work`, and logs `message` with what it counted when that is not 0. */
function task(name: string, counted: string, work: () => Promise<number>, message: string): TaskDefinition {
  return {
    name,
    async handle() {
      const n = await work();
      if (n) logger.info({ [counted]: n }, message);
      return { [counted]: n };
    },
  };
}

/**
 * Housekeeping on a schedule: ban expiry, the outbox sweep, expired Idempotency-Key responses,
 * closing inactive tickets and feedback requests. Job schedulers are upserted on every boot (and Redis reconnection), so one runs per
 * interval; the ticket sweeps read what is due from the database, so a run missed while Redis
 * was away is caught up by the next.
 */
export function schedulerSpec(): WorkerSpec {
  return {
    queue: QUEUES.scheduler,
    jobs: [
      task('bans.expire', 'removed', expireBans, 'expired temporary IP bans removed'),
      task('outbox.sweep', 'published', () => sweepOutbox(config().outbox.sweepAfterMs, config().outbox.republishAfterMs), 'outbox entries published by the sweep'),
      task('tickets.autoclose', 'closed', () => closeInactiveTickets(), 'inactive tickets closed'),
      task('tickets.feedback', 'requested', () => sendFeedbackRequests(), 'feedback requests made'),
      task('idempotency.expire', 'removed', expireIdempotencyKeys, 'expired Idempotency-Key responses removed'),
      // Jobs other areas define on this queue (bulk ticket changes).
      ...jobsOn(QUEUES.scheduler),
    ],
    schedules: [
      { id: 'bans-expire', every: config().banExpiryEveryMs, job: 'bans.expire' },
      { id: 'outbox-sweep', every: config().outbox.sweepEveryMs, job: 'outbox.sweep' },
      { id: 'tickets-autoclose', every: config().ticketSweepEveryMs, job: 'tickets.autoclose' },
      { id: 'tickets-feedback', every: config().ticketSweepEveryMs, job: 'tickets.feedback' },
      { id: 'idempotency-expire', every: 3600_000, job: 'idempotency.expire' },
    ],
  };
}
