/**
 * The server the web process listens with (src/http/nodeServer.ts): Node builds its requests and
 * responses with the app's prototypes already, so Express's per-request prototype swap changes
 * nothing, and the app answers as it does on `app.listen()`'s server.
 */
import express, { type Express } from 'express';
import { IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { httpServer, listen } from '../../src/http/nodeServer';

function app(): Express {
  const a = express();
  a.disable('x-powered-by');
  a.get('/thing/:id', (req, res) => {
    res.set('X-Seen', String(req.get('x-probe'))).json({ id: req.params.id, query: req.query, ip: req.ip, path: req.path });
  });
  a.post('/echo', express.json(), (req, res) => { res.status(201).json(req.body); });
  a.get('/fail', () => { throw new Error('boom'); });
  return a;
}

describe('httpServer', () => {
  it('builds each request and response with the app\'s prototypes before Express sees them', async () => {
    const a = app();
    const server = httpServer(a);
    const seen: Array<[object | null, object | null, boolean, boolean]> = [];
    // Before the app's own listener: what Node built, not what Express made of it.
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
      seen.push([Object.getPrototypeOf(req), Object.getPrototypeOf(res), req instanceof IncomingMessage, res instanceof ServerResponse]);
    });
    await request(server).get('/thing/1').expect(200);
    await request(server).post('/echo').send({ a: 1 }).expect(201);
    expect(seen).toEqual([[a.request, a.response, true, true], [a.request, a.response, true, true]]);

    // On app.listen()'s server, Node's plain prototypes reach the app (which swaps them per request).
    const plain = a.listen(0, '127.0.0.1');
    const plainSeen: Array<object | null> = [];
    plain.prependListener('request', (req: IncomingMessage) => { plainSeen.push(Object.getPrototypeOf(req)); });
    try {
      await request(plain).get('/thing/1').expect(200);
    } finally {
      await new Promise((r) => plain.close(r));
    }
    expect(plainSeen).toEqual([IncomingMessage.prototype]);
  });

  it('answers as app.listen()\'s server does: routes, params, query, headers, bodies, errors, 404', async () => {
    const a = app();
    const ours = httpServer(a);
    const plain = a.listen(0, '127.0.0.1');
    try {
      const both = async (send: (s: Server | Express) => request.Test) => {
        const [x, y] = [await send(ours), await send(plain as unknown as Server)];
        // Express's development error page (a 500) shows the stack: Node's own frames are at other
        // lines when a server has two request listeners (ours puts toOriginForm before the app).
        const headers = (r: request.Response) => Object.fromEntries(Object.entries(r.headers).filter(([k]) => k !== 'date' && (r.status < 500 || k !== 'content-length')));
        const text = (r: request.Response) => r.text.replace(/\(node:([a-z_]+):\d+:\d+\)/g, '(node:$1)');
        expect({ status: x.status, headers: headers(x), text: text(x) }).toEqual({ status: y.status, headers: headers(y), text: text(y) });
        return x;
      };
      const thing = await both((s) => request(s).get('/thing/42?a[b]=1&c=2').set('X-Probe', 'yes'));
      expect(thing.status).toBe(200);
      expect(thing.headers['x-seen']).toBe('yes');
      expect(thing.body).toEqual({ id: '42', query: { 'a[b]': '1', c: '2' }, ip: '127.0.0.1', path: '/thing/42' });
      expect((await both((s) => request(s).post('/echo').send({ x: [1, 2] }))).body).toEqual({ x: [1, 2] });
      expect((await both((s) => request(s).get('/fail'))).status).toBe(500);
      expect((await both((s) => request(s).get('/nothing'))).status).toBe(404);
    } finally {
      await new Promise((r) => plain.close(r));
    }
  });

  it('listen() resolves once listening and rejects on a port in use', async () => {
    const first = await listen(httpServer(app()), 0, '127.0.0.1');
    try {
      const { port } = first.address() as AddressInfo;
      expect(port).toBeGreaterThan(0);
      const res = await request(`http://127.0.0.1:${port}`).get('/thing/7').expect(200);
      expect(res.body.id).toBe('7');
      const second = httpServer(app());
      await expect(listen(second, port, '127.0.0.1')).rejects.toMatchObject({ code: 'EADDRINUSE' });
      expect(second.listening).toBe(false);
    } finally {
      await new Promise((r) => first.close(r));
    }
  });
});
