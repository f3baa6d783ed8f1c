import { Op } from 'sequelize';
import { config } from '../config';
import { IpBan } from '../db/models';
import { now } from '../db/entity';
import { housekeeping } from '../scheduler/task';

/** Deletes temporary bans past their expiry (they already stopped applying at that moment). */
export async function expireBans(): Promise<number> {
  return IpBan.destroy({ where: { type: 0, expiry: { [Op.lte]: now() } } });
}

export const banExpiryJob = housekeeping('bans.expire', {
  every: () => config().banExpiryEveryMs, counted: 'removed', message: 'expired temporary IP bans removed', work: expireBans,
});
