import Joi from 'joi';
import { defineJob } from '../queue/jobs';
import { QUEUES } from '../queue/names';
import { pollMailbox } from './poll';

/** The job id of a mailbox's poll: while one is waiting or running, adding another is a no-op. */
export const pollJobId = (departmentEmailId: number) => `poll-${departmentEmailId}`;

/**
 * One poll of one department mailbox. Not retried (the next round polls again), and gone once
 * finished, so that its job id never blocks the next round's poll.
 */
export const mailboxPollJob = defineJob<{ departmentEmailId: number }>({
  name: 'mailbox.poll',
  queue: QUEUES.mailbox,
  schema: Joi.object({ departmentEmailId: Joi.number().integer().min(1).required() }),
  options: () => ({ removeOnComplete: true, removeOnFail: true, attempts: 1 }),
  handle: ({ departmentEmailId }) => pollMailbox(departmentEmailId),
});
