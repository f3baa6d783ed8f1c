import { config } from '../config';
import { housekeeping } from '../scheduler/task';
import { sweepOutbox } from './outbox';

/** Publishes what a crash or a Redis outage left in the outbox (see sweepOutbox). */
export const outboxSweepJob = housekeeping('outbox.sweep', {
  every: () => config().outbox.sweepEveryMs, counted: 'published', message: 'outbox entries published by the sweep',
  work: () => sweepOutbox(config().outbox.sweepAfterMs, config().outbox.republishAfterMs),
});
