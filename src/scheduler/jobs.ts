import { config } from '../config';
import { expireBans } from '../core/banExpiry';
import { logger } from '../logger';
import { QUEUES } from '../queue/names';
import type { WorkerSpec } from '../queue/runWorker';
import { sweepOutbox } from '../queue/outbox';
import { expireIdempotencyKeys } from '../http/idempotency';
import { closeInactiveTickets, sendFeedbackRequests } from '../ticket/housekeeping';

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
      {
        name: 'bans.expire',
        async handle() {
          const removed = await expireBans();
          if (removed) logger.info({ removed }, 'expired temporary IP bans removed');
          return { removed };
        },
      },
      {
        name: 'outbox.sweep',
        async handle() {
          const published = await sweepOutbox(config().outbox.sweepAfterMs, config().outbox.republishAfterMs);
          if (published) logger.info({ published }, 'outbox entries published by the sweep');
          return { published };
        },
      },
      {
        name: 'tickets.autoclose',
        async handle() {
          const closed = await closeInactiveTickets();
          if (closed) logger.info({ closed }, 'inactive tickets closed');
          return { closed };
        },
      },
      {
        name: 'tickets.feedback',
        async handle() {
          const requested = await sendFeedbackRequests();
          if (requested) logger.info({ requested }, 'feedback requests made');
          return { requested };
        },
      },
      {
        name: 'idempotency.expire',
        async handle() {
          const removed = await expireIdempotencyKeys();
          if (removed) logger.info({ removed }, 'expired Idempotency-Key responses removed');
          return { removed };
        },
      },
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
