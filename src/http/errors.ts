import type { ErrorRequestHandler, RequestHandler } from 'express';
import { BaseError, ForeignKeyConstraintError } from 'sequelize';
import { ConflictError, DomainError, NotFoundError, ScopeRequiredError } from '../errors';
import { logger } from '../logger';
import { sendError } from './envelope';
import { loggableUrl } from './requestLog';
import { UNIQUE_KEYS, duplicateOf, takenMessage } from '../db/uniqueKeys';
import { isLockConflict, isTransientDbError } from '../db/errors';

/** An error of the HTTP edge itself (a route's own answer): its status and message go out in the envelope. */
export class HttpError extends Error {
  constructor(public readonly status: number, message: string, public readonly headers: Record<string, string> = {}) {
    super(message);
  }
}

/** 405 with `Allow`: the methods the path offers (a comma-separated list such as `GET, PUT`). */
export class MethodNotAllowedError extends HttpError {
  constructor(method: string, allow: string) {
    super(405, `The ${method} method is not supported here. Supported methods: ${allow}.`, { Allow: allow });
  }
}

/** 404 for a URL that nothing answers (no route, an unknown export resource): `The requested URL GET /api/x was not found.` */
export class UrlNotFoundError extends HttpError {
  constructor(method: string, url: string) {
    super(404, `The requested URL ${method} ${url.split('?')[0]} was not found.`);
  }
}

export const notFoundRoute: RequestHandler = (req) => {
  throw new UrlNotFoundError(req.method, req.originalUrl);
};

/** 415 for a body in a charset the API does not read. */
export const unsupportedCharset = (charset: string): HttpError => new HttpError(415, `The charset "${charset}" is not supported.`);

const bodyErrors: Record<string, [number, (e: any) => string]> = {
  'entity.parse.failed': [400, () => 'The request body is not valid JSON.'],
  'entity.too.large': [413, (e) => `The request body is larger than the limit of ${e.limit} bytes.`],
  'encoding.unsupported': [415, (e) => `The content encoding "${e.encoding ?? ''}" is not supported.`],
  'charset.unsupported': [415, (e) => unsupportedCharset(e.charset ?? '').message],
  'parameters.too.many': [413, () => 'The request body has too many parameters.'],
  'request.aborted': [400, () => 'The request was aborted.'],
};


/** The 503 of a database outage (connection lost or refused, too many connections, read-only in a failover...). */
export const DATABASE_UNAVAILABLE = 'The service is temporarily unavailable: the database is not answering. Try again in a few seconds.';
/** The 503 of a lock conflict that outlasted the retries (a deadlock, a lock wait timeout): the database answered. */
export const DATABASE_BUSY = 'The service is temporarily unavailable: the database is busy with conflicting changes. Try again in a few seconds.';

export const errorHandler: ErrorRequestHandler = (err, req, res, _next) => {
  if (res.headersSent) {
    req.socket.destroy();
    return;
  }
  if (err instanceof HttpError) {
    for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
    sendError(res, err.status, err.message);
    return;
  }
  if (err instanceof DomainError) {
    sendError(res, err instanceof NotFoundError ? 404 : err instanceof ConflictError ? 409 : err instanceof ScopeRequiredError ? 403 : 422, err.message);
    return;
  }
  // A path segment that is no valid percent-encoding (`/ticket/%E0`, the router's decodeParam): no
  // record or route can have that name.
  if (err instanceof URIError) {
    sendError(res, 404, new UrlNotFoundError(req.method, req.originalUrl).message);
    return;
  }
  const known = typeof err?.type === 'string' ? bodyErrors[err.type] : undefined;
  if (known) {
    sendError(res, known[0], known[1](err));
    return;
  }
  // A unique key refused a write (a request that lost a race): 422 naming the field sent, by key name.
  const duplicate = err instanceof BaseError ? duplicateOf(err) : null;
  if (duplicate) {
    if (!UNIQUE_KEYS[duplicate.key]) logger.warn({ key: duplicate.key, reqId: req.id, method: req.method, url: req.path }, 'unique key not in the registry (db/uniqueKeys.ts)');
    sendError(res, 422, takenMessage(duplicate, req.body));
    return;
  }
  // The database did not answer in time, cannot be reached, or could not do the work now (a lock it
  // could not get after the retries, a failover: db/errors.ts): the client may try again, it is
  // not the request's fault. A lock conflict is said as such: the database answered, busy with
  // other writes (an outage's words would send an operator after the wrong trouble).
  if (isTransientDbError(err)) {
    const busy = isLockConflict(err);
    logger.warn({ err: { name: err.name, message: err.message }, reqId: req.id, method: req.method, url: loggableUrl(req.originalUrl) }, busy ? 'database busy (lock conflict)' : 'database unavailable');
    res.setHeader('Retry-After', '5');
    sendError(res, 503, busy ? DATABASE_BUSY : DATABASE_UNAVAILABLE);
    return;
  }
  if (err instanceof ForeignKeyConstraintError) {
    // `child` (1452): a row it names is gone (after db/transaction.ts ran the request again);
    // `parent` (1451): rows still point at the one it deletes or changes.
    sendError(res, 422, err.reltype === 'child'
      ? 'A record this request names does not exist (any more).'
      : 'The record is still in use by other records and cannot be changed this way.');
    return;
  }
  logger.error({ err: err instanceof BaseError ? { name: err.name, message: err.message } : err, reqId: req.id, method: req.method, url: loggableUrl(req.originalUrl) }, 'unhandled error');
  sendError(res, 500, `An unexpected error occurred (request ${String(req.id ?? '-')}). It has been logged.`);
};
