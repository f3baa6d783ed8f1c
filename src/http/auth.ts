import type { RequestHandler } from 'express';
import { verifyToken } from '../auth/tokens';
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

export const authenticate: RequestHandler = async (req, _res, next) => {
  const token = parseBasic(req.headers.authorization);
  if (token === undefined) throw unauthorized('Authentication is required: send the API token as the user name of HTTP Basic authentication.');
  if (token === null) throw unauthorized('The Authorization header is not valid HTTP Basic authentication.');
  if (token.length > 512 || !(await verifyToken(token))) throw unauthorized('The API token is not valid.');
  next();
};
