import type { IncomingMessage } from 'node:http';

const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

/**
 * The origin form (`/path?query`) of a request target. HTTP/1.1 servers must also accept the
 * absolute form (`GET http://host/path`, what a client sends through a proxy), which Express
 * routes by its path: left as it is, every layer that reads the URL itself (scopes, the request
 * log's redaction, metrics' routes, Idempotency-Key fingerprints) would see another string for
 * the same request, and a `user:password@` in it would reach the log.
 */
export function originForm(url: string): string {
  if (url.charCodeAt(0) === 47 /* / */) return url;
  const authority = ABSOLUTE_FORM.exec(url);
  if (!authority) return url;
  const rest = url.slice(authority[0].length);
  return rest.charCodeAt(0) === 47 ? rest : `/${rest}`;
}

/**
 * Rewrites an absolute-form target to its origin form before the app sees the request: before
 * Express's router, which keeps the scheme and host it found aside and would splice them back
 * into a URL rewritten later.
 */
export function toOriginForm(req: IncomingMessage): void {
  const url = req.url;
  if (url !== undefined && url.charCodeAt(0) !== 47) req.url = originForm(url);
}
