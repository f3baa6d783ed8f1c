import type { Request, RequestHandler, Response } from 'express';
import { banVersion, tokenVersion } from '../auth/accessCache';
import { knownTokenId } from '../auth/tokens';
import { config } from '../config';
import { now } from '../db/entity';
import { snapshotOf, versionNames } from '../db/versionedCache';
import { rateLimited } from '../ops/metrics';
import { credentialsOf, tokenHashOf, tokenIdOf } from './auth';
import { clientIp } from './clientIp';
import { HttpError } from './errors';
import { countInWindow, readAndCount } from '../redis/windowCounter';

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
  /** The id the request is counted under when it is known at its start (see startAccessChecks), and its counter's key. */
  early(req: Request): { id: string; key: string } | undefined;
  /** Starts counting the request under `id` (early), or with `counted`: a count already under way. */
  start(res: Response, id: string, counted?: Counted): void;
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
  const keyOf = (id: string) => `ratelimit:${kind}:${id}`;
  const count = (id: string): Counted => countInWindow(keyOf(id), config().rateLimit.windowSeconds);
  return {
    early(req) {
      if (!max()) return undefined;
      const id = early(req);
      return id ? { id, key: keyOf(id) } : undefined;
    },
    start(res, id, counted = count(id)) {
      res.locals[slot] = { id, counted };
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
  const credentials = credentialsOf(req);
  const id = credentials.token ? knownTokenId(credentials.token, tokenHashOf(credentials)) : undefined;
  return id === undefined ? undefined : String(id);
});

/** Per client address: runs before authentication, so that failed authentications count too. */
export const limitPerIp = byIp.check;

/** Per API token: runs after authentication. */
export const limitPerToken = byToken.check;

/**
 * The first handler of the API: starts what the request needs from Redis (the cache versions:
 * those of the ban and token checks, those of the caches its work consults; the
 * count per address, and the count per token when this process has verified the token before)
 * in one command (readAndCount), rather than a command and a round trip per check and cache;
 * where that cannot be one command (a cluster: the keys are in different slots; Redis not
 * connected), the ban and token versions and the counts in one tick, which the auto-pipelined connection
 * sends in one write, and each other version when first needed. A request is counted before its
 * ban is checked (a banned address is refused whatever its count).
 */
export const startAccessChecks: RequestHandler = (req, res, next) => {
  const limits = [[byIp, byIp.early(req)], [byToken, byToken.early(req)]] as const;
  const counted = limits.filter(([, early]) => early !== undefined);
  const names = versionNames();
  const started = counted.length
    ? readAndCount([...names], counted.map(([, early]) => early!.key), config().rateLimit.windowSeconds)
    : undefined;
  if (started) {
    res.locals.versions = snapshotOf(started.read, names);
    counted.forEach(([limit, early], i) => limit.start(res, early!.id, started.counts[i]));
  } else {
    void banVersion(res.locals);
    void tokenVersion(res.locals);
    for (const [limit, early] of counted) limit.start(res, early!.id);
  }
  next();
};
