import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { RequestHandler, Router } from 'express';
import { isConnectionError } from '../lib/serviceErrors';
import { logger } from '../logger';
import { QUEUES } from '../queue/names';
import { queue } from '../queue/producer';

export const DASHBOARD_PATH = '/admin/queues';

/**
 * What the dashboard's page may load: its own scripts, styles, images and API, nothing from
 * elsewhere. Inline styles stay allowed (the page's loading indicator and React use them); inline
 * scripts do not (its only inline script is a JSON data block, which is never executed).
 */
export const DASHBOARD_CSP = [
  "default-src 'self'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data:", "font-src 'self' data:",
  "connect-src 'self'", "object-src 'none'", "base-uri 'self'", "form-action 'self'", "frame-ancestors 'none'",
].join('; ');

/** Frame protection and the policy above on every dashboard response (401 and 403 included). */
export const dashboardHeaders: RequestHandler = (req, res, next) => {
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Content-Security-Policy', DASHBOARD_CSP);
  // The page and its API show job data; only the versioned static files may be cached.
  if (!req.path.startsWith('/static/')) res.setHeader('Cache-Control', 'no-store');
  next();
};

/** A `<link>` to another origin: Bull Board's page asks Google Fonts for its typefaces. */
const EXTERNAL_LINK = /<link\b[^>]*\bhref="(?:https?:)?\/\/[^"]*"[^>]*>\s*/gi;

/**
 * Serves Bull Board's page without links to other origins, so opening the dashboard tells no
 * third party about it (the text falls back to the system fonts). Only HTML documents are
 * touched: job data in the JSON API stays as it is.
 */
const withoutExternalLinks: RequestHandler = (_req, res, next) => {
  const send = res.send.bind(res);
  res.send = ((body?: unknown) => send(typeof body === 'string' && /^\s*<!doctype html/i.test(body) ? body.replace(EXTERNAL_LINK, '') : body)) as typeof res.send;
  next();
};

/**
 * Bull Board's answer when one of its API handlers fails. Its own answered 500 with whatever the
 * error said; here Redis out of reach is a 503 that says so, anything else a 500 that names no
 * internals (the error goes to the log). The body is the API's envelope, plus the `error.key`
 * Bull Board's page reads to show a failure.
 */
function dashboardError(error: Error & { statusCode?: number }): { status: number; body: Record<string, unknown> } {
  const body = (status: number, message: string) => ({ status, body: { status: 'error', message, data: null, error: { key: 'ERRORS.INTERNAL_SERVER_ERROR' } } });
  if (isConnectionError(error)) {
    logger.warn({ reason: error.message }, 'queue dashboard: Redis unreachable');
    return body(503, 'The queues cannot be read: Redis is unreachable. Try again once it is back (REDIS_URL).');
  }
  if (error.statusCode && error.statusCode < 500) return body(error.statusCode, error.message);
  logger.error({ err: error }, 'queue dashboard failed');
  return body(500, 'The queue dashboard failed; the server log has the details.');
}

/** Bull Board over every queue of the project (mounted behind the API's token auth). */
export function dashboardRouter(): Router[] {
  const adapter = new ExpressAdapter();
  adapter.setBasePath(DASHBOARD_PATH);
  createBullBoard({ queues: Object.values(QUEUES).map((name) => new BullMQAdapter(queue(name))), serverAdapter: adapter });
  // After createBullBoard, which sets its own. (Its type allows no 503; the adapter sends any status.)
  adapter.setErrorHandler(dashboardError as unknown as Parameters<ExpressAdapter['setErrorHandler']>[0]);
  const board = adapter.getRouter();
  // Bull Board runs an Express app of its own, which would announce itself in X-Powered-By.
  board.disable('x-powered-by');
  return [withoutExternalLinks, board];
}
