import { logger } from '../logger';

/** What `npm start` (src/cli/start.ts) tells each process it runs: its own pid. */
export const SUPERVISOR_PID_VARIABLE = 'NPM_START_PID';

/**
 * A process that `npm start` runs stops gracefully (as on SIGTERM) once `npm start` is gone: killed
 * with SIGKILL, or crashed, it can stop no one, and its processes would run on unseen, ports held,
 * jobs taken. Checked every second (`kill(pid, 0)` answers whether the process exists: the shell of
 * a Procfile line that is not run under exec outlives it, so the parent's pid would not tell).
 * Nothing to do for a process run by anything else (a Procfile platform, systemd, compose).
 */
export function stopWhenSupervisorGone(everyMs = 1000): void {
  const pid = Number(process.env[SUPERVISOR_PID_VARIABLE]);
  if (!Number.isInteger(pid) || pid <= 1) return;
  const timer = setInterval(() => {
    try {
      process.kill(pid, 0);
    } catch (err) {
      // EPERM: a process of another user now has the pid; npm start is gone all the same.
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH' && (err as NodeJS.ErrnoException).code !== 'EPERM') return;
      clearInterval(timer);
      // Our output went to npm start, through pipes no one reads now: a write would fail (EPIPE)
      // and end the process in the middle of its graceful stop.
      logger.level = 'silent';
      for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
      process.kill(process.pid, 'SIGTERM');
    }
  }, everyMs);
  timer.unref();
}
