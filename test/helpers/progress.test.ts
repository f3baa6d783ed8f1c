import { spawn, type ChildProcess } from 'node:child_process';
import { cpuTicks, treeCpuTicks, waitWhileProgressing, withDescendants } from './progress';

/** The progress watch reads only the watched processes and their descendants in /proc. */
let shell: ChildProcess | undefined;
let started: number[] = [];

afterEach(async () => {
  for (const pid of started.reverse()) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
  }
  if (shell && shell.exitCode === null && shell.signalCode === null) await new Promise((r) => shell!.once('exit', r));
  started = [];
  shell = undefined;
});

describe('progress helpers', () => {
  it('find a grandchild and count the CPU it uses', async () => {
    // The shell forks a subshell that spins: a grandchild of this process, which the shell waits for.
    shell = spawn('sh', ['-c', 'while :; do :; done & wait'], { stdio: 'ignore' });
    const pid = shell.pid!;
    const tree = await waitWhileProgressing(() => {
      const pids = withDescendants([pid]);
      return pids.length === 2 ? pids : null;
    }, () => [pid], 'the subshell');
    started = [...tree];
    expect(tree[0]).toBe(pid);
    // The shell itself only waits: the CPU the tree counts beyond its own is the grandchild's.
    await waitWhileProgressing(() => treeCpuTicks([pid]) - (cpuTicks(pid) ?? 0) >= 5, () => [tree[1]], 'the subshell to use 50 ms of CPU');
    expect(cpuTicks(pid)).not.toBeNull();
  });

  it('count nothing for a process that is gone', async () => {
    shell = spawn('true', { stdio: 'ignore' });
    const pid = shell.pid!;
    await new Promise((r) => shell!.once('exit', r));
    expect(withDescendants([pid])).toEqual([pid]);
    expect(cpuTicks(pid)).toBeNull();
    expect(treeCpuTicks([pid])).toBe(0);
  });
});
