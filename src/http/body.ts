import express, { type Request, type RequestHandler } from 'express';
import qs from 'qs';
import { HttpError, unsupportedCharset } from './errors';
import { ValidationError, fieldLabel } from '../errors';
import { runAll } from './dispatch';

/** Requests sent as POST that an override made PUT or DELETE. */
const overridden = new WeakSet<Request>();

/**
 * The method the client sent: POST for one an override made PUT or DELETE. What applies to POSTs
 * as sent (Idempotency-Key) asks this; routing, scopes and the rest see the method it acts as.
 */
export const sentMethod = (req: Request): string => (overridden.has(req) ? 'POST' : req.method);

/** `X-HTTP-Method-Override: PUT|DELETE` on a POST acts as that method. */
export const methodOverride: RequestHandler = (req, _res, next) => {
  const header = req.headers['x-http-method-override'];
  if (req.method === 'POST' && header !== undefined) {
    const method = String(header).trim().toUpperCase();
    if (method !== 'PUT' && method !== 'DELETE') {
      throw new HttpError(400, 'The X-HTTP-Method-Override header must be PUT or DELETE.');
    }
    req.method = method;
    overridden.add(req);
  }
  next();
};

/** Parameters one query string or form body may carry; more is refused, never cut silently. */
export const PARAMETER_LIMIT = 20000;

/** Whether `s` has more `&`-separated parameters than PARAMETER_LIMIT (counted the way qs splits). */
export function tooManyParameters(s: string): boolean {
  let count = 1;
  for (let i = s.indexOf('&'); i !== -1; i = s.indexOf('&', i + 1)) if (++count > PARAMETER_LIMIT) return true;
  return false;
}

/**
 * Brackets read the way PHP reads them: every `x[...]` is a keyed object, so `permission[7]=1`
 * keeps its id 7 (qs would otherwise turn small indices into a list and lose the keys). Fields
 * that are lists take index-keyed objects as arrays (the `array` type in lib/validation.ts).
 * Never throws (Express calls it lazily for `req.query`, the request logger included): callers
 * refuse oversized input first (`refuseLongQueries`, the form parser), since qs itself would
 * drop the parameters past its limit without a word (its throwOnLimitExceeded also rejects the
 * arrayLimit -1 used here).
 */
export const parseParams = (s: string) => qs.parse(s, { arrayLimit: -1, depth: 8, parameterLimit: PARAMETER_LIMIT, allowPrototypes: false });

/** A form body's percent-escape that is no UTF-8 text (`%FF`, an encoded surrogate). */
const malformedForm = () => new HttpError(400, 'The request body is not valid form encoding: a percent-escape is not UTF-8 text.');

/**
 * A form body's parameters (parseParams), refusing what qs would keep undecoded: a value with a
 * percent-escape that is no UTF-8 (`name=a%FF`) would be stored as the escape's own text. Latin-1
 * bodies (their charset says so) decode as qs decodes them.
 */
export function parseFormBody(s: string, charset: string): Record<string, unknown> {
  const latin1 = charset === 'iso-8859-1';
  return qs.parse(s, {
    arrayLimit: -1, depth: 8, parameterLimit: PARAMETER_LIMIT, allowPrototypes: false, charset: latin1 ? 'iso-8859-1' : 'utf-8',
    decoder(text, decode, textCharset) {
      if (latin1) return decode(text, decode, textCharset);
      const plain = text.replace(/\+/g, ' ');
      if (!plain.includes('%')) return plain;
      try {
        return decodeURIComponent(plain);
      } catch {
        throw malformedForm();
      }
    },
  });
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

interface JsonNode { value: unknown; key: string; parent: JsonNode | null }
/** The keys from the body down to a node (`customfield.7`), built only for an error. */
const pathOf = (node: JsonNode): string[] => {
  const path: string[] = [];
  for (let at: JsonNode | null = node; at?.parent; at = at.parent) path.unshift(at.key.replace(LONE_SURROGATES, '\uFFFD'));
  return path;
};

/**
 * A JSON body as the API reads it. An own `__proto__` key (JSON.parse keeps it as data) is
 * dropped, as qs drops it from a form: copied onto another object it would set that object's
 * prototype, and its fields would be read as the body's. A string or key that is no valid Unicode
 * (a lone surrogate, which the database would store as `?`) is a 422 naming it. Iterative, with
 * parent links rather than copied paths: a body nested 100,000 deep is Joi's to refuse.
 */
function checkedJson(body: unknown): void {
  const stack: JsonNode[] = [{ value: body, key: '', parent: null }];
  while (stack.length) {
    const node = stack.pop()!;
    const { value } = node;
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) {
        const path = pathOf(node);
        throw new ValidationError(`The ${fieldLabel(path.length ? path : ['body'])} must be valid Unicode text.`);
      }
    } else if (value && typeof value === 'object') {
      if (Object.hasOwn(value, '__proto__')) delete (value as Record<string, unknown>)['__proto__'];
      for (const [key, child] of Object.entries(value)) {
        const childNode = { value: child, key, parent: node };
        if (LONE_SURROGATE.test(key)) throw new ValidationError(`The ${fieldLabel(pathOf(childNode))} must be valid Unicode text.`);
        stack.push(childNode);
      }
    }
  }
}

/** 414 for a query string of more than PARAMETER_LIMIT parameters. */
export const refuseLongQueries: RequestHandler = (req, _res, next) => {
  const q = req.url.indexOf('?');
  if (q !== -1 && tooManyParameters(req.url.slice(q + 1))) {
    throw new HttpError(414, `The query string has more than ${PARAMETER_LIMIT} parameters.`);
  }
  next();
};

/**
 * body-parser gives every error of its own a `type`; one without a type, on a compressed body,
 * is the decompression stream's (zlib, brotli): the body is not what its Content-Encoding says.
 */
function undecodable(req: Request, err: unknown): unknown {
  const encoding = String(req.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding === 'identity' || (err as { type?: unknown }).type !== undefined) return err;
  return new HttpError(400, 'The request body could not be decoded: it is not valid for its Content-Encoding.');
}

/** The JSON media types: `application/json` and every `application/*+json` (`vnd.api+json`, `merge-patch+json`). */
const JSON_TYPES = ['application/json', 'application/*+json'];

/** The charset a request's Content-Type names (lower case, unquoted), or null. */
function charsetOf(req: Request): string | null {
  const charset = /;\s*charset\s*=\s*("?)([^";]*)\1/i.exec(String(req.headers['content-type'] ?? ''))?.[2];
  return charset === undefined ? null : charset.trim().toLowerCase();
}

/**
 * JSON is UTF-8 (RFC 8259); US-ASCII is the same bytes. Any other charset is a 415: body-parser
 * would decode UTF-16 or UTF-32 as named, which a client that names it by mistake sends as UTF-8,
 * and answer 400 `not valid JSON` about a body it misread. A US-ASCII body is read as UTF-8
 * (body-parser takes only `utf-*` names).
 */
function jsonCharset(req: Request): void {
  const charset = charsetOf(req);
  if (charset === null || charset === 'utf-8') return;
  if (charset !== 'us-ascii') throw unsupportedCharset(charset);
  req.headers['content-type'] = String(req.headers['content-type']).replace(/(;\s*charset\s*=\s*)("?)us-ascii\2/i, '$1utf-8');
}

/**
 * Form-encoded bodies with bracket arrays (`tag[]=1`, `options[0][value]=x`) and JSON bodies.
 * Anything else with a body is refused rather than silently read as empty.
 */
export function bodyParsers(limit: string): RequestHandler[] {
  const raw = express.text({ type: 'application/x-www-form-urlencoded', limit, defaultCharset: 'utf-8' });
  const form: RequestHandler = (req, res, next) => raw(req, res, (err?: unknown) => {
    if (err) return next(undecodable(req, err));
    if (typeof req.body === 'string' && req.is('application/x-www-form-urlencoded')) {
      if (tooManyParameters(req.body)) return next(new HttpError(413, `The request body has more than ${PARAMETER_LIMIT} parameters.`));
      const charset = charsetOf(req) ?? 'utf-8';
      // Bytes that are no UTF-8 came out of the decoding as U+FFFD: the text is not what was sent.
      if (charset === 'utf-8' && req.body.includes('\uFFFD')) return next(new HttpError(400, 'The request body is not valid UTF-8 text.'));
      try {
        req.body = parseFormBody(req.body, charset);
      } catch (parseError) {
        return next(parseError); // thrown here, in a stream callback, it would end the process
      }
    }
    return next();
  });
  // Not strict: every valid JSON parses, so one that is no object (`null`, `"str"`, `5`) gets the
  // 422 below, as an array does; strict mode answered those 400 as if they were not JSON.
  const jsonParser = express.json({ limit, strict: false, type: JSON_TYPES });
  const json: RequestHandler = (req, res, next) => {
    if (req.is(JSON_TYPES)) jsonCharset(req);
    jsonParser(req, res, (err?: unknown) => next(err ? undecodable(req, err) : undefined));
  };
  const onlyObjects: RequestHandler = (req, _res, next) => {
    // undefined: no body was read (an empty JSON body parses as {}); null is a JSON `null` sent.
    if (req.body === undefined) req.body = {};
    else if (req.body === null || typeof req.body !== 'object' || Array.isArray(req.body)) {
      throw new HttpError(422, 'The request body must be an object of fields.');
    } else if (req.is(JSON_TYPES)) {
      checkedJson(req.body);
    }
    next();
  };
  const supported: RequestHandler = (req, _res, next) => {
    const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
    if (hasBody && !req.is(['application/x-www-form-urlencoded', ...JSON_TYPES])) {
      throw new HttpError(415, 'The request body must be application/x-www-form-urlencoded or application/json.');
    }
    next();
  };
  const parsers: RequestHandler[] = [supported, form, json, onlyObjects];
  // A request without a body (neither Content-Length nor Transfer-Encoding: every GET a client
  // sends) passes all four as `{}` (body-parser skips it, `onlyObjects` makes the body an
  // object): one step instead of four, without their calls.
  const bodyless: RequestHandler = (req, res, next) => {
    if (req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined) return runAll(parsers, req, res, next);
    req.body ??= {};
    next();
  };
  return [bodyless];
}
