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

/**
 * The pids with their descendants: a server's work may be done by a child it started and waits
 * for (a Galera node joining runs its state transfer in an rsync of its own).
 */
function withDescendants(pids: number[]): number[] {
  if (!pids.length) return pids;
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch { /* gone meanwhile */ }
  }
  const all = new Set<number>();
  const visit = (pid: number) => {
    if (all.has(pid)) return;
    all.add(pid);
    for (const c of children.get(pid) ?? []) visit(c);
  };
  pids.forEach(visit);
  return [...all];
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
      const ticks = withDescendants(pids().filter((p): p is number => Boolean(p))).map(cpuTicks).reduce<number>((sum, t) => sum + (t ?? 0), 0);
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
