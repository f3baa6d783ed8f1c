import { config } from '../config';
import { jobsOn } from '../jobs';
import { QUEUES } from '../queue/names';
import type { WorkerSpec } from '../queue/runWorker';
import { closeTransports } from './transports';
import { recordingDeliveries } from './deliveries';

/** The mail worker: every job that sends mail through a brand's SMTP server. */
export function mailSpec(): WorkerSpec {
  return {
    queue: QUEUES.mail,
    concurrency: config().mail.concurrency,
    jobs: jobsOn(QUEUES.mail).map(recordingDeliveries),
    onClose: async () => closeTransports(),
  };
}
