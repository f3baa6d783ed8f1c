import express, { type RequestHandler } from 'express';
import qs from 'qs';
import { HttpError } from './errors';

/** `X-HTTP-Method-Override: PUT|DELETE` on a POST acts as that method. */
export const methodOverride: RequestHandler = (req, _res, next) => {
  const header = req.headers['x-http-method-override'];
  if (req.method === 'POST' && header !== undefined) {
    const method = String(header).trim().toUpperCase();
    if (method !== 'PUT' && method !== 'DELETE') {
      throw new HttpError(400, 'The X-HTTP-Method-Override header must be PUT or DELETE.');
    }
    req.method = method;
  }
  next();
};

/**
 * Brackets read the way PHP reads them: every `x[...]` is a keyed object, so `permission[7]=1`
 * keeps its id 7 (qs would otherwise turn small indices into a list and lose the keys). Fields
 * that are lists take index-keyed objects as arrays (the `array` type in http/validation.ts).
 */
export const parseParams = (s: string) => qs.parse(s, { arrayLimit: -1, depth: 8, parameterLimit: 20000, allowPrototypes: false });

/**
 * Form-encoded bodies with bracket arrays (`tag[]=1`, `options[0][value]=x`) and JSON bodies.
 * Anything else with a body is refused rather than silently read as empty.
 */
export function bodyParsers(limit: string): RequestHandler[] {
  const raw = express.text({ type: 'application/x-www-form-urlencoded', limit, defaultCharset: 'utf-8' });
  const form: RequestHandler = (req, res, next) => raw(req, res, (err?: unknown) => {
    if (err) return next(err);
    if (typeof req.body === 'string' && req.is('application/x-www-form-urlencoded')) req.body = parseParams(req.body);
    return next();
  });
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
