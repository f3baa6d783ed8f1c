import type { RequestHandler } from 'express';
import { QueryTypes } from 'sequelize';
import { sequelize } from '../db/sequelize';
import { now } from '../db/entity';
import { clientIp } from './clientIp';
import { HttpError } from './errors';

/** Where a ban or whitelist entry applies: its event column (a fixed name, never user input). */
const EVENT_COLUMN = { api: 'event_api', user: 'event_user', operator: 'event_operator' } as const;
export type BanEvent = keyof typeof EVENT_COLUMN;

/**
 * Whether an address is barred from `event`: banned for it and not whitelisted for it. A temporary
 * ban past its expiry never applies, whether or not the expiry job has deleted it yet. One query.
 */
export async function isBanned(ip: string, event: BanEvent): Promise<boolean> {
  const column = EVENT_COLUMN[event];
  const [row] = await sequelize().query<{ banned: number; whitelisted: number }>(
    `SELECT
       EXISTS(SELECT 1 FROM ip_bans WHERE ip = :ip AND ${column} = 1 AND (type = 1 OR expiry IS NULL OR expiry > :now)) AS banned,
       EXISTS(SELECT 1 FROM ip_whitelist WHERE ip = :ip AND ${column} = 1) AS whitelisted`,
    { replacements: { ip, now: now() }, type: QueryTypes.SELECT },
  );
  return Number(row.banned) === 1 && Number(row.whitelisted) !== 1;
}

export const refuseBanned: RequestHandler = async (req, _res, next) => {
  if (await isBanned(clientIp(req), 'api')) throw new HttpError(403, 'Your IP address is banned from using the API.');
  next();
};
