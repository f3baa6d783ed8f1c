// `./env` must stay the first import: it points the configuration at the benchmark's own database
// and queue prefix before any module of src/ reads it.
import { CONCURRENCY, SECONDS } from './env';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Op } from 'sequelize';
import { buildApp } from '../src/app';
import { createToken, hashToken, revokeToken } from '../src/auth/tokens';
import { prepareDatabase } from '../src/cli/setup';
import { config } from '../src/config';
import { IpBan } from '../src/db/models';
import { countQueries, sequelize } from '../src/db/sequelize';
import { closeQueues } from '../src/queue/producer';
import { baselines, countingDb, createPool, type BaselineContext } from './baseline';
import { ensureBenchData, findTargets, SIZES, type Targets } from './data';
import { runHttp, runLoops, type Stats } from './measure';
import { num, table } from './table';

/**
 * `npm run bench`: the API under load, scenario by scenario, next to the floor of each read
 * scenario (its SQL through the raw driver), and the number of statements a request runs at page
 * sizes 1 and 50 (equal: relations are loaded per page, never per record).
 *
 * Environment: BENCH_SECONDS (default 5) per measurement; BENCH_DATABASE_URL (default
 * mariadb://root@127.0.0.1:3306/helpdesk_bench), created, migrated and seeded on first use.
 * Progress goes to stderr, the tables to stdout. Exits 1 when a request or a baseline operation
 * failed, or when statement counts differ (all printed under FAILURES).
 */

/** Seconds of load before each measurement, not counted: JIT, connection pools, buffer pool. */
const WARM_UP_SECONDS = 1;
const PAGE = 50;

interface Scenario {
  /** Key of its baseline (read scenarios). */
  key: string;
  title: string;
  method: 'GET' | 'POST';
  /** The request path; `limit` is the page size of list scenarios. */
  path(limit: number): string;
  /** A list, whose statement count is compared at limit=1 and limit=50. */
  paged: boolean;
  /** A fresh form body per request (POST). */
  body?: () => string;
}

const log = (line: string) => process.stderr.write(`${line}\n`);

/**
 * Addresses for created bans: 100.64.0.0/10, apart from the seeded 10.0.0.0/16 and the client's
 * 127.0.0.1 (a ban of the client would turn every later request into a 403).
 */
let banSeq = Math.floor(Math.random() * 2 ** 22);
function newBanForm(): string {
  const n = banSeq++ % 2 ** 22;
  const ip = `100.${64 + ((n >> 16) & 63)}.${(n >> 8) & 255}.${n & 255}`;
  return new URLSearchParams({ ip, type: '1', reason: 'Benchmark ban.' }).toString();
}

/**
 * Removes the bans the POST scenario created (and those a crashed run left), so that the IP ban
 * lists measure the seeded table, run after run.
 */
const removeCreatedBans = () => IpBan.destroy({ where: { ip: { [Op.like]: '100.%' } } });

function scenarios(t: Targets): Scenario[] {
  const enc = encodeURIComponent;
  return [
    { key: 'users', title: 'list users', method: 'GET', paged: true, path: (l) => `/api/user/user?limit=${l}` },
    { key: 'usersByEmail', title: 'list users by email', method: 'GET', paged: true, path: (l) => `/api/user/user?limit=${l}&email=${enc(t.email)}` },
    { key: 'showUser', title: 'show one user', method: 'GET', paged: false, path: () => `/api/user/user/${t.showUserId}` },
    { key: 'organisations', title: 'list organisations', method: 'GET', paged: true, path: (l) => `/api/user/organisation?limit=${l}` },
    { key: 'ipBans', title: 'list IP bans', method: 'GET', paged: true, path: (l) => `/api/core/ipban?limit=${l}` },
    { key: 'ipBansByIp', title: 'list IP bans by ip', method: 'GET', paged: true, path: (l) => `/api/core/ipban?limit=${l}&ip=${enc(t.banIp)}` },
    { key: 'createIpBan', title: 'create IP ban (POST)', method: 'POST', paged: false, path: () => '/api/core/ipban', body: newBanForm },
  ];
}

async function listen(): Promise<Server> {
  const app = buildApp();
  return new Promise((resolve, reject) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(server));
    server.on('error', reject);
  });
}

interface Row {
  scenario: Scenario;
  /** What one response holds: `rows of count` for lists. */
  shape: string;
  http?: Stats;
  baseline?: Stats;
  queries?: { limit1?: number; limit50: number; baseline?: number };
}

async function main() {
  const cfg = config();
  log(`Database ${cfg.database.name} on ${cfg.database.host}:${cfg.database.port}; ${SECONDS} s per measurement, ${CONCURRENCY} connections.`);
  await prepareDatabase();
  await ensureBenchData(log);
  await removeCreatedBans();
  const targets = await findTargets();

  const server = await listen();
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { token, record: tokenRecord } = await createToken('benchmark');
  const headers = { authorization: `Basic ${Buffer.from(`${token}:x`).toString('base64')}` };
  const formHeaders = { ...headers, 'content-type': 'application/x-www-form-urlencoded' };
  const pool = createPool();
  const ctx: BaselineContext = { tokenHash: hashToken(token), ...targets };

  const call = async (s: Scenario, limit = PAGE) => {
    const res = await fetch(base + s.path(limit), s.body ? { method: 'POST', headers: formHeaders, body: s.body() } : { headers });
    const envelope = await res.json() as { status: string; message: string | null; data: unknown; count?: number };
    if (res.status !== 200 || envelope.status !== 'success') throw new Error(`${s.method} ${s.path(limit)}: ${res.status} ${envelope.message}`);
    return envelope;
  };

  try {
    const rows: Row[] = [];
    // One call of each scenario first: it must succeed, and its answer says what is measured. The
    // first request also records the token's use (an UPDATE, at most once a minute), which must
    // not fall into the statement counts below.
    for (const s of scenarios(targets)) {
      const envelope = await call(s);
      const shape = envelope.count === undefined ? '1 record' : `${(envelope.data as unknown[]).length} of ${num(envelope.count)}`;
      rows.push({ scenario: s, shape });
    }

    // Statements per request, at page sizes 1 and 50, and per baseline operation.
    for (const row of rows) {
      const s = row.scenario;
      if (s.method !== 'GET') continue;
      const limit50 = (await countQueries(() => call(s, PAGE))).queries.length;
      const limit1 = s.paged ? (await countQueries(() => call(s, 1))).queries.length : undefined;
      const db = countingDb(pool);
      await baselines[s.key](db, ctx);
      row.queries = { limit1, limit50, baseline: db.statements };
    }

    for (const row of rows) {
      const s = row.scenario;
      const load = {
        url: base + s.path(PAGE), method: s.method, headers: s.body ? formHeaders : headers, body: s.body,
        connections: CONCURRENCY, seconds: SECONDS,
      };
      log(`HTTP      ${s.title}...`);
      await runHttp({ ...load, seconds: WARM_UP_SECONDS });
      row.http = await runHttp(load);
      if (s.body) await removeCreatedBans();

      const op = baselines[s.key];
      if (op) {
        log(`baseline  ${s.title}...`);
        const db = countingDb(pool);
        await runLoops(() => op(db, ctx), CONCURRENCY, WARM_UP_SECONDS);
        row.baseline = await runLoops(() => op(db, ctx), CONCURRENCY, SECONDS);
      }
    }

    return report(rows);
  } finally {
    await revokeToken(String(tokenRecord.id)).catch(() => undefined);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await Promise.allSettled([closeQueues(), sequelize().close(), pool.end()]);
  }
}

/** Prints the tables; true when something failed (failures are printed too, loudly). */
function report(rows: Row[]): boolean {
  const ms = (v: number | undefined) => num(v, 1);
  const failures = (s?: Stats) => {
    const n = (s?.non2xx ?? 0) + (s?.errors ?? 0);
    return n ? `${num(n)} !!` : '0';
  };
  const out: string[] = [];
  out.push('', `helpdesk API benchmark: ${SECONDS} s per measurement, ${CONCURRENCY} connections / loops, ${SIZES.users} users, ${SIZES.organisations} organisations, ${SIZES.operators} operators, ${SIZES.ipBans} IP bans`, '');
  out.push(table(
    ['scenario', 'response', 'HTTP req/s', 'p50 ms', 'p99 ms', 'non-2xx/err', 'SQL ops/s', 'p50 ms', 'p99 ms', 'HTTP/SQL'],
    rows.map(({ scenario, shape, http, baseline }) => [
      scenario.title, shape, num(http?.rate), ms(http?.p50), ms(http?.p99), failures(http),
      num(baseline?.rate), ms(baseline?.p50), ms(baseline?.p99),
      http && baseline ? `${num((100 * http.rate) / baseline.rate)}%` : '-',
    ]),
    [false, true, true, true, true, true, true, true, true, true],
  ));
  out.push('', 'SQL: the same statements through the raw mariadb driver (pool of the same size), no HTTP, express, ORM or JSON.');
  out.push('The load generator (autocannon) runs in the server\'s process and shares its event loop.', '');
  out.push(table(
    ['SQL statements per request', 'limit=1', 'limit=50', 'same', 'SQL baseline'],
    rows.filter((r) => r.queries).map(({ scenario, queries }) => [
      scenario.title, queries!.limit1 === undefined ? '-' : String(queries!.limit1), String(queries!.limit50),
      queries!.limit1 === undefined ? '-' : queries!.limit1 === queries!.limit50 ? 'yes' : 'NO',
      String(queries!.baseline ?? '-'),
    ]),
    [false, true, true, true, true],
  ));
  out.push('(Each request also runs the ban check and the token look-up: 2 of the statements.)', '');

  const problems: string[] = [];
  for (const { scenario, http, baseline, queries } of rows) {
    if (http && (http.non2xx || http.errors)) problems.push(`${scenario.title}: ${http.non2xx} non-2xx responses (${http.statuses}) and ${http.errors} errors/timeouts`);
    if (baseline?.errors) problems.push(`${scenario.title} (baseline): ${baseline.errors} failed operations, first: ${baseline.firstError}`);
    if (queries && queries.limit1 !== undefined && queries.limit1 !== queries.limit50) problems.push(`${scenario.title}: ${queries.limit1} statements at limit=1 but ${queries.limit50} at limit=50`);
    if (queries && queries.baseline !== undefined && queries.baseline !== queries.limit50) problems.push(`${scenario.title}: the baseline runs ${queries.baseline} statements, the request ${queries.limit50}`);
  }
  if (problems.length) out.push('!!! FAILURES !!!', ...problems.map((p) => `!!! ${p}`), '');
  process.stdout.write(`${out.join('\n')}\n`);
  return problems.length > 0;
}

main().then(
  (failed) => {
    // Everything is closed: the process would end by itself; the explicit exit guards against a
    // handle some library keeps open, and carries the status.
    process.exit(failed ? 1 : 0);
  },
  (err) => {
    process.stderr.write(`Benchmark failed: ${(err as Error).stack ?? err}\n`);
    process.exit(1);
  },
);
