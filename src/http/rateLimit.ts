import type { Request, RequestHandler, Response } from 'express';
import { requestAccessVersion } from '../auth/accessCache';
import { knownTokenId } from '../auth/tokens';
import { config } from '../config';
import { now } from '../db/entity';
import { rateLimited } from '../ops/metrics';
import { parseBasic, tokenIdOf } from './auth';
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

type Counted = Promise<{ count: number; resetsIn: number } | null>;

/** A limit: what it counts a request under (`id`), and its check. */
interface Limiter {
  /** Starts counting the request when its key is already known (see startAccessChecks). */
  start(req: Request, res: Response): void;
  check: RequestHandler;
}

/**
 * A limit of `max` requests per window, counted in Redis (the fixed window of redis/windowCounter:
 * it starts with the first request, so every web process shares one count per key). The headers
 * show the limit closest to being reached (per token or per address); beyond a limit, 429 with
 * Retry-After. Addresses whitelisted for the API are never limited. While Redis is unreachable,
 * requests pass uncounted and without the headers (a limit is a defence, not a gate).
 * `early`: the key as it can be told at the start of the request, before the checks.
 */
function limiter(
  kind: 'token' | 'ip', key: (req: Request, res: Response) => string | undefined, max: () => number, early: (req: Request) => string | undefined,
): Limiter {
  const slot = `rateLimit:${kind}`;
  const count = (id: string): Counted => countInWindow(`ratelimit:${kind}:${id}`, config().rateLimit.windowSeconds);
  return {
    start(req, res) {
      if (!max()) return;
      const id = early(req);
      if (id) res.locals[slot] = { id, counted: count(id) };
    },
    async check(req, res, next) {
      const limit = max();
      if (!limit || res.locals.apiWhitelisted) return next();
      const id = key(req, res);
      if (!id) return next();
      const started = res.locals[slot] as { id: string; counted: Counted } | undefined;
      const counted = await (started?.id === id ? started.counted : count(id));
      if (!counted) return next();
      const windowSeconds = config().rateLimit.windowSeconds;
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
    },
  };
}

const ipKey = (req: Request) => clientIp(req) || undefined;
const byIp = limiter('ip', ipKey, () => config().rateLimit.perIp, ipKey);

const byToken = limiter('token', (_req, res) => {
  const id = tokenIdOf(res);
  return id === undefined ? undefined : String(id);
}, () => config().rateLimit.perToken, (req) => {
  const token = parseBasic(req.headers.authorization);
  const id = token ? knownTokenId(token) : undefined;
  return id === undefined ? undefined : String(id);
});

/** Per client address: runs before authentication, so that failed authentications count too. */
export const limitPerIp = byIp.check;

/** Per API token: runs after authentication. */
export const limitPerToken = byToken.check;

/**
 * The first handler of the API: starts, in one tick, the Redis commands the checks after it need
 * (the access version of the ban and token checks, the count per address, and the count per token
 * when this process has verified the token before), which the auto-pipelined connection sends in
 * one write, rather than one round trip per check. A request is counted before its ban is checked
 * (a banned address is refused whatever its count).
 */
export const startAccessChecks: RequestHandler = (req, res, next) => {
  void requestAccessVersion(res.locals);
  byIp.start(req, res);
  byToken.start(req, res);
  next();
};
