import express, { type RequestHandler } from 'express';
import { HttpError } from './errors';

/** `X-HTTP-Method-Override: PUT|DELETE` on a POST acts as that method. */
export const methodOverride: RequestHandler = (req, _res, next) => {
  const header = req.headers['x-http-method-override'];
  if (req.method === 'POST' && header !== undefined) {
    const method = String(header).trim().toUpperCase();
    if (!['PUT', 'PATCH', 'DELETE', 'POST'].includes(method)) {
      throw new HttpError(400, 'The X-HTTP-Method-Override header must be PUT or DELETE.');
    }
    req.method = method;
  }
  next();
};

/**
 * Form-encoded bodies with bracket arrays (`tag[]=1`, `options[0][value]=x`) and JSON bodies.
 * Anything else with a body is refused rather than silently read as empty.
 */
export function bodyParsers(limit: string): RequestHandler[] {
  const form = express.urlencoded({ extended: true, limit, parameterLimit: 20000, depth: 8 } as any);
  const json = express.json({ limit, strict: true });
  const onlyObjects: RequestHandler = (req, _res, next) => {
    if (req.body === undefined || req.body === null) req.body = {};
    else if (typeof req.body !== 'object' || Array.isArray(req.body)) {
      throw new HttpError(422, 'The request body must be an object of fields.');
    }
    next();
  };
  const supported: RequestHandler = (req, _res, next) => {
    const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
    if (hasBody && !req.is(['application/x-www-form-urlencoded', 'application/json', '+json'])) {
      throw new HttpError(415, 'The request body must be application/x-www-form-urlencoded or application/json.');
    }
    next();
  };
  return [supported, form, json, onlyObjects];
}
