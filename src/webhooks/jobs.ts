import { config } from '../config';
import { jobsOn } from '../jobs';
import { QUEUES } from '../queue/names';
import type { WorkerSpec } from '../queue/runWorker';

/** The webhooks worker: deliveries of events to subscribed URLs. */
export function webhooksSpec(): WorkerSpec {
  return { queue: QUEUES.webhooks, concurrency: config().webhooks.concurrency, jobs: jobsOn(QUEUES.webhooks) };
}
