import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 to `target` that can hold the connections it accepts from then on:
 * a held connection is accepted but nothing of it reaches the target until `release()`. A test
 * stops a client half-way through a connection this way (a request sent, its answer not yet
 * come) and makes something happen meanwhile, waiting on `held`, not on a time.
 */
export class HoldingProxy {
  private server?: Server;
  private holding = false;
  private waiting: Array<() => void> = [];
  private readonly sockets = new Set<Socket>();

  constructor(readonly port: number, private readonly target: number) {}

  /** How many accepted connections wait for `release()`. */
  get held(): number {
    return this.waiting.length;
  }

  start(): Promise<void> {
    this.server = createServer((client) => {
      this.sockets.add(client);
      client.on('close', () => this.sockets.delete(client));
      client.on('error', () => client.destroy());
      client.pause();
      const pipe = () => {
        if (client.destroyed) return;
        const upstream = connect(this.target, '127.0.0.1');
        this.sockets.add(upstream);
        upstream.on('close', () => { this.sockets.delete(upstream); client.destroy(); });
        upstream.on('error', () => upstream.destroy());
        client.on('close', () => upstream.destroy());
        client.pipe(upstream).pipe(client);
        client.resume();
      };
      if (this.holding) this.waiting.push(pipe);
      else pipe();
    });
    return new Promise((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
  }

  hold(): void {
    this.holding = true;
  }

  release(): void {
    this.holding = false;
    for (const pipe of this.waiting.splice(0)) pipe();
  }

  async stop(): Promise<void> {
    this.release();
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => this.server?.close(resolve) ?? resolve(undefined));
  }
}
