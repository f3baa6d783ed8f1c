import { execFileSync } from 'node:child_process';
import { createServer } from 'node:net';

/** A TCP port free on 127.0.0.1 right now (the system picks it; nothing listens on it after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * `count` TCP ports free on 127.0.0.1 right now, found synchronously (by a child process): for
 * an environment module that names servers before any module reads the configuration.
 */
export function freePortsSync(count: number): number[] {
  const script = `const net = require('node:net'); const servers = [];
    for (let i = 0; i < ${count}; i++) servers.push(net.createServer().listen(0, '127.0.0.1'));
    Promise.all(servers.map((s) => new Promise((r) => s.once('listening', r)))).then(() => {
      process.stdout.write(servers.map((s) => s.address().port).join(' '));
      servers.forEach((s) => s.close());
    });`;
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
