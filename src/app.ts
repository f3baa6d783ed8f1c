import express, { type Express } from 'express';
import { actingToken } from './audit/httpActor';
import { config } from './config';
import { coreRouter } from './core';
import { exportAreaRouter } from './export/router';
import { selfServiceRouter } from './selfservice';
import { ticketAreaRouter } from './ticket';
import { userAreaRouter } from './user';
import { sequelize } from './db/sequelize';
import { areSubscribersRegistered } from './events';
import { authenticate } from './http/auth';
import { requireScope } from './http/auth';
import { requiredScope } from './auth/scopes';
import { refuseBanned } from './http/bans';
import { bodyParsers, methodOverride, parseParams, refuseLongQueries } from './http/body';
import { DASHBOARD_PATH, dashboardHeaders, dashboardRouter } from './http/dashboard';
import { noSniff, noStore } from './http/headers';
import { refuseCrossSiteWrites } from './http/crossSite';
import { boundLargeBodies, refuseOversizedBodies } from './http/largeBodies';
import { requestLogger } from './http/requestLog';
import { verifyRouter } from './user/verifyRoutes';
import { errorHandler, notFoundRoute } from './http/errors';
import { idempotency } from './http/idempotency';
import { routeReads } from './http/readRouting';
import { requestVersions } from './http/versionSnapshot';
import { limitPerIp, limitPerToken, startAccessChecks } from './http/rateLimit';
import { DOCS_PATH, OPENAPI_PATH, docsRouter } from './openapi/docs';
import { inSequence, onlyUnder } from './http/dispatch';
import { MAIL_PAGE_PATH, mailPageHeaders, mailPageRouter } from './mailcatcher/page';
import { healthRouter, isDraining } from './ops/health';
import { metricsEndpoint } from './ops/metrics';
import { httpMetrics } from './http/metrics';
import { jsonResponse } from './http/jsonResponse';

/** Builds the web application without listening: server.ts listens, tests drive it with supertest. */
export function buildApp(): Express {
  // A process that serves requests without its subscribers would lose their side effects.
  if (!areSubscribersRegistered()) throw new Error('buildApp() before wire(): the entry point must call wire() (src/wiring.ts) first');
  const app = express();
  const cfg = config();
  sequelize(); // registers the models
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', cfg.trustProxy === '' ? false : cfg.trustProxy === 'true' ? true : /^\d+$/.test(cfg.trustProxy) ? Number(cfg.trustProxy) : cfg.trustProxy.split(',').map((s) => s.trim()));
  app.set('query parser', parseParams);
  // Every JSON answer without Express's Buffer copy and freshness check (http/jsonResponse.ts).
  app.response.json = jsonResponse as typeof app.response.json;

  // What every request passes, as one layer of the router (inSequence: Express dispatches once).
  app.use(inSequence(
    httpMetrics,
    requestLogger(),
    // While the process drains (SIGTERM), clients are told not to reuse their connection.
    (_req, res, next) => {
      if (isDraining()) res.setHeader('Connection', 'close');
      next();
    },
    noSniff,
    refuseCrossSiteWrites,
    refuseOversizedBodies(cfg.bodyLimit),
  ));
  app.use(['/api', '/account'], noStore);
  app.use(refuseLongQueries);
  app.get('/health', (_req, res) => {
    res.json({ status: 'success', message: null, data: { ok: true } });
  });
  app.use(onlyUnder(['/healthz', '/readyz'], healthRouter()));
  app.get('/metrics', metricsEndpoint);
  app.use(onlyUnder([OPENAPI_PATH, DOCS_PATH], docsRouter()));

  const api = express.Router();
  // Rate limits per address (before authentication: failed ones count) and per token; then the
  // body, which an Idempotency-Key's fingerprint covers.
  api.use(inSequence(startAccessChecks, methodOverride, refuseBanned, limitPerIp, authenticate, requireScope((req) => requiredScope(req.method, req.path)), limitPerToken, boundLargeBodies, ...bodyParsers(cfg.bodyLimit), idempotency, actingToken, requestVersions, routeReads));
  api.use('/core', coreRouter);
  api.use('/user', userAreaRouter);
  api.use('/ticket', ticketAreaRouter);
  api.use('/selfservice', selfServiceRouter);
  api.use('/export', exportAreaRouter);
  app.use('/api', api);

  // The queue dashboard, behind the same bans and token as the API (a browser asks for the token).
  app.use(DASHBOARD_PATH, dashboardHeaders, refuseBanned, authenticate, requireScope(() => 'core:write'), ...dashboardRouter());
  // The mail catcher's page, the same way (it shows mail: core scope).
  app.use(MAIL_PAGE_PATH, mailPageHeaders, refuseBanned, authenticate, requireScope(() => 'core:read'), mailPageRouter());
  app.use('/account', ...bodyParsers(cfg.bodyLimit), verifyRouter);

  app.use(notFoundRoute);
  app.use(errorHandler);
  return app;
}
