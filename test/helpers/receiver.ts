import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The raw body, as signed. */
  body: string;
  at: number;
}

export interface Receiver {
  url: string;
  received: ReceivedRequest[];
  /** Statuses to answer the next requests to `url` with, in order; then 200. */
  answerNext(url: string, ...statuses: number[]): void;
  /** Every request to `url` is answered with this status from now on (null: back to 200). */
  answerAlways(url: string, status: number | null): void;
  /** The requests received at `url` (path and query string of a URL given to a webhook). */
  at(url: string): ReceivedRequest[];
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1 (port 0), receiving webhook deliveries. */
export async function startReceiver(): Promise<Receiver> {
  const received: ReceivedRequest[] = [];
  const queued = new Map<string, number[]>();
  const always = new Map<string, number>();
  const key = (url: string) => (url.startsWith('http') ? `${new URL(url).pathname}${new URL(url).search}` : url);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const url = req.url ?? '';
      const status = queued.get(url)?.shift() ?? always.get(url) ?? 200;
      res.writeHead(status, { 'Content-Type': 'text/plain' }).end(status < 300 ? 'ok' : `receiver says ${status}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    answerNext: (url, ...statuses) => queued.set(key(url), [...(queued.get(key(url)) ?? []), ...statuses]),
    answerAlways: (url, status) => {
      if (status === null) always.delete(key(url));
      else always.set(key(url), status);
    },
    at: (url) => received.filter((r) => r.url === key(url)),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
