import type { Request, RequestHandler } from 'express';
import { config } from '../config';
import { sendError } from './envelope';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The hosts (with port) this server answers as: the request's Host (and X-Forwarded-Host behind a trusted proxy), and APP_URL's. */
function ownHosts(req: Request): string[] {
  const hosts = [req.headers.host, req.host, new URL(config().appUrl).host];
  return hosts.filter((h): h is string => Boolean(h)).map((h) => h.toLowerCase());
}

function crossSiteOrigin(req: Request): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return false;
  let host: string;
  try {
    host = new URL(origin).host.toLowerCase(); // `null` (sandboxed frames, file:) does not parse: cross-site
  } catch {
    return true;
  }
  return !ownHosts(req).includes(host);
}

/**
 * A browser holding the token (the dashboard asks for it with `WWW-Authenticate: Basic`) sends it
 * along with any form another site makes it post. A state-changing request the browser marks as
 * coming from elsewhere (`Sec-Fetch-Site: cross-site`, or an `Origin` other than this server) is
 * refused with 403. Clients that send neither header (every non-browser integration) are unaffected.
 */
export const refuseCrossSiteWrites: RequestHandler = (req, res, next) => {
  if (!WRITES.has(req.method)) return next();
  if (req.headers['sec-fetch-site'] === 'cross-site' || crossSiteOrigin(req)) {
    sendError(res, 403, 'Cross-site requests may not change data: send the request from this server\'s own origin or without browser credentials.');
    return;
  }
  next();
};
