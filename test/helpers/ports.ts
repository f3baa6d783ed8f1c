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
