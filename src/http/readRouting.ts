import type { RequestHandler } from 'express';
import { config } from '../config';
import { readsFromReplica } from '../db/readRouting';
import { counterClient } from '../redis/windowCounter';
import { tokenIdOf } from './auth';

/**
 * With read replicas (DATABASE_READ_URLS), the reads of a GET request go to a replica, unless its
 * token made a write request within DATABASE_READ_YOUR_WRITES_SECONDS: then they go to the
 * primary, so a client always reads what it wrote (read-your-writes). The mark is a Redis key
 * per token (`<QUEUE_PREFIX>:wrote:<token id>`, expiring by itself), so it holds across web
 * processes. A write request sets it before it runs (a read after its answer finds it) and again
 * when it ends (the window counts from then). When Redis cannot say, reads go to the primary.
 * Everything else (other methods, unauthenticated requests) reads from the primary.
 */
// The counters' connection: short commands that give up quickly (redis/windowCounter.ts).
const redis = counterClient;
const markKey = (tokenId: number) => `${config().queuePrefix}:wrote:${tokenId}`;

export const routeReads: RequestHandler = (req, res, next) => {
  const db = config().database;
  const tokenId = tokenIdOf(res);
  if (!db.replicas.length || tokenId === undefined) return next();
  const windowMs = db.readYourWritesSeconds * 1000;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    if (!windowMs) return next();
    const mark = () => redis().set(markKey(tokenId), '1', 'PX', windowMs).catch(() => undefined);
    res.once('finish', () => void mark());
    return void mark().then(() => next());
  }
  if (!windowMs) return readsFromReplica(next);
  if (redis().status !== 'ready') return next();
  redis().exists(markKey(tokenId)).then(
    (wrote) => (wrote ? next() : readsFromReplica(next)),
    () => next(),
  );
};
