import type { RequestHandler } from 'express';
import { select } from '../db/select';
import { now } from '../db/entity';
import { banVersion, bans } from '../auth/accessCache';
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
 * `versionRead`: the ban version when the caller has read it already (banVersion(res.locals)).
 */
export async function banStatus(
  ip: string, event: BanEvent, versionRead: Promise<string | null> = banVersion(),
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

/**
 * When the bans of an address in force for `event` end: the latest expiry, `permanent` when one
 * of them never ends, null when none is in force (any more).
 */
export async function banEnds(ip: string, event: BanEvent): Promise<number | 'permanent' | null> {
  const column = EVENT_COLUMN[event];
  const [row] = await select<{ bans: number; permanent: number | null; ends: number | null }>(
    `SELECT COUNT(*) AS bans, MAX(type = 1 OR expiry IS NULL) AS permanent, MAX(expiry) AS ends
       FROM ip_bans WHERE ip = :ip AND ${column} = 1 AND (type = 1 OR expiry IS NULL OR expiry > :now)`,
    { ip, now: now() },
  );
  if (!row || Number(row.bans) === 0) return null;
  return Number(row.permanent) === 1 ? 'permanent' : Number(row.ends);
}

/** `3599` → `60 minutes`, `45` → `45 seconds`: rounded up, in a unit that keeps it readable. */
function timeLeft(seconds: number): string {
  const [n, unit] = seconds < 60 ? [seconds, 'second'] : seconds < 2 * 3600 ? [Math.ceil(seconds / 60), 'minute']
    : seconds < 2 * 86400 ? [Math.ceil(seconds / 3600), 'hour'] : [Math.ceil(seconds / 86400), 'day'];
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/**
 * The 403 of a banned address: the first sentence is what clients have always matched; then until
 * when, and how an administrator lifts the ban (the automatic ban after failed authentications is
 * easy to run into on a developer's own machine, whose only API client is then the banned one).
 */
export function bannedMessage(ip: string, ends: number | 'permanent', at = now()): string {
  const until = ends === 'permanent' ? 'The ban is permanent.'
    : `The ban ends at ${new Date(ends * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z')} (in ${timeLeft(Math.max(1, ends - at))}).`;
  return `Your IP address is banned from using the API. ${until} An administrator can lift it: \`npm run ban -- delete ${ip}\` on the server, or DELETE /api/core/ipban/{id}.`;
}

/** 403 for an address banned from the API; notes whether it is whitelisted for it (rate limits skip those). */
export const refuseBanned: RequestHandler = async (req, res, next) => {
  const ip = clientIp(req);
  const { banned, whitelisted } = await banStatus(ip, 'api', banVersion(res.locals));
  // The end is looked up for a refusal only (a ban that expired in between ends now).
  if (banned && !whitelisted) throw new HttpError(403, bannedMessage(ip, (await banEnds(ip, 'api')) ?? now()));
  res.locals.apiWhitelisted = whitelisted;
  next();
};
