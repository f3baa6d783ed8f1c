import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { mountRoutes, type RecordedRouter, type RouteRecord } from './routes';

/** A route's method and path as Express matches them (case-insensitive, an optional trailing slash). */
interface Matcher { method: RouteRecord['method']; pattern: RegExp }

/** A router's routes under one first path segment, or `null` for a path this module cannot read. */
type Routers = Array<{ router: RecordedRouter; matchers: Matcher[] | null }>;

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The matcher of a recorded path made of literal and `:name` segments (every path the API
 * declares); null for any other syntax (`*`, `{...}`), which is then tried as Express would.
 */
function matcherOf(path: string): RegExp | null {
  if (!path.startsWith('/') || /[*{}()?+\\]/.test(path)) return null;
  const parts = path.slice(1).split('/').map((part) => (/^:[A-Za-z_$][\w$]*$/.test(part) ? '[^/]+' : /^[^:]*$/.test(part) ? escape(part) : null));
  if (parts.includes(null)) return null;
  return new RegExp(`^/${parts.join('/')}/?$`, 'i');
}

/** The first segment of a path, lower-cased (`/ticket/5` → `ticket`). */
function firstSegment(path: string): string {
  const end = path.indexOf('/', 1);
  return (end < 0 ? path.slice(1) : path.slice(1, end)).toLowerCase();
}

/**
 * The router of an API area (`/api/<area>`): its resources' routers, in their order, with their
 * routes recorded under the area's prefix (mountRoutes).
 *
 * Express would walk the routers one by one: each is mounted at `/`, tests its routes and, when
 * none matches, hands the request to the next router a turn of the event loop later
 * (`setImmediate`), so a request for the area's twentieth resource waited nineteen turns behind
 * everything else the process had to do. Here a request starts at the first router that records a
 * route for its method and path, and goes on to the routers after it, in their order, only if
 * that one does not answer (the order decides between overlapping routes as before). A request no
 * recorded route matches (a 404, `OPTIONS`, a method the path does not have) walks every router,
 * as it did. A router must record every route it serves (routes.ts; test/http/dispatch.test.ts
 * checks every area).
 */
export function areaRouter(prefix: string, routers: RecordedRouter[]): RequestHandler & { routers: readonly RecordedRouter[] } {
  mountRoutes(prefix, routers);
  const bySegment = new Map<string, Routers>();
  const unreadable: Routers = [];
  routers.forEach((router) => {
    const matchers = router.routes.map((r) => ({ method: r.method, pattern: matcherOf(r.path), segment: firstSegment(r.path) }));
    if (matchers.some((m) => m.pattern === null)) {
      unreadable.push({ router, matchers: null });
      return;
    }
    for (const segment of new Set(matchers.map((m) => m.segment))) {
      const list = bySegment.get(segment) ?? [];
      list.push({ router, matchers: matchers.filter((m) => m.segment === segment) as Matcher[] });
      bySegment.set(segment, list);
    }
  });
  // A router this module cannot read may serve any path: it is a candidate for every request, at its place.
  const order = new Map(routers.map((r, i) => [r, i]));
  const candidatesOf = (list: Routers) => [...list, ...unreadable].sort((a, b) => order.get(a.router)! - order.get(b.router)!);
  for (const [segment, list] of bySegment) bySegment.set(segment, candidatesOf(list));
  const none = candidatesOf([]);

  const startOf = (method: string, path: string): number => {
    const candidates = bySegment.get(firstSegment(path)) ?? none;
    const asked = method === 'HEAD' ? 'GET' : method; // Express answers HEAD with a GET route
    const found = candidates.find(({ matchers }) => matchers === null || matchers.some((m) => m.method === asked && m.pattern.test(path)));
    return found ? order.get(found.router)! : 0;
  };

  const handler: RequestHandler = (req, res, next) => {
    let i = startOf(req.method, req.path);
    const step = (err?: unknown): void => {
      if (err) return next(err);
      const router = routers[i++];
      if (!router) return next();
      router(req, res, step);
    };
    step();
  };
  return Object.assign(handler, { routers });
}

/**
 * `handler` (a router of absolute paths) for the requests under one of `paths` (the path itself or
 * below it, compared as Express does: case-insensitive); every other request goes straight on.
 * Mounted at `/` instead, the router would take every API request in and hand it back a turn of
 * the event loop later.
 */
export function onlyUnder(paths: string[], handler: RequestHandler): RequestHandler {
  const lower = paths.map((p) => p.toLowerCase());
  return (req, res, next) => {
    const path = req.path.toLowerCase();
    if (lower.some((p) => path === p || path.startsWith(`${p}/`))) runAll([handler], req, res, next);
    else next();
  };
}

/** Runs `handlers` one after the other as Express would (an error, thrown, rejected or passed, goes to `done`). */
export function runAll(handlers: readonly RequestHandler[], req: Request, res: Response, done: NextFunction): void {
  let i = 0;
  const step = (err?: unknown): void => {
    if (err) return done(err);
    const handler = handlers[i++];
    if (!handler) return done();
    try {
      const result = handler(req, res, step) as unknown;
      if (result instanceof Promise) result.catch((e: unknown) => step(e ?? new Error('Rejected promise')));
    } catch (thrown) {
      step(thrown ?? new Error('Thrown undefined'));
    }
  };
  step();
}

/**
 * `handlers` as one middleware (runAll): one layer of a router instead of one each, so Express
 * matches, wraps and dispatches once for the whole sequence.
 */
export const inSequence = (...handlers: RequestHandler[]): RequestHandler => (req, res, next) => runAll(handlers, req, res, next);
