import { config } from '../config';
import { expireBans } from '../core/banExpiry';
import { logger } from '../logger';
import { QUEUES } from '../queue/names';
import type { WorkerSpec } from '../queue/runWorker';
import { sweepOutbox } from '../queue/outbox';

/** Housekeeping on a schedule: ban expiry and the outbox sweep. Job schedulers are upserted on every boot, so one runs per interval. */
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
    ],
    schedules: [
      { id: 'bans-expire', every: config().banExpiryEveryMs, job: 'bans.expire' },
      { id: 'outbox-sweep', every: config().outbox.sweepEveryMs, job: 'outbox.sweep' },
    ],

  };
}
