import type { RequestHandler } from 'express';
import { QueryTypes } from 'sequelize';
import { sequelize } from '../db/sequelize';
import { now } from '../db/entity';
import { clientIp } from './clientIp';
import { HttpError } from './errors';

/**
 * Whether an address is barred from the API: banned with `event_api` and not whitelisted with
 * `event_api`. A temporary ban past its expiry never applies, whether or not the expiry job has
 * deleted it yet. One query.
 */
export async function isBannedFromApi(ip: string): Promise<boolean> {
  const [row] = await sequelize().query<{ banned: number; whitelisted: number }>(
    `SELECT
       EXISTS(SELECT 1 FROM ip_bans WHERE ip = :ip AND event_api = 1 AND (type = 1 OR expiry IS NULL OR expiry > :now)) AS banned,
       EXISTS(SELECT 1 FROM ip_whitelist WHERE ip = :ip AND event_api = 1) AS whitelisted`,
    { replacements: { ip, now: now() }, type: QueryTypes.SELECT },
  );
  return Number(row.banned) === 1 && Number(row.whitelisted) !== 1;
}

export const refuseBanned: RequestHandler = async (req, _res, next) => {
  if (await isBannedFromApi(clientIp(req))) throw new HttpError(403, 'Your IP address is banned from using the API.');
  next();
};
