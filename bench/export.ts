// `./env` must stay the first import (see run.ts).
import { TICKETS } from './env';
import { QueryTypes } from 'sequelize';
import { capture } from './capture';
import { table } from './table';
import { readPage, startAt } from '../src/export/feed';
import { sequelize } from '../src/db/sequelize';
import { closeQueues } from '../src/queue/producer';
import { ticketResource } from '../src/ticket/tickets/resource';
import { ticketSearchCondition } from '../src/ticket/tickets/search/compile';
import { SMALL_DEPARTMENT } from './tickets';

/**
 * `node dist/bench/export.js` (BENCH_TICKETS picks the data set, seeded by `npm run bench`): a
 * page of 1,000 tickets of the incremental export (src/export/feed.ts), from the beginning, from
 * the middle and near the end of the `updated_at` order, each timed one at a time (BENCH_REPEAT
 * times after two warm calls: the statements, the presentation as `show` presents a ticket, and
 * the JSON), with its statements and the EXPLAIN of each SELECT and a verdict. Read-only: it
 * writes nothing to the data set (no token: it calls what the route calls, in this process).
 * Then the same pages narrowed by a search a thousandth of the tickets match and no index of its
 * own serves (the small department by name: a recursive subquery the optimiser cannot size, so it
 * walks the change order) and by one half of them match (a status): each reads at most
 * EXPORT_SEARCH_SPAN tickets.
 */
const REPEAT = Number(process.env.BENCH_REPEAT ?? 10);
const LIMIT = 1000;

const select = <T extends object>(sql: string, replacements: unknown[] | Record<string, unknown> = []) => sequelize().query<T>(sql, { replacements, type: QueryTypes.SELECT });

/** What in a plan reads more than the page: a full scan, a filesort. */
function verdict(plan: Array<Record<string, any>>): string {
  const problems = plan.flatMap((p) => [
    p.type === 'ALL' && Number(p.rows) > LIMIT ? `full scan of ${p.table} (~${p.rows} rows)` : null,
    /filesort/.test(String(p.Extra)) && Number(p.rows) > LIMIT + 1 ? `filesort of ~${p.rows} rows (${p.table})` : null,
  ].filter((x): x is string => !!x));
  return problems.length ? `!! ${problems.join('; ')}` : 'ok';
}

async function main() {
  // Start times: the first change, the median and the last tenth of the tickets' updated_at.
  const at = async (fraction: number) => Number((await select<{ u: number }>(
    'SELECT updated_at AS u FROM tickets WHERE id >= (SELECT MIN(id) FROM tickets) + ? ORDER BY id LIMIT 1', [Math.floor(TICKETS * fraction)],
  ))[0]?.u ?? 0);
  const starts: Array<[string, number]> = [['from the beginning', 0], ['from the middle', await at(0.5)], ['near the end', await at(0.9)]];
  const searches: Array<[string, string | null]> = [['', null], [', search=the small department by name', `department:"${SMALL_DEPARTMENT}"`], [', search=status:1 (half match)', 'status:1']];
  const source = { resource: 'tickets' as const, def: ticketResource };
  const rows: string[][] = [];
  const plans: string[][] = [];
  for (const [named, search] of searches) for (const [at_, start] of starts) {
    const title = `${at_}${named}`;
    const filter = search ? await ticketSearchCondition(search) : undefined;
    const from = startAt(start);
    const page = () => readPage(source, from, LIMIT, () => true, filter).then((p) => JSON.stringify({ status: 'success', message: null, data: p }));
    await page();
    const { result, statements } = await capture(page);
    const times: number[] = [];
    for (let i = 0; i < REPEAT; i++) {
      const t = performance.now();
      await page();
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    // The records' statement alone, replayed: what an index on (updated_at, id) would save of the page.
    const records = statements.find((st) => /^SELECT/i.test(st.sql) && /FROM `tickets`/.test(st.sql) && /_fingerprint/.test(st.sql));
    const sqlTimes: number[] = [];
    for (let i = 0; records && i < Math.min(REPEAT, 5); i++) {
      const t = performance.now();
      await select(records.sql, records.params ?? []);
      sqlTimes.push(performance.now() - t);
    }
    sqlTimes.sort((a, b) => a - b);
    const data = JSON.parse(result).data as { records: unknown[]; tombstones: unknown[] };
    rows.push([title, String(data.records.length + data.tombstones.length), String(statements.length),
      times[Math.floor(times.length / 2)].toFixed(0), times[Math.floor(times.length * 0.95)]?.toFixed(0) ?? '-', times[times.length - 1].toFixed(0),
      sqlTimes.length ? sqlTimes[Math.floor(sqlTimes.length / 2)].toFixed(0) : '-']);
    for (const st of statements.filter((s) => /^SELECT/i.test(s.sql) && /FROM (`tickets`|export_tombstones)/.test(s.sql))) {
      const plan = await select<Record<string, any>>(`EXPLAIN ${st.sql}`, st.params ?? []);
      const access = plan.map((p) => `${p.table}:${p.type}${p.key ? `(${p.key})` : ''}${p.Extra ? ` [${p.Extra}]` : ''}`).join(' ');
      plans.push([title, /export_tombstones/.test(st.sql) ? 'tombstones' : 'records', access, verdict(plan)]);
    }
  }
  process.stdout.write(`Export of ${TICKETS.toLocaleString('en-GB')} tickets, pages of ${LIMIT} (ms, ${REPEAT} runs each):\n\n`);
  process.stdout.write(`${table(['page', 'items', 'statements', 'p50', 'p95', 'max', 'records statement alone p50'], rows, [false, true, true, true, true, true, true])}\n\n`);
  process.stdout.write(`${table(['page', 'statement', 'access (type(key) [extra])', 'verdict'], plans, [false, false, false, false])}\n`);
  await Promise.allSettled([closeQueues(), sequelize().close()]);
}

main().then(() => process.exit(0), (err) => { process.stderr.write(`${(err as Error).stack}\n`); process.exit(1); });
