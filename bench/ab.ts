// `./env` must stay the first import (see run.ts).
import { CONCURRENCY, SECONDS } from './env';
import { join } from 'node:path';
import { createToken, revokeToken } from '../src/auth/tokens';
import { nodeOptionsOf } from '../src/cli/procfile';
import { sequelize } from '../src/db/sequelize';
import { closeQueues } from '../src/queue/producer';
import { wire } from '../src/wiring';
import { treeCpuTicks } from '../test/helpers/progress';
import { loadgen, pinned, stop, waitFor } from './processes';
import { findTargets } from './data';
import { removeBenchBans, removeBenchReplies, removeBenchTickets, removeBenchUsers, ticketTargets } from './tickets';

/**
 * `node dist/bench/ab.js`: two web processes side by side on the benchmark's data set (seeded by
 * `npm run bench`), both pinned to core 0, loaded in turn from core 1, round after round: the CPU
 * milliseconds each spends per request, as the median of the rounds (and of req/s and p99). For
 * a change to the fixed cost of a request, which this machine's noise hides in two separate runs
 * of `npm run bench`. AB_GET: space-separated paths of other GET requests (`/api/...?...`), each a
 * scenario titled by its path.
 *
 * A and B differ by their build (AB_DIST_B: another checkout's dist directory; A is this one's)
 * and/or their environment (AB_ENV_A, AB_ENV_B: `NAME=value,NAME=value`). AB_ONLY: `|`-separated
 * substrings of the scenario titles; AB_ROUNDS (default 6). BENCH_SECONDS per load (default 5).
 * AB_FLAGS_A, AB_FLAGS_B: node flags of each side after the Procfile's (space-separated; flags
 * such as --single-threaded-gc that NODE_OPTIONS does not allow). AB_NODE_A, AB_NODE_B: the Node.js
 * binary each side runs on (this one's by default).
 *
 * The tickets and users its writes create stay in the data set (the IP bans and replies are
 * removed): the counts of later runs include them, so a growth table is taken on data sets
 * seeded again, not on one an A/B run has written to.
 */
const distA = join(__dirname, '..');
const distB = process.env.AB_DIST_B ?? distA;
const ROUNDS = Number(process.env.AB_ROUNDS ?? 6);
const log = (line: string) => process.stderr.write(`${line}\n`);
const envOf = (spec = ''): Record<string, string> => Object.fromEntries(spec.split(',').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  wire();
  const tt = await ticketTargets();
  const { showUserId } = await findTargets();
  const { token, record } = await createToken('benchmark a/b');
  const auth = { authorization: `Basic ${Buffer.from(`${token}:x`).toString('base64')}` };
  const form = { ...auth, 'content-type': 'application/x-www-form-urlencoded' };
  const tk = tt.ticket;
  const scenarios: { title: string; method: 'GET' | 'POST'; path: string; body?: string }[] = [
    { title: 'health', method: 'GET', path: '/health' },
    { title: 'show IP ban', method: 'GET', path: `/api/core/ipban/${tt.banId}` },
    { title: 'show user', method: 'GET', path: `/api/user/user/${showUserId}` },
    { title: 'show article', method: 'GET', path: `/api/selfservice/article/${tt.articleId}` },
    { title: 'list articles', method: 'GET', path: '/api/selfservice/article?limit=50' },
    { title: 'show ticket', method: 'GET', path: `/api/ticket/ticket/${tk.id}` },
    { title: 'messages of a ticket', method: 'GET', path: `/api/ticket/message?ticket_id=${tk.id}&limit=50` },
    { title: 'list tickets', method: 'GET', path: '/api/ticket/ticket?limit=50' },
    { title: 'export tickets', method: 'GET', path: '/api/export/tickets?limit=1000' },
    { title: 'create ticket', method: 'POST', path: '/api/ticket/ticket',
      body: `department=${tk.department_id}&status=${tk.status_id}&priority=${tk.priority_id}&user=${tt.writerId}&subject=Load+test+__SEQ__&text=The+printer+is+on+fire+__SEQ__.&send_user_email=0&send_operators_email=0` },
    { title: 'reply to a ticket', method: 'POST', path: '/api/ticket/message',
      body: `ticket_id=${tt.replied.id}&user_id=${tt.replied.user_id}&text=Any+news+__SEQ__%3F&send_user_email=0&send_operators_email=0` },
    // As bench/run.ts writes them: a user of a unique address, a ban of a unique 100.64/10 address.
    { title: 'create user', method: 'POST', path: '/api/user/user', body: 'firstname=Load&lastname=Test__SEQ__&email=bench-__SEQ__%40load.example' },
    { title: 'create IP ban', method: 'POST', path: '/api/core/ipban', body: 'ip=__IP__&type=1&reason=Benchmark+ban.' },
  ];
  // AB_GET: space-separated paths of GET requests to measure besides (each titled by its path).
  for (const path of (process.env.AB_GET ?? '').split(' ').filter(Boolean)) scenarios.push({ title: path, method: 'GET', path });
  const only = process.env.AB_ONLY?.split('|');
  const chosen = only ? scenarios.filter((s) => only.some((o) => s.title.includes(o))) : scenarios;
  const base = { LOG_LEVEL: 'silent', NODE_ENV: 'production', WEB_CONCURRENCY: '1' };
  const servers = [
    { name: 'A', port: 3370, dist: distA, env: envOf(process.env.AB_ENV_A), flags: process.env.AB_FLAGS_A, node: process.env.AB_NODE_A },
    { name: 'B', port: 3371, dist: distB, env: envOf(process.env.AB_ENV_B), flags: process.env.AB_FLAGS_B, node: process.env.AB_NODE_B },
  ].map((s) => ({ ...s, child: pinned('0', [...nodeOptionsOf('web'), ...(s.flags ?? '').split(' ').filter(Boolean), join(s.dist, 'src', 'server.js')], { ...base, ...s.env, PORT: String(s.port) }, s.node) }));
  try {
    await Promise.all([removeBenchBans(), removeBenchTickets(tt.writerId), removeBenchUsers()]);
    await Promise.all(servers.map((s) => waitFor(`http://127.0.0.1:${s.port}/health`, s.child)));
    for (const sc of chosen) {
      const cpu: Record<string, number[]> = { A: [], B: [] };
      const rate: Record<string, number[]> = { A: [], B: [] };
      const p99: Record<string, number[]> = { A: [], B: [] };
      for (let round = 0; round < ROUNDS; round++) {
        // Alternate which goes first, so a drift of the machine weighs on both alike.
        for (const s of round % 2 ? [...servers].reverse() : servers) {
          const l = { url: `http://127.0.0.1:${s.port}${sc.path}`, method: sc.method, headers: sc.body ? form : auth, body: sc.body, connections: CONCURRENCY };
          await loadgen({ ...l, seconds: 1 });
          const t0 = treeCpuTicks([s.child.pid!]);
          const r = await loadgen({ ...l, seconds: SECONDS });
          if (r.non2xx || r.errors) throw new Error(`${s.name} ${sc.title}: ${r.non2xx} non-2xx (${r.statuses}), ${r.errors} errors`);
          cpu[s.name].push((10 * (treeCpuTicks([s.child.pid!]) - t0)) / r.total);
          rate[s.name].push(r.rate);
          p99[s.name].push(r.p99);
        }
      }
      const [a, b] = [median(cpu.A), median(cpu.B)];
      process.stdout.write(`${sc.title.padEnd(22)} CPU ms/req A ${a.toFixed(3)}  B ${b.toFixed(3)}  B/A ${(b / a).toFixed(3)}   req/s A ${median(rate.A).toFixed(0)}  B ${median(rate.B).toFixed(0)}   p99 ms A ${median(p99.A)}  B ${median(p99.B)}   (A ${cpu.A.map((x) => x.toFixed(2)).join(' ')}; B ${cpu.B.map((x) => x.toFixed(2)).join(' ')})\n`);
    }
  } finally {
    await Promise.all(servers.map((s) => stop(s.child)));
    await Promise.all([removeBenchReplies([tk.id, tt.replied.id]), removeBenchBans(), removeBenchTickets(tt.writerId), removeBenchUsers()]);
    await revokeToken(String(record.id)).catch(() => undefined);
    await Promise.allSettled([closeQueues(), sequelize().close()]);
  }
}

main().then(() => process.exit(0), (err) => {
  log(err instanceof Error ? err.stack ?? err.message : String(err));
  process.exit(1);
});
