import type { RequestHandler, Response } from 'express';
import { config } from '../config';
import { sendError } from './envelope';

/** `25mb` → bytes (BODY_LIMIT's units: b, kb, mb; 1024 each). */
export function limitBytes(limit: string): number {
  const m = /^(\d+)(b|kb|mb)$/i.exec(limit.trim());
  if (!m) throw new Error(`not a body limit: ${limit}`);
  return Number(m[1]) * ({ b: 1, kb: 1024, mb: 1024 * 1024 } as const)[m[2].toLowerCase() as 'b' | 'kb' | 'mb'];
}

/** Answers without reading the body, and closes the connection so the rest of it is never read. */
function refuse(res: Response, status: number, message: string, headers: Record<string, string> = {}): void {
  res.setHeader('Connection', 'close');
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  sendError(res, status, message);
}

/**
 * A body whose Content-Length is over the limit is refused (413) before a byte of it is read, and
 * the connection is closed after the answer (Node would otherwise read the rest to reuse it).
 * A body without a length is cut by the parsers at the limit.
 */
export function refuseOversizedBodies(limit: string): RequestHandler {
  const max = limitBytes(limit);
  return (req, res, next) => {
    const length = Number(req.headers['content-length'] ?? 0);
    if (length > max) return refuse(res, 413, `The request body is larger than the limit of ${max} bytes.`);
    next();
  };
}

let active = 0;

/** How many large bodies this process is handling now (tests and metrics). */
export const largeBodiesInFlight = () => active;

/**
 * At most LARGE_BODY_CONCURRENCY requests with a large body (over LARGE_BODY_BYTES, or of unknown
 * length) are handled at once per process, from parsing to the response: a burst of big uploads
 * would otherwise hold the event loop (parsing, base64), the database pool and the Redis counters'
 * deadlines for everyone. One more is answered 503 with Retry-After at once, its body unread.
 */
export const boundLargeBodies: RequestHandler = (req, res, next) => {
  const { largeBytes, concurrency } = config().largeBodies;
  const length = req.headers['content-length'];
  const large = length === undefined ? req.headers['transfer-encoding'] !== undefined : Number(length) > largeBytes;
  if (!large) return next();
  if (active >= concurrency) {
    return refuse(res, 503, 'The server is handling as many large requests as it can: try again in a moment.', { 'Retry-After': '2' });
  }
  active++;
  let released = false;
  const release = () => {
    if (!released) {
      released = true;
      active--;
    }
  };
  res.on('close', release);
  res.on('finish', release);
  next();
};
