import { readFileSync, readdirSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';

/**
 * Waits bounded by progress rather than by a guess: a child process is given up on only when it
 * has used no CPU for `idleMs` (it is stuck, not slow: on a loaded machine a slow process still
 * makes progress), or after `maxMs` whatever it does.
 */
export interface ProgressBounds { idleMs?: number; maxMs?: number }
const DEFAULTS = { idleMs: 15000, maxMs: 240000 };

/** CPU time (clock ticks) a process and its waited-for children used, or null once it is gone. */
export function cpuTicks(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    // /proc/<pid>/stat: the fields after the command name, `(...)`, which may hold spaces.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  } catch {
    return null;
  }
}

/** The live children of a process: those of each of its threads (a server may start one from any thread). */
function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
      try { return readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number); } catch { return []; }
    });
  } catch {
    return []; // gone meanwhile
  }
}

/**
 * The pids with their descendants: a server's work may be done by a child it started and waits
 * for (a Galera node joining runs its state transfer in an rsync of its own). Only these
 * processes' entries in /proc are read.
 */
export function withDescendants(pids: number[]): number[] {
  const all = new Set<number>();
  const visit = (pid: number) => {
    if (all.has(pid)) return;
    all.add(pid);
    childrenOf(pid).forEach(visit);
  };
  pids.forEach(visit);
  return [...all];
}

/** CPU time (clock ticks) the processes and their descendants, live or waited for, used so far. */
export function treeCpuTicks(pids: number[]): number {
  return withDescendants(pids).map(cpuTicks).reduce<number>((sum, t) => sum + (t ?? 0), 0);
}

/** A watch on processes' CPU progress (their descendants' too): `stalled()` says whether the bounds are passed. */
export function progressWatch(pids: () => Array<number | undefined>, bounds: ProgressBounds = {}) {
  const { idleMs, maxMs } = { ...DEFAULTS, ...bounds };
  const started = Date.now();
  let last = -1;
  let lastChange = started;
  return {
    stalled(): string | null {
      const now = Date.now();
      const ticks = treeCpuTicks(pids().filter((p): p is number => Boolean(p)));
      if (ticks !== last) {
        last = ticks;
        lastChange = now;
      }
      if (now - lastChange > idleMs) return `no CPU progress for ${idleMs} ms`;
      if (now - started > maxMs) return `still going after ${maxMs} ms`;
      return null;
    },
  };
}

/** Kills `child` (SIGKILL) once it stalls; returns a function that stops watching. */
export function killWhenStalled(child: ChildProcess, bounds: ProgressBounds = {}): () => void {
  const watch = progressWatch(() => [child.pid], bounds);
  const timer = setInterval(() => {
    if (watch.stalled()) child.kill('SIGKILL');
  }, 250);
  const stop = () => clearInterval(timer);
  child.once('exit', stop);
  return stop;
}

/** Polls `check` until it returns a truthy value; fails once the watched processes stall. */
export async function waitWhileProgressing<T>(check: () => T | Promise<T>, pids: () => Array<number | undefined>, what: string, bounds: ProgressBounds = {}): Promise<NonNullable<T>> {
  const watch = progressWatch(pids, bounds);
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    const why = watch.stalled();
    if (why) throw new Error(`Gave up waiting for ${what}: ${why}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
