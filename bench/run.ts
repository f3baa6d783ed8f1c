// `./env` must stay the first import: it points the configuration at the benchmark's own database
// and queue prefix before any module of src/ reads it.
import { CONCURRENCY, SECONDS, TICKETS } from './env';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { QueryTypes } from 'sequelize';
import { capture } from './capture';
import { explainTicketLists, skipped, ticketListPaths } from './explain';
import { buildApp } from '../src/app';
import { createToken, revokeToken } from '../src/auth/tokens';
import { nodeOptionsOf } from '../src/cli/procfile';
import { prepareDatabase } from '../src/cli/setup';
import { config } from '../src/config';
import { Brand } from '../src/db/models';
import { sequelize } from '../src/db/sequelize';
import { closeQueues } from '../src/queue/producer';
import { wire } from '../src/wiring';
import type { CapturedScenario } from './baseline';
import { ensureBenchData, findTargets, SIZES } from './data';
import { fill, type LoadResult } from './loadgen';
import { num, table } from './table';
import { ensureTicketData, MESSAGES_PER_TICKET, mroongaTriggers, REPLY_TEXT, removeBenchBans, removeBenchReplies, removeBenchTickets, removeBenchUsers, ticketTargets } from './tickets';
import { mailboxThroughput } from './mailbox';
import { fillSearchServer, startSearchServer } from './searchServer';
import { loadgen, pinned, stop, takeSeq, TWO_CORES, waitFor } from './processes';
import { treeCpuTicks, withDescendants } from '../test/helpers/progress';

/**
 * `npm run bench`: the production web process (`node dist/src/server.js` with the node options
 * of the Procfile's web line, as the Procfile runs it) in a process of its own, pinned to core 0;
 * the baseline server (bench/baseline.ts: node:http and the raw mariadb driver replaying the
 * statements the web process runs for the same request, answering the same JSON) in another,
 * also on core 0; the load generator (autocannon's API, bench/loadgen.ts) in a third, pinned to
 * core 1. Every read is first loaded unmeasured on both (a second each), then each scenario
 * loads ours, then the baseline, in the same run. The web process's peak RSS is sampled from
 * /proc during its load.
 *
 * Environment: BENCH_TICKETS (default 1,000,000; 5 messages each), BENCH_YEARS (2: the tickets' age), BENCH_SECONDS (5),
 * BENCH_CONNECTIONS (16), BENCH_DATABASE_URL (default helpdesk_bench_t<tickets>[_y<years>]), BENCH_ONLY (a
 * substring of scenario titles), BENCH_SEED_ONLY=1 (seed the data set and stop), BENCH_SQL_LOG (a file: each scenario's statements as JSON), BENCH_QUICK=1
 * (no scaling or mailbox runs), BENCH_RESULTS (a file: the rows as JSON, for bench/growth.ts). Progress on stderr, the table on stdout. Exit 1 when a request
 * failed.
 */

const WARM_UP_SECONDS = 1;
/** BENCH_QUICK=1: no scaling runs, no mailbox import (the growth runs at 10k and 100k tickets). */
const QUICK = process.env.BENCH_QUICK === '1';
const PORT_WEB = 3360;
const PORT_BASELINE = 3361;
const log = (line: string) => process.stderr.write(`${line}\n`);
const distRoot = join(__dirname, '..');

interface Scenario {
  title: string;
  method: 'GET' | 'POST';
  path: string;
  /** POST: a form body template (see loadgen). */
  body?: string;
  write?: boolean;
}

/** Peak RSS of a process and its children (cluster workers), in MB: sampled every 100 ms. */
function rssSampler(pid: number) {
  let peakOne = 0;
  let peakTotal = 0;
  const read = (p: number): number => {
    try { return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0) / 1024; } catch { return 0; }
  };
  const timer = setInterval(() => {
    const all = withDescendants([pid]).map(read);
    peakOne = Math.max(peakOne, ...all);
    peakTotal = Math.max(peakTotal, all.reduce((a, b) => a + b, 0));
  }, 100);
  return { stop: () => { clearInterval(timer); return { peakOne, peakTotal }; } };
}

/**
 * CPU seconds (user and system) a process and its descendants (cluster workers) have used so far,
 * from /proc (clock ticks of 1/100 s): the CPU a scenario costs a server per request does not
 * depend on what else the machine runs, as its req/s does.
 */
const cpuSeconds = (pid: number): number => treeCpuTicks([pid]) / 100;

interface Row {
  s: Scenario;
  statements: number;
  ours?: LoadResult;
  base?: LoadResult;
  /** CPU milliseconds per request of our web process and of the baseline's. */
  cpu?: { ours: number; base: number };
  rss?: { peakOne: number; peakTotal: number };
}

async function main() {
  wire();
  const cfg = config();
  log(`Database ${cfg.database.name}; ${TICKETS.toLocaleString('en-GB')} tickets; ${SECONDS} s per measurement, ${CONCURRENCY} connections; ${TWO_CORES ? 'servers on core 0, load generator on core 1' : 'one core: nothing pinned'}.`);
  const stopSearchServer = await startSearchServer(log);
  await prepareDatabase();
  await ensureBenchData(log);
  await ensureTicketData(log);
  await fillSearchServer(log);
  conditions = await describeConditions();
  // BENCH_SEED_ONLY=1: the data set, then stop (seed a scale ahead of its run).
  if (process.env.BENCH_SEED_ONLY === '1') {
    log('The data set is ready (BENCH_SEED_ONLY=1: no scenario run).');
    await Promise.allSettled([closeQueues(), sequelize().close(), stopSearchServer()]);
    return false;
  }
  const t = await findTargets();
  const tt = await ticketTargets();
  const removeReplies = () => removeBenchReplies([tt.ticket.id, tt.replied.id]);
  // What the write scenarios wrote, before and after a run: the bans (after each write's row too),
  // the tickets (not between rows: the floor's replays of a create name the ticket its capture
  // made, its message's ticket_id), the people and the replies.
  const removeWrites = () => Promise.all([removeBenchBans(), removeBenchTickets(tt.writerId), removeBenchUsers()]);
  await Promise.all([removeWrites(), removeReplies()]);
  const brand = await Brand.findOne({ order: [['id', 'ASC']], rejectOnEmpty: true });
  const { token, record: tokenRecord } = await createToken('benchmark');
  const auth = { authorization: `Basic ${Buffer.from(`${token}:x`).toString('base64')}` };
  const enc = encodeURIComponent;
  const tk = tt.ticket;
  const all: Scenario[] = [
    // The floor of the stack: Express and the middleware every request passes (metrics, request
    // log, headers), no token, no statement: the fixed cost of a request, against node:http's.
    { title: 'health (the HTTP stack alone)', method: 'GET', path: '/health' },
    { title: 'list users', method: 'GET', path: '/api/user/user?limit=50' },
    // One counted filter's value (migration 066): the count a sum, not every user read.
    { title: 'list users: active', method: 'GET', path: '/api/user/user?active=1&limit=50' },
    { title: 'list users: a language', method: 'GET', path: '/api/user/user?language_code=en&limit=50' },
    // A part of a value (migration 068): one person's address, and a last name a twentieth of
    // everyone has, each read from its rarest gram's people, not from every person.
    { title: 'list users: search, one person', method: 'GET', path: `/api/user/user?search=${enc(t.email.split('@')[0])}&limit=50` },
    { title: 'list users: search, a last name', method: 'GET', path: '/api/user/user?search=Evans&limit=50' },
    // A deep page in another order than the id: a deferred join (loadPage), the ids from the
    // order's index, then the page's rows (not a scan and a sort of everyone).
    { title: 'list users: start=10,000, lastname asc', method: 'GET', path: '/api/user/user?start=10000&order_column=lastname&limit=50' },
    { title: 'show user', method: 'GET', path: `/api/user/user/${t.showUserId}` },
    { title: 'list organisations', method: 'GET', path: '/api/user/organisation?limit=50' },
    { title: 'show organisation', method: 'GET', path: `/api/user/organisation/${tt.organisationId}` },
    { title: 'list IP bans', method: 'GET', path: '/api/core/ipban?limit=50' },
    { title: 'list IP bans: start=2,500, updated_at desc', method: 'GET', path: '/api/core/ipban?start=2500&order_column=updated_at&order_direction=desc&limit=50' },
    { title: 'show IP ban', method: 'GET', path: `/api/core/ipban/${tt.banId}` },
    { title: 'list tickets', method: 'GET', path: '/api/ticket/ticket?limit=50' },
    { title: 'show ticket', method: 'GET', path: `/api/ticket/ticket/${tk.id}` },
    { title: 'messages of a ticket', method: 'GET', path: `/api/ticket/message?ticket_id=${tk.id}&limit=50` },
    // Every filter, pair, order, deep and keyset page and search of the ticket list (bench/explain.ts).
    ...ticketListPaths(tt, process.env.BENCH_ALL_ORDERS === '1').filter(([title]) => !skipped(title)).map(([title, path]): Scenario => ({ title, method: 'GET', path })),
    // The incremental export's first page of 1,000 tickets (bench/export.ts times pages across the data set, with EXPLAIN).
    { title: 'export tickets (a page of 1,000)', method: 'GET', path: '/api/export/tickets?limit=1000' },
    { title: 'list articles', method: 'GET', path: '/api/selfservice/article?limit=50' },
    { title: 'show article', method: 'GET', path: `/api/selfservice/article/${tt.articleId}` },
    { title: 'create IP ban', method: 'POST', write: true, path: '/api/core/ipban', body: 'ip=__IP__&type=1&reason=Benchmark+ban.' },
    { title: 'create user', method: 'POST', write: true, path: '/api/user/user', body: `brand=${brand.id}&firstname=Load&lastname=Test__SEQ__&email=bench-__SEQ__%40load.example` },
    { title: 'create ticket (with message)', method: 'POST', write: true, path: '/api/ticket/ticket',
      body: `department=${tk.department_id}&status=${tk.status_id}&priority=${tk.priority_id}&user=${tt.writerId}&subject=Load+test+__SEQ__&text=The+printer+is+on+fire+__SEQ__.&send_user_email=0&send_operators_email=0` },
    { title: 'reply to a ticket', method: 'POST', write: true, path: '/api/ticket/message',
      body: `ticket_id=${tt.replied.id}&user_id=${tt.replied.user_id}&text=${enc(REPLY_TEXT)}&send_user_email=0&send_operators_email=0` },
  ];
  const only = process.env.BENCH_ONLY;
  // Alternatives separated by `|`: `BENCH_ONLY='show ticket|messages'`.
  const list = only ? all.filter((s) => only.split('|').some((part) => s.title.includes(part))) : all;
  const form = { ...auth, 'content-type': 'application/x-www-form-urlencoded' };

  // 1. Capture, in this process, what the app runs and answers for each request (after two warm
  //    calls, so caches are as under load): the baseline server replays it.
  const app = buildApp();
  const server = await new Promise<import('node:http').Server>((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const call = async (s: Scenario, seq: number) => {
    const res = await fetch(base + s.path, s.body ? { method: 'POST', headers: { ...form, 'x-bench-seq': String(seq) }, body: fill(s.body, seq) } : { headers: auth });
    const body = await res.json() as { status: string; message: string | null; data: any };
    if (res.status !== 200 || body.status !== 'success') throw new Error(`${s.method} ${s.path}: ${res.status} ${body.message}`);
    return { status: res.status, body };
  };
  const captured: CapturedScenario[] = [];
  const rows: Row[] = [];
  for (const s of list) {
    await call(s, takeSeq());
    await call(s, takeSeq());
    const seq = takeSeq();
    const { result, statements } = await capture(() => call(s, seq));
    // Values the app made up for this request that a unique key holds: the ticket number, and the
    // random placeholder a new ticket holds until its number is assigned (`~` and 32 hex digits).
    const placeholders = statements.flatMap((st) => [...Object.values(st.params ?? []).flat(), ...(st.sql.match(/~[0-9a-f]{32}/g) ?? [])])
      .filter((v): v is string => typeof v === 'string' && /^~[0-9a-f]{32}$/.test(v));
    const extra = s.path === '/api/ticket/ticket' && s.method === 'POST' ? [String(result.body.data.number), ...new Set(placeholders)] : [];
    captured.push({ method: s.method, path: s.path, status: result.status, body: result.body, statements, seq: s.body ? seq : undefined, extra });
    rows.push({ s, statements: statements.length });
  }
  // BENCH_SQL_LOG=<file>: the statements each scenario ran, as JSON (what the baseline replays).
  if (process.env.BENCH_SQL_LOG) writeFileSync(process.env.BENCH_SQL_LOG, JSON.stringify(captured.map((c, i) => ({ title: list[i].title, statements: c.statements })), null, 1));
  // EXPLAIN of each ticket list, on the statements the app itself runs.
  log('explaining the ticket lists...');
  const explained = await explainTicketLists((path) => fetch(base + path, { headers: auth }).then((r) => r.json() as Promise<{ count?: number }>), tt);
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await removeBenchBans();
  const captureFile = join(tmpdir(), `helpdesk-bench-capture-${process.pid}.json`);
  writeFileSync(captureFile, JSON.stringify(captured));

  // 2. The servers, each a process of its own.
  // The rate limits are out of reach (bench/env.ts), inherited with the rest of this environment.
  const env = { PORT: String(PORT_WEB), LOG_LEVEL: 'silent', NODE_ENV: 'production' };
  // BENCH_PROFILE=<dir>: the (first) web process writes a V8 CPU profile there when it stops;
  // `node dist/bench/profile.js <file>` summarises it.
  const profileDir = process.env.BENCH_PROFILE;
  let profiled = false;
  const startWeb = async (workers: number, core: string) => {
    const prof = profileDir && !profiled ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
    profiled = true;
    const web = pinned(core, [...nodeOptionsOf('web'), ...prof, join(distRoot, 'src', 'server.js')], { ...env, WEB_CONCURRENCY: String(workers) });
    await waitFor(`http://127.0.0.1:${PORT_WEB}/health`, web).catch(async (err) => { await stop(web); throw err; });
    return web;
  };
  const baseline = pinned('0', [join(distRoot, 'bench', 'baseline.js'), captureFile], { PORT: String(PORT_BASELINE) });
  let web = await startWeb(1, '0').catch(async (err) => { await stop(baseline); throw err; });
  let failed = false;
  try {
    await waitFor(`http://127.0.0.1:${PORT_BASELINE}/`, baseline);
    const drainPath = `/api/core/ipban/${tt.banId}`;
    // Requests the server still holds (a scenario slower than the measurement, such as search
    // at scale) must not weigh on the next one: one request through the database pool, whose
    // queue is first in first out, returns once they are through.
    const drain = (port: number) => fetch(`http://127.0.0.1:${port}${drainPath}`, { headers: auth }).then((r) => r.arrayBuffer()).catch(() => undefined);
    const loadOf = (port: number, s: Scenario) => ({ url: `http://127.0.0.1:${port}${s.path}`, method: s.method, headers: s.body ? form : auth, body: s.body, connections: CONCURRENCY });
    const measure = async (port: number, s: Scenario, pid: number | undefined, sampleRss = true) => {
      const load = loadOf(port, s);
      await loadgen({ ...load, seconds: WARM_UP_SECONDS });
      const sampler = pid && sampleRss ? rssSampler(pid) : null;
      const cpu0 = pid ? cpuSeconds(pid) : 0;
      const result = await loadgen({ ...load, seconds: SECONDS });
      const cpuMs = pid && result.total ? (1000 * (cpuSeconds(pid) - cpu0)) / result.total : NaN;
      const rss = sampler?.stop();
      await drain(port);
      return { result, rss, cpuMs };
    };
    // A request slower than a second (a common word's search at scale with InnoDB's FULLTEXT)
    // would keep sixteen of them in flight for minutes: such a scenario is timed one request at
    // a time, three times (p50 the median, p99 the slowest).
    const oneAtATime = async (port: number, s: Scenario): Promise<LoadResult> => {
      const times: number[] = [];
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        await fetch(`http://127.0.0.1:${port}${s.path}`, { headers: auth }).then((r) => r.arrayBuffer());
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      return { rate: 1000 / (times.reduce((a, b) => a + b, 0) / times.length), p50: times[1], p99: times[2], total: 3, non2xx: 0, statuses: '', errors: 0 };
    };
    // A pass over the reads before any is measured, WARM_UP_SECONDS each on both servers: else
    // the table's first rows measured a web process seconds old, its code not yet optimised and
    // the database's pages of those scenarios not yet read (`list users`, the second row, 3.4 ms
    // of CPU a request; 2.0 once warm, bench/ab.ts). It also finds the reads slower than a second.
    const slow = new Set<Row>();
    for (const row of rows.filter((r) => r.s.method === 'GET')) {
      log(`warming: ${row.s.title}...`);
      const t0 = performance.now();
      await fetch(`http://127.0.0.1:${PORT_WEB}${row.s.path}`, { headers: auth }).then((r) => r.arrayBuffer());
      if (performance.now() - t0 > 1000) slow.add(row);
      else {
        for (const port of [PORT_WEB, PORT_BASELINE]) {
          await loadgen({ ...loadOf(port, row.s), seconds: WARM_UP_SECONDS });
          await drain(port);
        }
      }
    }
    for (const row of rows) {
      log(`${row.s.title}...`);
      if (slow.has(row)) {
        row.s = { ...row.s, title: `${row.s.title} (one at a time)` };
        row.ours = await oneAtATime(PORT_WEB, row.s);
        row.base = await oneAtATime(PORT_BASELINE, row.s);
        continue;
      }
      const ours = await measure(PORT_WEB, row.s, web.pid);
      row.ours = ours.result;
      row.rss = ours.rss;
      // The floor's replies go to the ticket ours just replied to: without ours' replies taken
      // away first, it met a longer thread (with the Mroonga index, before a thread was kept in
      // pieces, a message's write grew with it: docs/benchmark.md).
      if (row.s.write) await removeReplies();
      const base = await measure(PORT_BASELINE, row.s, baseline.pid, false);
      row.base = base.result;
      row.cpu = { ours: ours.cpuMs, base: base.cpuMs };
      if (row.s.write) await removeBenchBans();
    }
    // Scaling: one and two web processes (node:cluster), both cores for the servers. The load
    // generator shares core 1 with the second worker, so this shows what a second worker buys on
    // this machine, not a clean 2x.
    const scaling: Array<{ workers: number; s: Scenario; r: LoadResult; rss: { peakOne: number; peakTotal: number } }> = [];
    if (!only && TWO_CORES && !QUICK) {
      for (const workers of [1, 2]) {
        await stop(web);
        web = await startWeb(workers, '0,1');
        for (const s of list.filter((x) => x.title === 'list tickets' || x.title === 'show ticket')) {
          log(`${s.title}, WEB_CONCURRENCY=${workers}...`);
          const m = await measure(PORT_WEB, s, web.pid);
          scaling.push({ workers, s, r: m.result, rss: m.rss! });
        }
      }
    }
    failed = report(rows, scaling);
    process.stdout.write(`\nPlans of the ticket lists (EXPLAIN; !! marks a full scan or a sort of more than the page): ${explained.failing} not ok\n\n${explained.text}\n`);
    if (process.env.BENCH_RESULTS) {
      const results = rows.map((r) => ({ title: r.s.title, statements: r.statements, ours: r.ours, base: r.base, cpu: r.cpu, count: explained.counts.get(r.s.path) }));
      writeFileSync(process.env.BENCH_RESULTS, JSON.stringify({ tickets: TICKETS, seconds: SECONDS, rows: results }));
    }
    if (!QUICK && (!only || 'mailbox'.includes(only))) {
      log('importing a mailbox of 1,000 mails...');
      process.stdout.write(`\nMail import (the mailbox worker, bench/mailbox.ts):\n\n${await mailboxThroughput()}\n`);
    }
  } finally {
    await Promise.allSettled([stop(web), stop(baseline)]);
    await revokeToken(String(tokenRecord.id)).catch(() => undefined);
    await Promise.all([removeWrites(), removeReplies()]).catch(() => undefined);
    rmSync(captureFile, { force: true });
    await Promise.allSettled([closeQueues(), sequelize().close(), stopSearchServer()]);
  }
  return failed;
}

/** What the run measured on: the search engine, MariaDB's buffer pool, and the machine's load average at the start. */
let conditions = '';
async function describeConditions(): Promise<string> {
  const [row] = await sequelize().query<{ pool: number | string }>('SELECT @@innodb_buffer_pool_size AS pool', { type: QueryTypes.SELECT });
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  // The Mroonga index, once filled, stays with its triggers whatever the engine (docs/performance.md,
  // Search), and every ticket and message written then updates it: the write rows pay for it.
  const mroonga = config().searchEngine !== 'mroonga' && (await mroongaTriggers()).length
    ? ' (the Mroonga index and its triggers are in the data set: every write keeps them)' : '';
  // Both servers run on this process's Node.js (processes.ts): `npm run bench`, the one npm installs.
  return `Node.js ${process.versions.node}, SEARCH_ENGINE=${config().searchEngine}${mroonga}, InnoDB buffer pool ${num(Number(row.pool) / 2 ** 20)} MB, load average ${load} at the start`;
}

function report(rows: Row[], scaling: Array<{ workers: number; s: Scenario; r: LoadResult; rss: { peakOne: number; peakTotal: number } }>): boolean {
  const ms = (v: number | undefined) => num(v, 1);
  const bad = (r?: LoadResult) => (r ? r.non2xx + r.errors : 0);
  const out: string[] = [];
  out.push('', `helpdesk API benchmark: ${num(TICKETS)} tickets, ${num(TICKETS * MESSAGES_PER_TICKET)} messages, ${num(SIZES.users)} users, ${num(SIZES.organisations)} organisations, ${num(SIZES.ipBans)} IP bans; ${CONCURRENCY} connections, ${SECONDS} s each`, conditions, '');
  out.push(table(
    ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'baseline req/s', 'p50', 'p99', 'ours/baseline', 'CPU ms/req', 'baseline', 'baseline/ours CPU', 'statements', 'web peak RSS MB', 'errors'],
    rows.map(({ s, ours, base, statements, rss, cpu }) => [
      s.title, num(ours?.rate), ms(ours?.p50), ms(ours?.p99), num(base?.rate), ms(base?.p50), ms(base?.p99),
      ours && base ? `${num((100 * ours.rate) / base.rate)}%` : '-',
      cpu ? num(cpu.ours, 2) : '-', cpu ? num(cpu.base, 2) : '-', cpu && cpu.ours > 0 ? `${num((100 * cpu.base) / cpu.ours)}%` : '-',
      String(statements), num(rss?.peakOne), bad(ours) + bad(base) ? `${bad(ours)}/${bad(base)} !!` : '0',
    ]),
    [false, true, true, true, true, true, true, true, true, true, true, true, true, true],
  ));
  if (scaling.length) {
    out.push('', table(
      ['scaling (servers on both cores)', 'WEB_CONCURRENCY', 'req/s', 'p50 ms', 'p99 ms', 'peak RSS MB (largest / all)'],
      scaling.map(({ workers, s, r, rss }) => [s.title, String(workers), num(r.rate), ms(r.p50), ms(r.p99), `${num(rss.peakOne)} / ${num(rss.peakTotal)}`]),
      [false, true, true, true, true, true],
    ));
  }
  out.push('');
  const problems = rows.flatMap(({ s, ours, base }) => [
    ...(bad(ours) ? [`${s.title}: ${ours!.non2xx} non-2xx (${ours!.statuses}), ${ours!.errors} errors`] : []),
    ...(bad(base) ? [`${s.title} (baseline): ${base!.non2xx} non-2xx (${base!.statuses}), ${base!.errors} errors`] : []),
  ]);
  if (problems.length) out.push('!!! FAILURES !!!', ...problems.map((p) => `!!! ${p}`), '');
  process.stdout.write(`${out.join('\n')}\n`);
  return problems.length > 0;
}

main().then(
  (failed) => process.exit(failed ? 1 : 0),
  (err) => {
    // A driver error's message is on its `parent` (Sequelize's own stack says only `Error`).
    process.stderr.write(`Benchmark failed: ${(err as { parent?: Error }).parent?.message ?? ''}\n${(err as Error).stack ?? err}\n`);
    process.exit(1);
  },
);
