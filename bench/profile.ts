import { readFileSync } from 'node:fs';

/**
 * `node dist/bench/profile.js <file.cpuprofile> [n]`: the functions with the most self time in a
 * V8 CPU profile (`node --cpu-prof`, which `BENCH_PROFILE=1 npm run bench` passes to the web
 * process), as a table: share of samples, function, file:line. Idle and GC are listed as such.
 */
interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; }
const [file, n = '25'] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: Node[]; samples: number[] };
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const self = new Map<string, number>();
for (const id of profile.samples) {
  const f = byId.get(id)!.callFrame;
  // A package's files by package path (mariadb's driver is node_modules/mariadb/dist/...), the
  // project's own compiled files as dist/...
  const path = f.url.replace(/^file:\/\//, '');
  const url = path.includes('/node_modules/') ? path.replace(/.*node_modules\//, '') : path.replace(/.*\/dist\//, 'dist/');
  const key = `${f.functionName || '(anonymous)'}  ${url ? `${url}:${f.lineNumber + 1}` : ''}`;
  self.set(key, (self.get(key) ?? 0) + 1);
}
const total = profile.samples.length;
const busy = total - (self.get('(idle)  ') ?? 0);
process.stdout.write(`${total} samples, ${((100 * busy) / total).toFixed(0)}% busy; self time as a share of busy samples:\n`);
for (const [key, count] of [...self].filter(([k]) => !k.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, Number(n))) {
  process.stdout.write(`${((100 * count) / busy).toFixed(1).padStart(5)}%  ${key}\n`);
}
// By package: where the busy time goes.
const pkg = new Map<string, number>();
for (const [key, count] of self) {
  if (key.startsWith('(idle)')) continue;
  const url = key.split('  ')[1] ?? '';
  const p = url.startsWith('dist/') ? 'app (dist/)' : url.startsWith('node:') ? 'node core' : url ? url.split('/')[0].replace(/^@.*/, (s) => s) : key.split('  ')[0];
  pkg.set(p, (pkg.get(p) ?? 0) + count);
}
process.stdout.write('\nby package:\n');
for (const [p, count] of [...pkg].sort((a, b) => b[1] - a[1]).slice(0, 12)) process.stdout.write(`${((100 * count) / busy).toFixed(1).padStart(5)}%  ${p}\n`);
