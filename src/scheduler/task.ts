import Joi from 'joi';
import { runAs } from '../audit/actor';
import { logger } from '../logger';
import { defineJob, type JobDefinition } from '../queue/jobs';
import { QUEUES } from '../queue/names';

/**
 * A housekeeping job of the scheduler worker: no payload, added by its job scheduler every
 * `every()` ms; runs `work` and logs `message` with what it counted when that is not 0. The
 * sweeps read what is due from the database, so a run missed while Redis was away is caught up
 * by the next.
 */
export function housekeeping(name: string, o: { every: () => number; counted: string; message: string; work: () => Promise<number> }): JobDefinition<Record<string, never>> {
  return defineJob({
    name,
    queue: QUEUES.scheduler,
    schema: Joi.object({}),
    options: () => ({ removeOnComplete: 100, removeOnFail: 500 }),
    schedule: { every: o.every },
    async handle() {
      // What a housekeeping job changes is the scheduler's doing (the audit history says so).
      const n = await runAs({ type: 'scheduler', id: null, channel: 'scheduler' }, o.work);
      if (n) logger.info({ [o.counted]: n }, o.message);
      return { [o.counted]: n };
    },
  });
}
