import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import * as mariadb from 'mariadb';
import type { Statement } from './capture';
import { ipOf } from './loadgen';

/**
 * The baseline server: plain `node:http` and the raw `mariadb` driver, in a process of its own,
 * answering the benchmark's requests with the statements the real server ran for them (captured
 * by run.ts, same SQL and values, same order, the same statements together, a transaction's
 * statements on one connection) and the same JSON (the captured response, serialised per
 * request). No express, no ORM, no validation, no routing beyond one map look-up: the floor a
 * hand-written server could reach with the same queries.
 *
 * For a POST, the values that made the captured request unique (`seq`: the number in the body,
 * `ip`: the address made from it, `extra`: values the app generated, such as a ticket number) are
 * replaced by those of the request at hand (its `x-bench-seq` header), so that every request
 * inserts a new record as the real one does.
 *
 * argv[2]: the capture file (JSON); PORT: where to listen; DATABASE_URL and DATABASE_POOL_MAX as
 * the app reads them.
 */
export interface CapturedScenario {
  method: string;
  path: string;
  status: number;
  body: unknown;
  statements: Statement[];
  /** The captured request's sequence number (POST), and values generated from it. */
  seq?: number;
  extra?: string[];
}

function revive(_k: string, v: any) {
  return v && v.type === 'Buffer' && Array.isArray(v.data) ? Buffer.from(v.data) : v;
}

function substitute(value: unknown, pairs: Array<[string, string]>): unknown {
  if (typeof value !== 'string') return value;
  let out = value;
  for (const [from, to] of pairs) if (out.includes(from)) out = out.split(from).join(to);
  return out;
}

/** A statement's values with the substitutions made (a list inside, as `IN (?)` takes, included). */
function substituteAll(params: unknown[] | Record<string, unknown>, pairs: Array<[string, string]>): unknown[] | Record<string, unknown> {
  const one = (v: unknown): unknown => (Array.isArray(v) ? v.map(one) : substitute(v, pairs));
  return Array.isArray(params) ? params.map(one) : Object.fromEntries(Object.entries(params).map(([k, v]) => [k, one(v)]));
}

async function main() {
  const scenarios = JSON.parse(readFileSync(process.argv[2], 'utf8'), revive) as CapturedScenario[];
  const byKey = new Map(scenarios.map((s) => [`${s.method} ${s.path}`, s]));
  const url = new URL(process.env.DATABASE_URL!);
  const pool = mariadb.createPool({
    host: url.hostname, port: Number(url.port || 3306), user: decodeURIComponent(url.username), password: decodeURIComponent(url.password),
    database: url.pathname.slice(1), connectionLimit: Number(process.env.DATABASE_POOL_MAX ?? 10), connectTimeout: 5000,
  });

  async function replay(s: CapturedScenario, seq: number | undefined) {
    const pairs: Array<[string, string]> = [];
    if (seq !== undefined && s.seq !== undefined) {
      pairs.push([String(s.seq), String(seq)], [ipOf(s.seq % 2 ** 22), ipOf(seq % 2 ** 22)]);
      (s.extra ?? []).forEach((v, i) => pairs.push([v, `Z${i}${seq}`]));
    }
    const conns = new Map<string, mariadb.PoolConnection>();
    const run = async (st: Statement) => {
      const sql = pairs.length ? substitute(st.sql, pairs) as string : st.sql;
      const params = pairs.length && st.params ? substituteAll(st.params, pairs) : st.params;
      const statement = st.named ? { sql, namedPlaceholders: true } : sql;
      if (st.conn === null) return pool.query(statement, params);
      let conn = conns.get(st.conn);
      if (!conn) { conn = await pool.getConnection(); conns.set(st.conn, conn); }
      const result = await conn.query(statement, params);
      // The transaction is over: its connection goes back at once, as Sequelize gives it back.
      if (/^\s*(COMMIT|ROLLBACK)\b/i.test(sql)) { conns.delete(st.conn); await conn.release(); }
      return result;
    };
    try {
      for (let i = 0; i < s.statements.length;) {
        let j = i;
        while (j < s.statements.length && s.statements[j].wave === s.statements[i].wave) j++;
        if (j - i === 1) await run(s.statements[i]);
        else await Promise.all(s.statements.slice(i, j).map(run));
        i = j;
      }
    } finally {
      for (const c of conns.values()) await c.release();
    }
  }

  // Replays still running: a load generator that ends its run closes its sockets without
  // waiting for their answers, so the server may close before them (their pool is ended after).
  let inFlight = 0;
  let idle: (() => void) | undefined;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s = byKey.get(`${req.method} ${req.url}`);
      if (!s) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"status":"error","message":"unknown","data":null}');
        return;
      }
      const seq = req.headers['x-bench-seq'] === undefined ? undefined : Number(req.headers['x-bench-seq']);
      // A deadlock victim is run again, as the app retries it (ticket numbers).
      const attempt = (n: number): Promise<void> => replay(s, seq).catch((err: { errno?: number }) => {
        if (err.errno === 1213 && n < 5) return attempt(n + 1);
        throw err;
      });
      inFlight++;
      attempt(1).finally(() => { if (--inFlight === 0) idle?.(); }).then(() => {
        const json = JSON.stringify(s.body);
        res.writeHead(s.status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json), 'cache-control': 'no-store' });
        res.end(json);
      }, (err: Error) => {
        process.stderr.write(`baseline: ${s.method} ${s.path}: ${err.message}\n`);
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"status":"error","message":"baseline failed","data":null}');
      });
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('listening\n'));
  const replayed = () => (inFlight ? new Promise<void>((r) => { idle = r; }) : Promise.resolve());
  const stop = () => server.close(() => replayed().then(() => pool.end()).finally(() => process.exit(0)));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (require.main === module) main().catch((err) => { process.stderr.write(`baseline: ${err.stack ?? err}\n`); process.exit(1); });
