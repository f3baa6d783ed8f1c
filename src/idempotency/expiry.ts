import { Op } from 'sequelize';
import { config } from '../config';
import { now } from '../db/entity';
import { IdempotencyKey } from '../db/models';
import { housekeeping } from '../scheduler/task';

/** Rows past the time they are kept (lookups already ignore them). */
export async function expireIdempotencyKeys(): Promise<number> {
  return IdempotencyKey.destroy({ where: { created_at: { [Op.lte]: now() - config().idempotency.ttlSeconds } } });
}

export const idempotencyExpiryJob = housekeeping('idempotency.expire', {
  every: () => 3600_000, counted: 'removed', message: 'expired Idempotency-Key responses removed', work: expireIdempotencyKeys,
});
