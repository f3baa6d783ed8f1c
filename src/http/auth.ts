import type { Request, RequestHandler, Response } from 'express';
import { grants } from '../auth/scopes';
import { tokenVersion } from '../auth/accessCache';
import { hashToken, verifyToken } from '../auth/tokens';
import { recordAuthFailure } from './authFailures';
import { clientIp } from './clientIp';
import { HttpError } from './errors';

const unauthorized = (message: string) => new HttpError(401, message, { 'WWW-Authenticate': 'Basic realm="helpdesk", charset="UTF-8"' });

/** HTTP Basic with the API token as the user name; the password is ignored. */
export function parseBasic(header: string | undefined): string | null | undefined {
  if (!header) return undefined;
  const m = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (!m) return null;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const sep = decoded.indexOf(':');
  const user = sep >= 0 ? decoded.slice(0, sep) : decoded;
  return user.length ? user : null;
}

const CREDENTIALS = Symbol('credentials');
type Credentials = { token: string | null | undefined; hash?: string };

/**
 * The token a request sends (parseBasic of its Authorization header), parsed once per request:
 * the rate limit per token reads it before authentication does. `hash` is its SHA-256 once one of
 * them has computed it (hashToken), for the other.
 */
export function credentialsOf(req: Request): Credentials {
  const held = req as Request & { [CREDENTIALS]?: Credentials };
  return (held[CREDENTIALS] ??= { token: parseBasic(req.headers.authorization) });
}

/** The hash of the request's token (when it sent one: `token` a string), computed once per request. */
export const tokenHashOf = (credentials: Credentials): string => (credentials.hash ??= hashToken(credentials.token as string));

/** What a request authenticated with: the stored token's id and scopes (never the token). */
type Authenticated = { id: number; scopes: string[] | null };

/** Why the credentials of a request are refused, or the stored token when they are valid. */
async function check(credentials: Credentials, versionRead: Promise<string | null>): Promise<string | Authenticated> {
  const { token } = credentials;
  if (token === undefined) return 'Authentication is required: send the API token as the user name of HTTP Basic authentication.';
  if (token === null) return 'The Authorization header is not valid HTTP Basic authentication.';
  const record = token.length > 512 ? null : await verifyToken(token, versionRead, tokenHashOf(credentials));
  if (!record) return 'The API token is not valid.';
  if ('expired' in record) return 'The API token has expired.';
  return { id: record.id, scopes: record.scopes };
}

/** The id of the API token a request authenticated with (rate limits and idempotency keys are per token). */
export const tokenIdOf = (res: Response): number | undefined => (res.locals.apiToken as Authenticated | undefined)?.id;

/** Whether the request's token grants a scope (`area:level`): what a response may show beyond its own area (a brand's SMTP secrets). */
export const grantsOf = (res: Response) => (scope: string): boolean => grants((res.locals.apiToken as Authenticated | undefined)?.scopes ?? null, scope);

export const authenticate: RequestHandler = async (req, res, next) => {
  const credentials = credentialsOf(req);
  const { token } = credentials;
  const message = await check(credentials, tokenVersion(res.locals));
  if (typeof message !== 'string') {
    res.locals.apiToken = message;
    return next();
  }
  // No Authorization header at all is how a browser's first request looks (the dashboard), not
  // an attack; malformed or wrong credentials count towards an automatic ban (http/authFailures).
  if (token !== undefined) await recordAuthFailure(clientIp(req));
  throw unauthorized(message);
};

/**
 * After authenticate: the token's scopes must grant what the request does (auth/scopes.ts), else
 * 403 naming the missing scope. `scopeOf` maps a request to the scope it needs (null: none).
 */
export const requireScope = (scopeOf: (req: Request) => string | null): RequestHandler => (req, res, next) => {
  const required = scopeOf(req);
  const scopes = (res.locals.apiToken as Authenticated | undefined)?.scopes ?? null;
  if (required && !grants(scopes, required)) throw new HttpError(403, `The API token does not have the ${required} scope this request needs.`);
  next();
};
