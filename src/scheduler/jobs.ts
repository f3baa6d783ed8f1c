import { config } from '../config';
import { expireBans } from '../core/banExpiry';
import { logger } from '../logger';
import { QUEUES } from '../queue/names';
import type { WorkerSpec } from '../queue/runWorker';
import { sequelize } from '../db/sequelize';

/** Housekeeping on a schedule. Job schedulers are upserted on every boot, so one runs per interval. */
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
    ],
    schedules: [{ id: 'bans-expire', every: config().banExpiryEveryMs, job: 'bans.expire' }],
    onClose: () => sequelize().close(),
  };
}
