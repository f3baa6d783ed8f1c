import net from 'node:net';
import tls from 'node:tls';

/**
 * A minimal RFC 1939 POP3 client (with RFC 2595 STLS). Written here because node-pop3 has no STLS
 * and decodes messages as UTF-8, which corrupts 8-bit mail: RETR returns the raw bytes.
 */

/** none: plain; ssl: implicit TLS from the first byte; tls: plain, then STLS (required). */
export type Pop3Encryption = 'none' | 'ssl' | 'tls';

export interface Pop3Options {
  host: string;
  port: number;
  encryption: Pop3Encryption;
  user: string;
  /** One of the two: USER/PASS, or AUTH XOAUTH2 with an OAuth2 access token. */
  password?: string;
  accessToken?: string;
  /** Per command (and for connecting, greeting and TLS handshake); default 30 s. */
  timeoutMs?: number;
  /** Extra TLS options, e.g. `{ ca }` or `{ rejectUnauthorized: false }`. */
  tls?: tls.ConnectionOptions;
  /** How the host name is resolved (net's `lookup`): the poller's checked lookup, so the socket goes only where the check allowed. */
  lookup?: net.LookupFunction;
}

/** The server answered -ERR; `serverText` is what followed it. */
export class Pop3Error extends Error {
  constructor(command: string, readonly serverText: string, readonly authenticationFailed = false) {
    super(`POP3 ${command} failed: -ERR ${serverText}`);
    this.name = 'Pop3Error';
  }
}

type Kind = 'line' | 'multi' | 'tls';
interface Pending { kind: Kind; label: string; resolve(v: Buffer): void; reject(e: Error): void; timer: NodeJS.Timeout }

const CRLF = Buffer.from('\r\n');
const END = Buffer.from('\r\n.\r\n');

export class Pop3Client {
  private socket: net.Socket;
  private buf = Buffer.alloc(4096); // bytes received and not yet consumed: buf[0, len)
  private len = 0;
  private scanned = 0; // how far a multi-line response was searched for its end without success
  private pending: Pending | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private failure: Error | null = null;
  private readonly timeoutMs: number;
  private detach = () => {};

  private constructor(private readonly opts: Pop3Options) {
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    const servername = net.isIP(opts.host) ? undefined : opts.host; // SNI takes names only
    this.socket = opts.encryption === 'ssl'
      ? tls.connect({ servername, ...opts.tls, host: opts.host, port: opts.port, lookup: opts.lookup })
      : net.connect({ host: opts.host, port: opts.port, lookup: opts.lookup });
    this.attach(this.socket);
  }

  static async connect(opts: Pop3Options): Promise<Pop3Client> {
    if (/[\r\n]/.test(opts.user + (opts.password ?? '') + (opts.accessToken ?? ''))) throw new Error('POP3 user and password must not contain line breaks');
    const client = new Pop3Client(opts);
    try {
      await client.request(null, 'line', 'greeting');
      if (opts.encryption === 'tls') await client.startTls();
      if (opts.accessToken !== undefined) {
        await client.authXoauth2(opts.user, opts.accessToken);
        return client;
      }
      await client.request(`USER ${opts.user}`, 'line', 'USER');
      // Errors name the label, never the line: no password in messages or logs.
      await client.request(`PASS ${opts.password ?? ''}`, 'line', 'PASS').catch((err) => {
        throw err instanceof Pop3Error ? new Pop3Error('PASS', err.serverText, true) : err;
      });
      return client;
    } catch (err) {
      client.close();
      throw err;
    }
  }

  /**
   * RFC 5034 AUTH with the XOAUTH2 initial response. A refused token comes back as a `+` challenge
   * carrying the server's JSON error; an empty line ends the exchange, and the server says -ERR.
   */
  private async authXoauth2(user: string, token: string): Promise<void> {
    const initial = Buffer.from(`user=${user}\x01auth=Bearer ${token}\x01\x01`, 'utf8').toString('base64');
    const refused = (err: unknown) => {
      throw err instanceof Pop3Error ? new Pop3Error('AUTH XOAUTH2', err.serverText, true) : err;
    };
    const answer = (await this.request(`AUTH XOAUTH2 ${initial}`, 'line', 'AUTH XOAUTH2').catch(refused)).toString('latin1');
    if (answer.startsWith('+OK')) return;
    await this.request('', 'line', 'AUTH XOAUTH2').catch(refused);
    throw new Pop3Error('AUTH XOAUTH2', 'the server refused the access token', true);
  }

  async uidl(): Promise<Array<{ number: number; uid: string }>> {
    const body = await this.request('UIDL', 'multi', 'UIDL');
    return body.toString('latin1').split('\r\n').filter(Boolean).map((line) => {
      const m = /^(\d+) +(\S+)/.exec(line);
      if (!m) throw new Error(`POP3 UIDL: unexpected line ${JSON.stringify(line)}`);
      return { number: Number(m[1]), uid: m[2] };
    });
  }

  /** Each message's size in octets, by number (LIST): what RETR would bring, known before it is asked for. */
  async sizes(): Promise<Map<number, number>> {
    const body = await this.request('LIST', 'multi', 'LIST');
    return new Map(body.toString('latin1').split('\r\n').filter(Boolean).map((line) => {
      const m = /^(\d+) +(\d+)/.exec(line);
      if (!m) throw new Error(`POP3 LIST: unexpected line ${JSON.stringify(line)}`);
      return [Number(m[1]), Number(m[2])];
    }));
  }

  /** The message's header only (TOP n 0), for a mail too large to download. */
  async headers(number: number): Promise<Buffer> {
    return this.request(`TOP ${msgNumber(number)} 0`, 'multi', 'TOP');
  }

  /** The message's bytes exactly as the server has them (CRLF line ends), without the byte-stuffing. */
  async retrieve(number: number): Promise<Buffer> {
    return this.request(`RETR ${msgNumber(number)}`, 'multi', 'RETR');
  }

  async delete(number: number): Promise<void> {
    await this.request(`DELE ${msgNumber(number)}`, 'line', 'DELE');
  }

  /** The server applies DELEs before it answers QUIT. */
  async quit(): Promise<void> {
    try {
      await this.request('QUIT', 'line', 'QUIT');
    } finally {
      this.close();
    }
  }

  /** Drops the connection without QUIT: the server then applies none of this session's DELEs. */
  close(): void {
    this.fail(new Error('POP3 connection closed by the client'));
  }

  private async startTls(): Promise<void> {
    await this.request('STLS', 'line', 'STLS').catch((err) => {
      if (!(err instanceof Pop3Error)) throw err;
      throw new Error(`POP3 ${this.opts.host}:${this.opts.port} refused STLS, so it will not be used without TLS: ${err.message}`);
    });
    // Bytes after the +OK arrived in plaintext: a man in the middle may have injected them (cf. CVE-2011-0411).
    if (this.len > 0) throw new Error('POP3 STLS: unexpected data before the TLS handshake');
    await this.request(null, 'tls', 'TLS handshake', () => {
      const plain = this.socket;
      this.detach();
      const servername = net.isIP(this.opts.host) ? undefined : this.opts.host;
      // host: what the certificate is checked against (an IP is matched with its IP SANs).
      this.socket = tls.connect({ servername, ...this.opts.tls, host: this.opts.host, socket: plain });
      this.attach(this.socket);
      this.socket.once('secureConnect', () => this.settle(null, Buffer.alloc(0)));
    });
  }

  private attach(socket: net.Socket): void {
    const onData = (chunk: Buffer) => this.onData(chunk);
    const onError = (err: Error) => this.fail(new Error(`POP3 ${this.opts.host}:${this.opts.port}: ${err.message}`, { cause: err }));
    const onClose = () => this.fail(new Error(`POP3 ${this.opts.host}:${this.opts.port}: connection closed`));
    socket.on('data', onData).on('error', onError).on('close', onClose);
    this.detach = () => socket.off('data', onData).off('error', onError).off('close', onClose);
  }

  /** Queues a command (null: none, wait only) and resolves with its response: the status line, or a multi-line body. */
  private request(line: string | null, kind: Kind, label: string, start?: () => void): Promise<Buffer> {
    const run = () => new Promise<Buffer>((resolve, reject) => {
      if (this.failure) return reject(this.failure);
      const timer = setTimeout(() => this.fail(new Error(`POP3 ${label}: no response from ${this.opts.host}:${this.opts.port} within ${this.timeoutMs} ms`)), this.timeoutMs);
      this.pending = { kind, label, resolve, reject, timer };
      if (line !== null) this.socket.write(`${line}\r\n`);
      start?.();
      this.parse();
    });
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  private onData(chunk: Buffer): void {
    if (this.len + chunk.length > this.buf.length) { // grow by doubling: large RETRs stay linear
      const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + chunk.length));
      this.buf.copy(grown, 0, 0, this.len);
      this.buf = grown;
    }
    chunk.copy(this.buf, this.len);
    this.len += chunk.length;
    this.parse();
  }

  private parse(): void {
    const p = this.pending;
    if (!p || p.kind === 'tls') return;
    const data = this.buf.subarray(0, this.len);
    const eol = data.indexOf(CRLF);
    if (eol < 0) return;
    const status = data.toString('latin1', 0, eol);
    if (status.startsWith('-ERR')) {
      this.consume(eol + 2);
      return this.settle(new Pop3Error(p.label, status.slice(4).trim()));
    }
    // A SASL challenge (AUTH): the caller answers it.
    if (p.kind === 'line' && (status === '+' || status.startsWith('+ '))) {
      this.consume(eol + 2);
      return this.settle(null, Buffer.from(status, 'latin1'));
    }
    if (!status.startsWith('+OK')) return this.fail(new Error(`POP3 ${p.label}: unexpected response ${JSON.stringify(status.slice(0, 200))}`));
    if (p.kind === 'line') {
      this.consume(eol + 2);
      return this.settle(null, Buffer.from(status, 'latin1'));
    }
    // The body ends with a line holding a single '.'; searching from the status line's CRLF also finds an empty body.
    const end = data.indexOf(END, Math.max(eol, this.scanned - END.length));
    if (end < 0) {
      this.scanned = this.len;
      return;
    }
    const body = unstuff(data.subarray(eol + 2, end + 2)); // a copy, keeping the last line's CRLF
    this.consume(end + END.length);
    this.settle(null, body);
  }

  private consume(n: number): void {
    this.buf.copy(this.buf, 0, n, this.len);
    this.len -= n;
    this.scanned = 0;
    if (this.len === 0 && this.buf.length > 65536) this.buf = Buffer.alloc(4096); // don't keep a large RETR's buffer
  }

  private settle(err: Error | null, value?: Buffer): void {
    const p = this.pending;
    if (!p) return;
    this.pending = null;
    clearTimeout(p.timer);
    if (err) p.reject(err);
    else p.resolve(value!);
  }

  /** The connection is unusable from here on: reject what waits and what comes. */
  private fail(err: Error): void {
    this.failure ??= err;
    this.settle(err);
    this.socket.destroy();
  }
}

function msgNumber(n: number): number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`POP3 message number must be a positive integer, got ${n}`);
  return n;
}

/** Removes the '.' the server put before each line that began with '.' (RFC 1939 byte-stuffing). */
function unstuff(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let from = 0;
  for (let line = 0; line < body.length;) {
    if (body[line] === 0x2e) {
      parts.push(body.subarray(from, line));
      from = line + 1;
    }
    const eol = body.indexOf(CRLF, line);
    if (eol < 0) break;
    line = eol + 2;
  }
  parts.push(body.subarray(from));
  return Buffer.concat(parts);
}
