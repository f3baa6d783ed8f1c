import { config } from '../config';
import { logger } from '../logger';
import { QUEUES } from '../queue/names';
import { queue } from '../queue/producer';
import type { WorkerSpec } from '../queue/runWorker';
import { dueMailboxes, pollMailbox } from './poll';

export const POLL_JOB = 'mailbox.poll';

/** The job id of a mailbox's poll: while one is waiting or running, adding another is a no-op. */
export const pollJobId = (departmentEmailId: number) => `poll-${departmentEmailId}`;

/**
 * Queues a poll for every remote mailbox that is due. Mailboxes added, changed or removed through
 * the API are seen at the next round, with no restart; a poll still waiting or running is not
 * queued twice (its job id), and finished polls leave no job behind to block the next.
 */
export async function schedulePolls(): Promise<number> {
  const ids = await dueMailboxes();
  if (!ids.length) return 0;
  await queue(QUEUES.mailbox).addBulk(ids.map((id) => ({
    name: POLL_JOB, data: { departmentEmailId: id }, opts: { jobId: pollJobId(id), removeOnComplete: true, removeOnFail: true, attempts: 1 },
  })));
  return ids.length;
}

/**
 * The mailbox worker: one job scheduler entry (`mailbox.schedule`, every MAILBOX_POLL_EVERY_MS)
 * queues the polls, and MAILBOX_CONCURRENCY polls run at once, so one slow or broken mailbox
 * never holds up the others.
 */
export function mailboxSpec(): WorkerSpec {
  return {
    queue: QUEUES.mailbox,
    concurrency: config().mailbox.concurrency,
    jobs: [
      {
        name: 'mailbox.schedule',
        async handle() {
          const queued = await schedulePolls();
          if (queued) logger.debug({ queued }, 'mailbox polls queued');
          return { queued };
        },
      },
      {
        name: POLL_JOB,
        async handle(payload: unknown) {
          const id = Number((payload as { departmentEmailId?: unknown })?.departmentEmailId);
          if (!Number.isSafeInteger(id) || id < 1) return { skipped: 'no mailbox id' };
          return pollMailbox(id);
        },
      },
    ],
    schedules: [{ id: 'mailbox-schedule', every: config().mailbox.pollEveryMs, job: 'mailbox.schedule' }],
    // A running poll renews its lock every 5 s. A poll whose worker died holds its job id (and so
    // its mailbox) until the lock lapses and the stalled check hands it on: both are kept short,
    // since running a poll again is harmless (every mail imports once).
    options: { lockDuration: 10_000, stalledInterval: 5_000 },
  };
}
