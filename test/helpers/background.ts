import { QueryTypes } from 'sequelize';
import { OutboxEntry } from '../../src/db/models';
import { QUEUES } from '../../src/queue/names';
import { queue } from '../../src/queue/producer';

/**
 * Where this jest worker's background work stands: its outbox entries by state and the jobs of
 * every queue by state. Any change is progress (a mail sent, a retry scheduled, a mailbox polled,
 * a webhook delivered). Jobs of earlier files of the worker count too: the workers are busy with
 * them before they get to the test's own. 'unknown' when the file has no database, or while
 * MariaDB or Redis is away (the outage tests): then no progress is seen.
 */
export async function backgroundProgress(): Promise<unknown> {
  if (!OutboxEntry.sequelize) return 'unknown';
  const probe = (async () => {
    const [outbox] = await OutboxEntry.sequelize!.query(
      'SELECT COUNT(*) AS n, COUNT(published_at) AS published, COUNT(processed_at) AS processed, COUNT(failed_at) AS failed FROM outbox',
      { type: QueryTypes.SELECT },
    );
    const jobs = await Promise.all(Object.values(QUEUES).map((name) => queue(name).getJobCounts('wait', 'active', 'delayed', 'prioritized', 'completed', 'failed')));
    return { outbox, jobs };
  })();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => { timer = setTimeout(() => resolve('unknown'), 2000); });
  try {
    return await Promise.race([probe.catch(() => 'unknown'), late]);
  } finally {
    clearTimeout(timer);
  }
}
