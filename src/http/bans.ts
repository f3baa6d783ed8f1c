import type { RequestHandler } from 'express';
import { select } from '../db/select';
import { now } from '../db/entity';
import { accessVersion, bans, requestAccessVersion } from '../auth/accessCache';
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
  const { banned, whitelisted } = await banStatus(ip, event);
  return banned && !whitelisted;
}

/**
 * Whether an address is banned for `event`, and whether it is whitelisted for it: one query.
 * `versionRead`: the access version when the caller has read it already (requestAccessVersion).
 */
export async function banStatus(
  ip: string, event: BanEvent, versionRead: Promise<string | null> = accessVersion(),
): Promise<{ banned: boolean; whitelisted: boolean }> {
  const column = EVENT_COLUMN[event];
  // "Not barred" is kept per process until a ban or whitelist entry changes anywhere (accessCache);
  // "barred" is asked every time, since a temporary ban stops by its expiry alone.
  const version = await versionRead;
  const cacheKey = `${event} ${ip}`;
  const cached = version !== null ? bans.get(cacheKey, version) : undefined;
  if (cached) return cached;
  const [row] = await select<{ banned: number; whitelisted: number }>(
    `SELECT
       EXISTS(SELECT 1 FROM ip_bans WHERE ip = :ip AND ${column} = 1 AND (type = 1 OR expiry IS NULL OR expiry > :now)) AS banned,
       EXISTS(SELECT 1 FROM ip_whitelist WHERE ip = :ip AND ${column} = 1) AS whitelisted`,
    { ip, now: now() },
  );
  const status = { banned: Number(row.banned) === 1, whitelisted: Number(row.whitelisted) === 1 };
  if (!(status.banned && !status.whitelisted) && version !== null) bans.set(cacheKey, version, status);
  return status;
}

/** 403 for an address banned from the API; notes whether it is whitelisted for it (rate limits skip those). */
export const refuseBanned: RequestHandler = async (req, res, next) => {
  const { banned, whitelisted } = await banStatus(clientIp(req), 'api', requestAccessVersion(res.locals));
  if (banned && !whitelisted) throw new HttpError(403, 'Your IP address is banned from using the API.');
  res.locals.apiWhitelisted = whitelisted;
  next();
};
