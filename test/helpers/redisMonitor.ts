import net from 'node:net';
import { config } from '../../src/config';

export interface Monitored<T> {
  result: T;
  /** The commands clients sent naming a key of this worker's QUEUE_PREFIX (`"command" "arg"...`). */
  sent: string[];
  /** The commands scripts ran naming such a key. */
  inScript: string[];
}

/**
 * The Redis commands that name this worker's keys while `work` runs, as MONITOR sees them. Over a
 * plain socket: ioredis's monitor() can mistake a MONITOR line for a reply under load.
 */
export async function redisCommandsDuring<T>(work: () => Promise<T>): Promise<Monitored<T>> {
  const url = new URL(config().redisUrl);
  const monitor = net.connect(Number(url.port || 6379), url.hostname);
  let seen = '';
  const monitoring = new Promise<void>((resolve, reject) => {
    monitor.on('data', (d) => { seen += d.toString('utf8'); if (seen.startsWith('+OK\r\n')) resolve(); });
    monitor.once('error', reject);
  });
  monitor.write('MONITOR\r\n');
  // The last line MONITOR sends: a command of this connection's own, which Redis runs after
  // everything `work` sent (MONITOR's lines arrive after the replies).
  const marker = `monitor-end-${process.pid}-${Date.now()}`;
  let result: T;
  try {
    await monitoring;
    result = await work();
    const probe = net.connect(Number(url.port || 6379), url.hostname);
    try {
      await new Promise<void>((resolve, reject) => {
        probe.once('error', reject);
        probe.write(`ECHO ${marker}\r\n`);
        probe.once('data', () => resolve());
      });
      await new Promise<void>((resolve, reject) => {
        const check = () => { if (seen.includes(marker)) resolve(); };
        monitor.on('data', check);
        monitor.once('error', reject);
        check();
      });
    } finally {
      probe.destroy();
    }
  } finally {
    monitor.destroy();
  }
  // A line of MONITOR: `<time> [<db> <client address>|lua] "command" "args"...`.
  const lines = seen.split('\r\n').filter((line) => line.includes(`"${config().queuePrefix}:`));
  const strip = (line: string) => line.replace(/^.*?\] /, '');
  return {
    result,
    sent: lines.filter((line) => !/\[\d+ lua\]/.test(line)).map(strip),
    inScript: lines.filter((line) => /\[\d+ lua\]/.test(line)).map(strip),
  };
}
