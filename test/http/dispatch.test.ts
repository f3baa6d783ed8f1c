/**
 * How an area's router sends a request to its resources' routers (src/http/dispatch.ts): straight
 * to the first router that records a route for it, in the area's order where routes overlap, and
 * through every router, as Express would, for a request no recorded route matches. Its premise,
 * that every router of an area records every route it serves, is checked on the real areas.
 */
import express, { Router, type RequestHandler } from 'express';
import request from 'supertest';
import { areaRouter, inSequence, onlyUnder } from '../../src/http/dispatch';
import { allRoutes, recorded, type RecordedRouter, type RouteRecord } from '../../src/http/routes';
import { coreRouter } from '../../src/core';
import { ticketAreaRouter } from '../../src/ticket';
import { userAreaRouter } from '../../src/user';
import { selfServiceRouter } from '../../src/selfservice';

/** A router with the given routes, each answering with the router's name (or passing on when `pass`). */
function router(name: string, routes: Array<[RouteRecord['method'], string, { pass?: boolean }?]>, entered: string[]): RecordedRouter {
  const r = Router();
  // A probe, not a route: shows which routers a request went through.
  r.use((_req, _res, next) => { entered.push(name); next(); });
  for (const [method, path, opts] of routes) {
    r[method.toLowerCase() as 'get' | 'post'](path, (req, res, next) => (opts?.pass ? next() : res.json({ by: name, params: req.params })));
  }
  return recorded(r, routes.map(([method, path]) => ({ method, path, action: 'test' })));
}

/** Four routers, or three without `wild` (a path the dispatch cannot read). */
function area(entered: string[], { wild = false } = {}) {
  const app = express();
  app.use('/api/test', areaRouter('/api/dispatch-test', [
    router('first', [['GET', '/thing/:id'], ['POST', '/thing/:id', { pass: true }]], entered),
    router('second', [['GET', '/other'], ['GET', '/thing/special'], ['POST', '/thing/:id']], entered),
    ...(wild ? [router('wild', [['GET', '/wild/*rest']], entered)] : []),
    router('last', [['GET', '/last/:a/:b'], ['GET', '/other/:id']], entered),
  ]));
  app.use((_req, res) => { res.status(404).json({ by: 'not found' }); });
  return app;
}

describe('areaRouter', () => {
  it('sends a request straight to the router that records its route', async () => {
    const entered: string[] = [];
    const res = await request(area(entered)).get('/api/test/last/1/2');
    expect(res.body).toEqual({ by: 'last', params: { a: '1', b: '2' } });
    expect(entered).toEqual(['last']);
  });

  it('keeps the order of the routers where routes overlap, and goes on when one passes', async () => {
    const entered: string[] = [];
    const app = area(entered);
    expect((await request(app).get('/api/test/thing/special')).body.by).toBe('first');
    expect(entered).toEqual(['first']);
    entered.length = 0;
    // `first` records POST /thing/:id but passes it on: `second` answers, as under Express.
    expect((await request(app).post('/api/test/thing/7')).body.by).toBe('second');
    expect(entered).toEqual(['first', 'second']);
  });

  it('matches as Express does: any case, a trailing slash, HEAD by a GET route', async () => {
    const entered: string[] = [];
    const app = area(entered);
    expect((await request(app).get('/api/test/OTHER/')).body.by).toBe('second');
    expect((await request(app).get('/api/test/Last/x/y/')).body.by).toBe('last');
    expect((await request(app).head('/api/test/other')).status).toBe(200);
    expect(entered).toEqual(['second', 'last', 'second']);
  });

  it('tries a router whose paths it cannot read at its place in the order', async () => {
    const entered: string[] = [];
    const app = area(entered, { wild: true });
    expect((await request(app).get('/api/test/wild/a/b')).body.by).toBe('wild');
    expect(entered).toEqual(['wild']);
    entered.length = 0;
    // `wild` may serve any path: it is tried before `last`, as Express would, and not before `first`.
    expect((await request(app).get('/api/test/other/5')).body.by).toBe('last');
    expect((await request(app).get('/api/test/thing/5')).body.by).toBe('first');
    expect((await request(app).get('/api/test/nothing')).body.by).toBe('not found');
    expect(entered).toEqual(['wild', 'last', 'first', 'wild', 'last']);
  });

  it('walks every router for a request no route records (not found, another method, OPTIONS)', async () => {
    const entered: string[] = [];
    const app = area(entered);
    expect((await request(app).get('/api/test/nothing')).body.by).toBe('not found');
    expect(entered).toEqual(['first', 'second', 'last']);
    entered.length = 0;
    expect((await request(app).delete('/api/test/thing/1')).status).toBe(404);
    expect(entered).toEqual(['first', 'second', 'last']);
    entered.length = 0;
    // OPTIONS: Express's own answer, the methods of the path, from the first router that has it.
    const options = await request(app).options('/api/test/other');
    expect(options.status).toBe(200);
    expect(options.headers.allow).toContain('GET');
  });

  it('every router of every area records each route it serves (what the dispatch relies on)', () => {
    const areas = [coreRouter, ticketAreaRouter, userAreaRouter, selfServiceRouter];
    let checked = 0;
    // Express's own view of each router: the routes in its stack (internals, read in a test only).
    for (const r of areas.flatMap((a) => a.routers)) {
      for (const layer of (r as unknown as { stack: Array<{ route?: { path: string | string[]; methods: Record<string, boolean> } }> }).stack) {
        expect(layer.route).toBeDefined(); // a router of an area has routes only, no middleware of its own
        const paths = ([] as string[]).concat(layer.route!.path);
        for (const method of Object.keys(layer.route!.methods).filter((m) => m !== '_all')) {
          for (const path of paths) {
            const mine = r.routes.some((x) => x.method === method.toUpperCase() && x.path === path);
            if (!mine) throw new Error(`${method.toUpperCase()} ${path} is served but not recorded`);
            checked++;
          }
        }
      }
    }
    // ... and records nothing it does not serve.
    expect(checked).toBe(allRoutes().filter((r) => /^\/api\/(core|ticket|user|selfservice)\//.test(r.path)).length);
  });
});

describe('onlyUnder and inSequence', () => {
  it('enters a router only for its paths', async () => {
    const seen: string[] = [];
    const inner = Router();
    inner.get('/docs/page', (_req, res) => { res.json({ by: 'docs' }); });
    const app = express();
    app.use(onlyUnder(['/docs'], (req, res, next) => { seen.push(req.path); return inner(req, res, next); }));
    app.use((_req, res) => { res.status(404).json({ by: 'not found' }); });
    expect((await request(app).get('/DOCS/page')).body.by).toBe('docs');
    expect((await request(app).get('/docsx')).body.by).toBe('not found');
    expect((await request(app).get('/api/x')).body.by).toBe('not found');
    expect(seen).toEqual(['/DOCS/page']);
  });

  it('runs handlers in order; a thrown, rejected or passed error skips the rest', async () => {
    const ran: string[] = [];
    const step = (name: string, fail?: 'throw' | 'reject' | 'pass'): RequestHandler => async (_req, _res, next) => {
      ran.push(name);
      if (fail === 'throw') throw new Error(name);
      if (fail === 'reject') return Promise.reject(new Error(name)) as never;
      next(fail === 'pass' ? new Error(name) : undefined);
    };
    for (const fail of ['throw', 'reject', 'pass'] as const) {
      ran.length = 0;
      const app = express();
      app.use(inSequence(step('a'), step('b', fail), step('c')));
      app.use((_req, res) => { res.json({ by: 'end' }); });
      app.use(((err, _req, res, _next) => { res.status(500).json({ error: err.message }); }) as express.ErrorRequestHandler);
      const res = await request(app).get('/');
      expect(res.body).toEqual({ error: 'b' });
      expect(ran).toEqual(['a', 'b']);
    }
    ran.length = 0;
    const app = express();
    app.use(inSequence(step('a'), step('b'), step('c')));
    app.use((_req, res) => { res.json({ by: 'end' }); });
    expect((await request(app).get('/')).body).toEqual({ by: 'end' });
    expect(ran).toEqual(['a', 'b', 'c']);
  });
});
