import type { RequestHandler } from 'express';
import { httpDuration, httpRequests } from '../ops/metrics';
import { routePattern } from './routePattern';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);
/** Counts every request at its end, labelled by the route pattern it matched (never the raw path). */
export const httpMetrics: RequestHandler = (req, res, next) => {
  const started = process.hrtime.bigint();
  res.on('finish', () => {
    const labels = {
      method: METHODS.has(req.method) ? req.method : 'OTHER',
      route: routePattern(req.originalUrl.split('?')[0]),
      status: String(res.statusCode),
    };
    httpRequests.inc(labels);
    httpDuration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
  });
  next();
};
