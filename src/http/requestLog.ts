import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { pinoHttp } from 'pino-http';
import { logger } from '../logger';

/** Paths whose tail is a credential (the verification link's token). */
const SECRET_PATH = /^(\/+account\/+verify\/+).*$/i;

/**
 * A request URL as logs may show it: no query string (a client may put anything there, secrets
 * included) and no verification token (`/account/verify/[redacted]`). The path is matched
 * decoded, so `%76erify` cannot slip a token past it.
 */
export function loggableUrl(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  const path = url.split(/[?#]/)[0];
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    /* malformed escapes: match the raw path */
  }
  const m = SECRET_PATH.exec(decoded) ?? SECRET_PATH.exec(path);
  return m ? `${m[1]}[redacted]` : path;
}

/**
 * One log line per request, at its end. Every response names its request (the caller's
 * X-Request-Id when it sends a sane one), so a failure an integrator reports can be found in the logs.
 */
export function requestLogger(): RequestHandler {
  return pinoHttp({
    logger,
    quietReqLogger: true,
    genReqId: (req, res) => {
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && /^[A-Za-z0-9._:-]{1,128}$/.test(given) ? given : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    serializers: { req: (req) => ({ method: req.method, url: loggableUrl(req.url) }), res: (res) => ({ statusCode: res.statusCode }) },
  });
}
