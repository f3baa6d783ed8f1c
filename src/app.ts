import { randomUUID } from 'node:crypto';
import express, { type Express } from 'express';
import { pinoHttp } from 'pino-http';
import { config } from './config';
import { coreRouter } from './core';
import { ticketAreaRouter } from './ticket';
import { userAreaRouter } from './user';
import { logger } from './logger';
import { sequelize } from './db/sequelize';
import { authenticate } from './http/auth';
import { refuseBanned } from './http/bans';
import { bodyParsers, methodOverride, parseParams } from './http/body';
import { DASHBOARD_PATH, dashboardRouter } from './http/dashboard';
import { verifyRouter } from './user/verifyRoutes';
import { errorHandler, notFoundRoute } from './http/errors';

/** Builds the web application without listening: server.ts listens, tests drive it with supertest. */
export function buildApp(): Express {
  const app = express();
  const cfg = config();
  sequelize(); // registers the models
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', cfg.trustProxy === '' ? false : cfg.trustProxy === 'true' ? true : /^\d+$/.test(cfg.trustProxy) ? Number(cfg.trustProxy) : cfg.trustProxy.split(',').map((s) => s.trim()));
  app.set('query parser', parseParams);

  app.use(pinoHttp({
    logger,
    quietReqLogger: true,
    // Every response names its request (the caller's X-Request-Id when it sends a sane one), so a
    // failure an integrator reports can be found in the logs.
    genReqId: (req, res) => {
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && /^[A-Za-z0-9._:-]{1,128}$/.test(given) ? given : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    serializers: { req: (req) => ({ method: req.method, url: req.url?.split('?')[0] }), res: (res) => ({ statusCode: res.statusCode }) },
  }));
  app.get('/health', (_req, res) => {
    res.json({ status: 'success', message: null, data: { ok: true } });
  });

  const api = express.Router();
  api.use(methodOverride, refuseBanned, authenticate, ...bodyParsers(cfg.bodyLimit));
  api.use('/core', coreRouter);
  api.use('/user', userAreaRouter);
  api.use('/ticket', ticketAreaRouter);
  app.use('/api', api);

  // The queue dashboard, behind the same bans and token as the API (a browser asks for the token).
  app.use(DASHBOARD_PATH, refuseBanned, authenticate, dashboardRouter());
  app.use('/account', ...bodyParsers(cfg.bodyLimit), verifyRouter);

  app.use(notFoundRoute);
  app.use(errorHandler);
  return app;
}
