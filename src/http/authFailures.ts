import { IpBan, IpWhitelist } from '../db/models';
import { now } from '../db/entity';
import { config } from '../config';
import { logger } from '../logger';
import { countInWindow } from '../redis/windowCounter';

/** 600 → "10 minutes", 3600 → "1 hour", 90 → "90 seconds". */
export function describeSeconds(seconds: number): string {
  const [n, unit] = seconds % 3600 === 0 ? [seconds / 3600, 'hour'] : seconds % 60 === 0 ? [seconds / 60, 'minute'] : [seconds, 'second'];
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/**
 * Counts a failed API authentication from `ip`. The failure that brings the count to exactly
 * LOGIN_FAILURES_MAX within the window creates a temporary API ban, so failures racing past the
 * limit in parallel make one ban; an address whitelisted for the API is never banned. Never
 * throws: a failure to count or to ban must not turn the caller's 401 into something else.
 */
export async function recordAuthFailure(ip: string): Promise<void> {
  const { max, windowSeconds, banSeconds } = config().loginFailures;
  if (max === 0 || !ip) return;
  try {
    const counted = await countInWindow(`authfail:${ip}`, windowSeconds);
    if (counted?.count !== max) return;
    if (await IpWhitelist.count({ where: { ip, event_api: 1 } })) return;
    const ban = await IpBan.create({
      ip, type: 0, event_api: 1, event_user: 0, event_operator: 0, expiry: now() + banSeconds,
      reason: `Automatic: ${max} failed API authentications within ${describeSeconds(windowSeconds)}`,
    });
    logger.warn({ ip, failures: max, windowSeconds, banId: ban.id, expiry: ban.expiry }, 'IP address banned from the API after failed authentications');
  } catch (err) {
    logger.error({ err: { message: (err as Error).message }, ip }, 'could not record a failed API authentication');
  }
}
