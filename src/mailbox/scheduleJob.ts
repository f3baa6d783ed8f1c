import Joi from 'joi';
import { config } from '../config';
import { logger } from '../logger';
import { defineJob } from '../queue/jobs';
import { QUEUES } from '../queue/names';
import { queue } from '../queue/producer';
import { dueMailboxes } from './poll';
import { mailboxPollJob, pollJobId } from './pollJob';

/**
 * Queues a poll for every remote mailbox that is due. Mailboxes added, changed or removed through
 * the API are seen at the next round, with no restart; a poll still waiting or running is not
 * queued twice (its job id), and finished polls leave no job behind to block the next.
 */
export async function schedulePolls(): Promise<number> {
  const ids = await dueMailboxes();
  if (!ids.length) return 0;
  await queue(mailboxPollJob.queue).addBulk(ids.map((id) => ({
    name: mailboxPollJob.name, data: { departmentEmailId: id }, opts: { ...mailboxPollJob.options(), jobId: pollJobId(id) },
  })));
  return ids.length;
}

/** Every MAILBOX_POLL_EVERY_MS: the polls of the mailboxes that are due. */
export const mailboxScheduleJob = defineJob<Record<string, never>>({
  name: 'mailbox.schedule',
  queue: QUEUES.mailbox,
  schema: Joi.object({}),
  options: () => ({ removeOnComplete: 100, removeOnFail: 500 }),
  schedule: { every: () => config().mailbox.pollEveryMs },
  // A mailbox changed a moment ago is seen a round later; a poll queued twice is harmless.
  readsFromReplica: true,
  async handle() {
    const queued = await schedulePolls();
    if (queued) logger.debug({ queued }, 'mailbox polls queued');
    return { queued };
  },
});
