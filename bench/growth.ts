import { readFileSync } from 'node:fs';
import { num, table } from './table';

/**
 * `node dist/bench/growth.js <latency.json>...`: runs of bench/latency.ts at several scales side
 * by side: per ticket list, the median time of one request (ms) and its statements at each scale.
 * Flat is the goal.
 */
interface Run { tickets: number; rows: Array<{ title: string; statements: number; count?: number; p50: number; max: number }> }

// Deep pages start half-way (or a tenth of the way) through each scale's tickets: one row each.
const key = (title: string) => title.replace(/start=[\d,]+/, 'start=(deep)');
const runs = (process.argv.slice(2).map((f) => JSON.parse(readFileSync(f, 'utf8'))) as Run[])
  .map((r) => ({ ...r, rows: r.rows.map((x) => ({ ...x, title: key(x.title) })) }))
  .sort((a, b) => a.tickets - b.tickets);
if (!runs.length) throw new Error('usage: growth.js <latency.json>...');
const titles = [...new Set(runs.flatMap((r) => r.rows.map((x) => x.title)))];
const scale = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M` : `${n / 1000}k`);
const header = ['ticket list', ...runs.map((r) => `ms ${scale(r.tickets)}`), ...runs.map((r) => `count ${scale(r.tickets)}`), 'statements'];
const rows = titles.map((title) => {
  const at = runs.map((r) => r.rows.find((x) => x.title === title));
  return [title, ...at.map((x) => num(x?.p50, 1)), ...at.map((x) => num(x?.count)), [...new Set(at.map((x) => x?.statements ?? '-'))].join('/')];
});
process.stdout.write(`${table(header, rows, header.map((_, i) => i > 0))}\n`);
