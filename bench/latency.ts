// `./env` must stay the first import (see run.ts).
import { TICKETS } from './env';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../src/app';
import { createToken, revokeToken } from '../src/auth/tokens';
import { sequelize } from '../src/db/sequelize';
import { closeQueues } from '../src/queue/producer';
import { wire } from '../src/wiring';
import { capture } from './capture';
import { fillSearchServer, startSearchServer } from './searchServer';
import { skipped, ticketListPaths } from './explain';
import { ticketTargets } from './tickets';

/**
 * `node dist/bench/latency.js` (BENCH_TICKETS picks the data set, seeded by `npm run bench`):
 * every ticket list of bench/explain.ts timed one request at a time in this process (REPEAT
 * times after two warm calls), with its statements, `count` and p50/p95/p99 (BENCH_ONLY: the
 * lists whose title holds one of its `|`-separated parts). Writes JSON to BENCH_RESULTS for
 * bench/growth.ts, which sets the scales side by side: how each list grows from 10k to 1M tickets.
 */
const REPEAT = Number(process.env.BENCH_REPEAT ?? 10);

async function main() {
  wire();
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const stopSearchServer = await startSearchServer(log);
  await fillSearchServer(log);
  const tt = await ticketTargets();
  const app = buildApp();
  const server = await new Promise<import('node:http').Server>((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { token, record } = await createToken('latency');
  const headers = { authorization: `Basic ${Buffer.from(`${token}:x`).toString('base64')}` };
  const get = async (path: string) => {
    const res = await fetch(base + path, { headers });
    const body = await res.json() as { count?: number; status: string; message: string };
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${body.message}`);
    return body;
  };
  const rows = [];
  try {
    const only = process.env.BENCH_ONLY?.split('|');
    for (const [title, path] of ticketListPaths(tt).filter(([t]) => !skipped(t) && (!only || only.some((o) => t.includes(o))))) {
      await get(path);
      const { result, statements } = await capture(() => get(path));
      // A request over a second (a common word's search with InnoDB's FULLTEXT) is timed twice only.
      const t0 = performance.now();
      await get(path);
      const first = performance.now() - t0;
      const times = [first];
      for (let i = 1; i < (first > 1000 ? 2 : REPEAT); i++) {
        const t = performance.now();
        await get(path);
        times.push(performance.now() - t);
      }
      times.sort((a, b) => a - b);
      const at = (p: number) => times[Math.min(times.length - 1, Math.ceil(times.length * p) - 1)];
      const row = { title, count: result.count, statements: statements.length, p50: at(0.5), p95: at(0.95), p99: at(0.99), max: times[times.length - 1] };
      process.stderr.write(`${JSON.stringify(row)}\n`);
      rows.push(row);
    }
  } finally {
    await revokeToken(String(record.id)).catch(() => undefined);
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
  if (process.env.BENCH_RESULTS) writeFileSync(process.env.BENCH_RESULTS, JSON.stringify({ tickets: TICKETS, rows }));
  await Promise.allSettled([closeQueues(), sequelize().close(), stopSearchServer()]);
}

main().then(() => process.exit(0), (err) => { process.stderr.write(`${(err as Error).stack}\n`); process.exit(1); });
