import { Op } from 'sequelize';
import { IpBan } from '../db/models';
import { now } from '../db/entity';

/** Deletes temporary bans past their expiry (they already stopped applying at that moment). */
export async function expireBans(): Promise<number> {
  return IpBan.destroy({ where: { type: 0, expiry: { [Op.lte]: now() } } });
}
