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
 * `n` distinct TCP ports free on 127.0.0.1 right now, found synchronously (by a child process):
 * for a file's environment module, which must name its servers' ports before the app reads its
 * configuration.
 */
export function freePortsSync(n: number): number[] {
  const script = `const net = require('node:net'); const servers = []; let left = ${n};
for (let i = 0; i < ${n}; i++) { const s = net.createServer(); servers.push(s); s.listen(0, '127.0.0.1', () => {
  if (--left === 0) { console.log(JSON.stringify(servers.map((x) => x.address().port))); servers.forEach((x) => x.close()); }
}); }`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as number[];
}
