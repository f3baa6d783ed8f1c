import { readFileSync } from 'node:fs';
import type { LoadResult } from './loadgen';
import { num, table } from './table';

/**
 * `node dist/bench/growth.js <results.json>...`: the runs of `npm run bench` at several scales
 * (each written with BENCH_RESULTS) side by side: per scenario, p50 and p99 at each scale and our
 * req/s as a share of the floor's (the baseline server). Flat is the goal.
 */
interface Run { tickets: number; rows: Array<{ title: string; statements: number; ours?: LoadResult; base?: LoadResult; count?: number }> }

const runs = process.argv.slice(2).map((f) => JSON.parse(readFileSync(f, 'utf8')) as Run).sort((a, b) => a.tickets - b.tickets);
if (!runs.length) throw new Error('usage: growth.js <results.json>...');
const titles = [...new Set(runs.flatMap((r) => r.rows.map((x) => x.title)))];
const scale = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M` : `${n / 1000}k`);
const header = ['scenario', ...runs.flatMap((r) => [`p50 ${scale(r.tickets)}`, `p99 ${scale(r.tickets)}`, `of floor ${scale(r.tickets)}`])];
const rows = titles.map((title) => [title, ...runs.flatMap((r) => {
  const row = r.rows.find((x) => x.title === title);
  const share = row?.ours && row.base ? `${num((100 * row.ours.rate) / row.base.rate)}%` : '-';
  return [num(row?.ours?.p50, 1), num(row?.ours?.p99, 1), share];
})]);
process.stdout.write(`${table(header, rows, header.map((_, i) => i > 0))}\n`);
