import { createServer, type Socket } from 'node:net';

/**
 * A TCP server on a free port of 127.0.0.1 that accepts connections and never says a word (a
 * database or mail server that hangs): what a client's connect timeout is tested against.
 */
export async function silentServer(): Promise<{ port: number; close(): void }> {
  const sockets: Socket[] = [];
  const server = createServer((c) => { sockets.push(c); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}
