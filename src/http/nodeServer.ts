import { IncomingMessage, Server, ServerResponse, createServer } from 'node:http';
import type { Express } from 'express';
import { toOriginForm } from './requestTarget';
import { withPortSetting } from '../lib/exitOnStartupError';

/**
 * The HTTP server of an Express app, whose requests and responses are built with Express's
 * prototypes from the start.
 *
 * `app.listen()` gives Node's plain IncomingMessage and ServerResponse, and Express then swaps
 * their prototypes for its own on every request (`Object.setPrototypeOf` in `app.handle`). The
 * swap changes each object's hidden class after Node's own code has used it, which likely makes
 * the property accesses of Node's HTTP code and of Express's slow (what was measured is the
 * cost, not the cause): with `npm run bench:stack` (Node 20, Express 5, one route answering the
 * health JSON, 16 connections, on a 2-core machine) bare `node:http` took 0.026 ms of CPU a
 * request, Express on `app.listen()`'s server 0.119, Express on this one 0.033; the swap was
 * about nine tenths of what Express added. Node lets a server construct its requests and
 * responses with classes of its own: here they are constructors whose prototypes are the app's
 * `request` and `response`, so Express's swap sets the prototype each object already has (a
 * no-op). Nothing else changes: the objects are Node's, built by Node's constructors, and the
 * prototype chain is the one Express sets
 * (app.request → express's request → IncomingMessage.prototype).
 */
export function httpServer(app: Express): Server {
  // Function constructors (not classes): `prototype` must be the app's object itself.
  function Request(this: IncomingMessage, socket: IncomingMessage['socket']) {
    IncomingMessage.call(this, socket);
  }
  Request.prototype = app.request;
  function Response(this: ServerResponse, req: IncomingMessage, options?: object) {
    (ServerResponse as unknown as (this: ServerResponse, req: IncomingMessage, options?: object) => void).call(this, req, options);
  }
  Response.prototype = app.response;
  const server = createServer({
    IncomingMessage: Request as unknown as typeof IncomingMessage,
    ServerResponse: Response as unknown as typeof ServerResponse,
  }, app);
  // Before the app's own listener: Express must never see an absolute-form target (requestTarget.ts).
  server.prependListener('request', toOriginForm);
  return server;
}

/** Listens on port and host; resolves once listening, rejects with the error (a port in use, a HOST not of this machine). */
export function listen(server: Server, port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const failed = (err: unknown) => reject(withPortSetting(err, 'PORT'));
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve(server);
    });
  });
}
