import { execFileSync } from 'node:child_process';
import { createServer } from 'node:net';

/**
 * Ports are picked below the system's ephemeral range (32768-60999 here), not by `listen(0)`,
 * which hands out a port of that range: any process's outgoing connection may take such a port
 * between the pick and a test's server binding it (a private redis-server of a cluster test then
 * exited at start, the port taken meanwhile). Below it, only another test's pick can, and a
 * random pick in 10,000 ports makes that rare; a port in use now is passed over.
 */
const LOWEST = 20000;
const RANGE = 12000;

/** A TCP port free on 127.0.0.1 right now (nothing listens on it after). */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = LOWEST + Math.floor(Math.random() * RANGE);
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

/**
 * `count` TCP ports free on 127.0.0.1 right now, found synchronously (by a child process): for
 * an environment module that names servers before any module reads the configuration.
 */
export function freePortsSync(count: number): number[] {
  const script = `const net = require('node:net');
    const tryPort = () => new Promise((resolve) => {
      const port = ${LOWEST} + Math.floor(Math.random() * ${RANGE});
      const server = net.createServer();
      server.once('error', () => resolve(null));
      server.listen(port, '127.0.0.1', () => resolve(server));
    });
    (async () => {
      const servers = [];
      while (servers.length < ${count}) {
        const server = await tryPort();
        if (server) servers.push(server);
      }
      process.stdout.write(servers.map((s) => s.address().port).join(' '));
      servers.forEach((s) => s.close());
    })();`;
  return execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }).trim().split(' ').map(Number);
}

/**
 * The port a web process started with PORT=0 says it listens on, from its JSON log (LOG_LEVEL
 * info or lower): null until the line is written. Starting on a port found free beforehand
 * (freePort) leaves a window in which another test file's server can take it: a health check
 * would then reach that server.
 */
export function listeningPort(output: string): number | null {
  // Whole lines only: the last one may still be arriving.
  const line = output.split('\n').slice(0, -1).find((l) => l.includes('"msg":"web process listening"'));
  return line ? Number(JSON.parse(line).port) : null;
}
