import type { RequestHandler } from 'express';
import { clientIp } from './clientIp';
import { HttpError } from './errors';
import { countInWindow } from '../redis/windowCounter';

/**
 * At most `max` requests per client address within `windowSeconds` (read from the configuration
 * at each request), counted in Redis so the limit holds across web processes; beyond it, 429 with
 * Retry-After. Requests pass uncounted while Redis is unreachable.
 */
export function throttle(name: string, limits: () => { max: number; windowSeconds: number }): RequestHandler {
  return async (req, _res, next) => {
    const { max, windowSeconds } = limits();
    const counted = await countInWindow(`throttle:${name}:${clientIp(req)}`, windowSeconds);
    if (counted && counted.count > max) {
      const wait = Math.max(1, counted.resetsIn);
      throw new HttpError(429, `Too many attempts from your IP address. Try again in ${wait} seconds.`, { 'Retry-After': String(wait) });
    }
    next();
  };
}
