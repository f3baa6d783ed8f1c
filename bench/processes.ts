import { spawn, type ChildProcess } from 'node:child_process';
import { cpus } from 'node:os';
import { join } from 'node:path';
import type { Load, LoadResult } from './loadgen';

/**
 * The benchmark's processes (run.ts, ab.ts): servers pinned to core 0 and the load generator to
 * core 1 where there are two cores, so none shares an event loop or a core with what it measures.
 */
export const TWO_CORES = cpus().length >= 2;
const distRoot = join(__dirname, '..');

export function pinned(core: string, args: string[], env: NodeJS.ProcessEnv, node = process.execPath): ChildProcess {
  const [cmd, argv] = TWO_CORES ? ['taskset', ['-c', core, node, ...args]] : [node, args];
  return spawn(cmd, argv, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
}

export async function waitFor(url: string, child: ChildProcess) {
  // A minute: on a loaded machine the web process takes a while to load.
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`${url}: the process exited with ${child.exitCode}`);
    try { await fetch(url); return; } catch { await new Promise((r) => setTimeout(r, 100)); }
  }
  throw new Error(`${url} did not answer`);
}

export async function stop(child: ChildProcess) {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

let seqBase = 100_000_000 + Math.floor(Math.random() * 800_000_000);

/** `n` sequence numbers of the run's own (a write's unique values come from them: loadgen.ts). */
export function takeSeq(n = 1): number {
  const seq = seqBase;
  seqBase += n;
  return seq;
}

/** One load (bench/loadgen.ts) from core 1; each run's sequence numbers are its own (writes create distinct records). */
export async function loadgen(load: Omit<Load, 'seq'>): Promise<LoadResult> {
  const seq = takeSeq(2_000_000);
  const child = pinned('1', [join(distRoot, 'bench', 'loadgen.js'), JSON.stringify({ ...load, seq })], {});
  let out = '';
  child.stdout!.on('data', (c) => { out += c; });
  const code = await new Promise((r) => child.once('exit', r));
  if (code !== 0) throw new Error(`loadgen exited with ${code}`);
  return JSON.parse(out.trim().split('\n').pop()!) as LoadResult;
}
