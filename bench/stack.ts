import { CONCURRENCY, SECONDS } from './env';
import { createServer } from 'node:http';
import express from 'express';
import { httpServer } from '../src/http/nodeServer';
import { loadgen, pinned, stop, waitFor } from './processes';
import { treeCpuTicks } from '../test/helpers/progress';

/**
 * `npm run bench:stack`: what the HTTP stack alone costs on this machine. Three servers answer the
 * health JSON from one route, with no middleware, no token and no statement: bare `node:http` (the
 * floor's stack), Express 5 as `app.listen()` serves it, and Express 5 on the server the web
 * process listens with (`httpServer`, src/http/nodeServer.ts: requests built with Express's
 * prototypes). Each in a process of its own pinned to core 0, loaded from core 1 (16
 * connections, 1 s warm-up, BENCH_SECONDS measured), STACK_ROUNDS rounds (default 3) in turns
 * (the order reversed every other round); the medians of req/s and of the CPU each spent per
 * request. No database or Redis is needed.
 *
 * The point of it: a goal "X % of the floor's req/s" cannot be met by a request whose floor costs
 * less than Express's own cost divided by X (docs/performance.md, Not done yet).
 */
const ROUNDS = Number(process.env.STACK_ROUNDS ?? 3);
const BODY = { status: 'success', message: null, data: { ok: true } };

function serve(kind: string, port: number) {
  if (kind === 'express' || kind === 'express-prototypes') {
    const app = express();
    app.disable('x-powered-by');
    app.set('etag', false);
    app.get('/health', (_req, res) => { res.json(BODY); });
    // As app.listen() serves, or as the web process does (src/http/nodeServer.ts).
    if (kind === 'express') app.listen(port, '127.0.0.1');
    else httpServer(app).listen(port, '127.0.0.1');
    return;
  }
  createServer((_req, res) => {
    const json = JSON.stringify(BODY);
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json) });
    res.end(json);
  }).listen(port, '127.0.0.1');
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const stacks = [
    { kind: 'node:http', arg: 'http', port: 3380 },
    { kind: 'Express 5, one route', arg: 'express', port: 3381 },
    { kind: 'the same, httpServer()', arg: 'express-prototypes', port: 3382 },
  ]
    .map((s) => ({ ...s, child: pinned('0', [__filename, 'serve', s.arg, String(s.port)], {}), cpu: [] as number[], rate: [] as number[] }));
  try {
    await Promise.all(stacks.map((s) => waitFor(`http://127.0.0.1:${s.port}/health`, s.child)));
    for (let round = 0; round < ROUNDS; round++) {
      for (const s of round % 2 ? [...stacks].reverse() : stacks) {
        const load = { url: `http://127.0.0.1:${s.port}/health`, method: 'GET' as const, headers: {}, connections: CONCURRENCY };
        await loadgen({ ...load, seconds: 1 });
        const t0 = treeCpuTicks([s.child.pid!]);
        const r = await loadgen({ ...load, seconds: SECONDS });
        if (r.non2xx || r.errors) throw new Error(`${s.kind}: ${r.non2xx} non-2xx, ${r.errors} errors`);
        s.cpu.push((10 * (treeCpuTicks([s.child.pid!]) - t0)) / r.total);
        s.rate.push(r.rate);
      }
    }
    const floor = stacks[0];
    process.stdout.write(`the HTTP stack alone: GET /health, ${CONCURRENCY} connections, ${SECONDS} s, median of ${ROUNDS} rounds\n\n`);
    process.stdout.write(`${'stack'.padEnd(24)} ${'req/s'.padStart(8)} ${'CPU ms/req'.padStart(11)} ${'of node:http req/s'.padStart(19)}\n`);
    for (const s of stacks) {
      process.stdout.write(`${s.kind.padEnd(24)} ${median(s.rate).toFixed(0).padStart(8)} ${median(s.cpu).toFixed(3).padStart(11)} ${`${((100 * median(s.rate)) / median(floor.rate)).toFixed(0)} %`.padStart(19)}\n`);
    }
  } finally {
    await Promise.all(stacks.map((s) => stop(s.child)));
  }
}

if (process.argv[2] === 'serve') serve(process.argv[3], Number(process.argv[4]));
else main().then(() => process.exit(0), (err) => { process.stderr.write(`${err instanceof Error ? err.stack : err}\n`); process.exit(1); });
