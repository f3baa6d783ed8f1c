import { randomUUID } from 'node:crypto';
import { Op } from 'sequelize';
import { IpBan, IpWhitelist } from '../db/models';
import { now } from '../db/entity';
import { config } from '../config';
import { logger } from '../logger';
import { countInWindow, counterClient } from '../redis/windowCounter';

/** How long a failure may hold the claim to ban an address (it is released when the ban is written). */
const CLAIM_MS = 5000;
const RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

/** 600 → "10 minutes", 3600 → "1 hour", 90 → "90 seconds". */
export function describeSeconds(seconds: number): string {
  const [n, unit] = seconds % 3600 === 0 ? [seconds / 3600, 'hour'] : seconds % 60 === 0 ? [seconds / 60, 'minute'] : [seconds, 'second'];
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/** An API ban of the address that is in force (a temporary one not yet expired). */
const activeApiBan = (ip: string) => IpBan.findOne({
  attributes: ['id'], where: { ip, event_api: 1, [Op.or]: [{ type: 1 }, { expiry: null }, { expiry: { [Op.gt]: now() } }] },
});

/**
 * Counts a failed API authentication from `ip`. Every failure that brings the count within the
 * window to LOGIN_FAILURES_MAX or beyond bans the address from the API (a temporary ban) unless a
 * ban is in force: so an address whose ban an integrator deleted is banned again at its next
 * failure, not left guessing until the window ends. Failures racing past the limit in parallel
 * make one ban: each takes a short claim in Redis before it looks for a ban and writes one, and
 * one that finds the claim taken leaves the ban to its holder. An address whitelisted for the API
 * is never banned. Never throws: a failure to count or to ban must not turn the caller's 401 into
 * something else.
 */
export async function recordAuthFailure(ip: string): Promise<void> {
  const { max, windowSeconds, banSeconds } = config().loginFailures;
  if (max === 0 || !ip) return;
  try {
    const counted = await countInWindow(`authfail:${ip}`, windowSeconds);
    if (!counted || counted.count < max) return;
    if (await IpWhitelist.count({ where: { ip, event_api: 1 } })) return;
    const claim = `${config().queuePrefix}:authban:${ip}`;
    const owner = randomUUID();
    const claimed = await counterClient().set(claim, owner, 'PX', CLAIM_MS, 'NX').then((r) => r === 'OK', () => null);
    if (claimed === false) return;
    // Redis just counted but cannot take the claim: the failure that reached the limit still bans.
    if (claimed === null && counted.count !== max) return;
    try {
      if (await activeApiBan(ip)) return;
      const ban = await IpBan.create({
        ip, type: 0, event_api: 1, event_user: 0, event_operator: 0, expiry: now() + banSeconds,
        reason: `Automatic: ${max} failed API authentications within ${describeSeconds(windowSeconds)}`,
      });
      logger.warn({ ip, failures: counted.count, windowSeconds, banId: ban.id, expiry: ban.expiry }, 'IP address banned from the API after failed authentications');
    } finally {
      // Released once the ban is committed (no transaction: IpBan.create commits), so the next
      // claimant sees it.
      if (claimed) await counterClient().eval(RELEASE, 1, claim, owner).catch(() => undefined);
    }
  } catch (err) {
    logger.error({ err: { message: (err as Error).message }, ip }, 'could not record a failed API authentication');
  }
}
