import type { RequestHandler, Response } from 'express';
import { config } from '../config';
import { now } from '../db/entity';
import { rateLimited } from '../ops/metrics';
import { tokenIdOf } from './auth';
import { clientIp } from './clientIp';
import { HttpError } from './errors';
import { countInWindow } from '../redis/windowCounter';

interface Standing {
  limit: number;
  remaining: number;
  /** UNIX seconds when the window ends. */
  reset: number;
}

const headersOf = (s: Standing): Record<string, string> => ({
  'X-RateLimit-Limit': String(s.limit), 'X-RateLimit-Remaining': String(s.remaining), 'X-RateLimit-Reset': String(s.reset),
});

/**
 * A limit of `max` requests per window, counted in Redis (the fixed window of redis/windowCounter:
 * it starts with the first request, so every web process shares one count per key). The headers
 * show the limit closest to being reached (per token or per address); beyond a limit, 429 with
 * Retry-After. Addresses whitelisted for the API are never limited. While Redis is unreachable,
 * requests pass uncounted and without the headers (a limit is a defence, not a gate).
 */
function limiter(kind: 'token' | 'ip', key: (res: Response, ip: string) => string | undefined, max: () => number): RequestHandler {
  return async (req, res, next) => {
    const limit = max();
    if (!limit || res.locals.apiWhitelisted) return next();
    const ip = clientIp(req);
    const id = key(res, ip);
    if (!id) return next();
    const windowSeconds = config().rateLimit.windowSeconds;
    const counted = await countInWindow(`ratelimit:${kind}:${id}`, windowSeconds);
    if (!counted) return next();
    const standing: Standing = { limit, remaining: Math.max(0, limit - counted.count), reset: now() + Math.max(1, counted.resetsIn) };
    const shown = res.locals.rateLimit as Standing | undefined;
    if (!shown || standing.remaining < shown.remaining) {
      res.locals.rateLimit = standing;
      for (const [k, v] of Object.entries(headersOf(standing))) res.setHeader(k, v);
    }
    if (counted.count > limit) {
      rateLimited.inc({ limit: kind });
      const wait = Math.max(1, counted.resetsIn);
      const who = kind === 'token' ? 'for this API token' : 'from your IP address';
      throw new HttpError(429, `Too many requests ${who}: the limit is ${limit} per ${windowSeconds} seconds. Try again in ${wait} seconds.`, {
        ...headersOf(standing), 'Retry-After': String(wait),
      });
    }
    return next();
  };
}

/** Per client address: runs before authentication, so that failed authentications count too. */
export const limitPerIp = limiter('ip', (_res, ip) => ip || undefined, () => config().rateLimit.perIp);

/** Per API token: runs after authentication. */
export const limitPerToken = limiter('token', (res) => {
  const id = tokenIdOf(res);
  return id === undefined ? undefined : String(id);
}, () => config().rateLimit.perToken);
