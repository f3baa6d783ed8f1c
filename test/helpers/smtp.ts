import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import type { AddressInfo } from 'node:net';

export interface ReceivedMail {
  envelopeFrom: string;
  envelopeTo: string[];
  parsed: ParsedMail;
  /** The mail as it arrived (to feed it back into a mailbox). */
  raw: Buffer;
}

/** A reply the server gives instead of taking a recipient or a message: its code (550, 451...) and text. */
export interface SmtpRefusal {
  code: number;
  message: string;
}

/** What a test server refuses: a recipient at RCPT TO, a whole message at the end of DATA (null: taken). */
export interface SmtpRefusals {
  rcpt?(address: string): SmtpRefusal | null;
  data?(recipients: string[]): SmtpRefusal | null;
}

export interface TestSmtp {
  port: number;
  received: ReceivedMail[];
  /** The mails received so far with `address` among their recipients. */
  mailsTo(address: string): ReceivedMail[];
  close(): Promise<void>;
}

/**
 * A real SMTP server in the test process, recording what it receives. `auth` makes it require
 * those credentials; `xoauth2` makes it take only XOAUTH2 logins, accepted when `validate` says
 * the access token is the user's (a refused token gets the 334 error challenge, then 535);
 * `delayMs` holds each message before accepting it; `starttls` makes it offer STARTTLS with
 * smtp-server's built-in self-signed certificate (otherwise it offers no TLS). `refuse` answers a
 * recipient at RCPT TO (`rcpt`), or a whole message at the end of DATA (`data`, given its envelope's
 * recipients), with the refusal it returns (null: taken); a refused message is not recorded.
 */
export async function startSmtp(opts: {
  auth?: { user: string; pass: string }; xoauth2?: { validate(user: string, token: string): Promise<boolean> }; delayMs?: number; starttls?: boolean;
  refuse?: SmtpRefusals;
} = {}): Promise<TestSmtp> {
  const refusal = (r: SmtpRefusal) => Object.assign(new Error(r.message), { responseCode: r.code });
  const received: ReceivedMail[] = [];
  const authRequired = Boolean(opts.auth || opts.xoauth2);
  const options: SMTPServerOptions = {
    disabledCommands: [...(opts.starttls ? [] : ['STARTTLS']), ...(authRequired ? [] : ['AUTH'])],
    authOptional: !authRequired,
    ...(opts.xoauth2 ? { authMethods: ['XOAUTH2'] } : {}),
    allowInsecureAuth: true,
    logger: false,
    // close() waits for connected clients; a pooled transport keeps its connection open, idle.
    closeTimeout: 500,
    onAuth(auth, _session, callback) {
      if (opts.xoauth2 && auth.method === 'XOAUTH2') {
        opts.xoauth2.validate(auth.username ?? '', auth.accessToken ?? '').then((ok) => (ok
          ? callback(null, { user: auth.username })
          : callback(null, { data: { status: '401', schemes: 'bearer', scope: 'mail' } } as any)), callback);
        return;
      }
      if (opts.auth && auth.username === opts.auth.user && auth.password === opts.auth.pass) return callback(null, { user: auth.username });
      return callback(new Error('Invalid username or password'));
    },
    onRcptTo(address, _session, callback) {
      const refused = opts.refuse?.rcpt?.(address.address);
      callback(refused ? refusal(refused) : undefined);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      simpleParser(stream).then((parsed) => {
        const refused = opts.refuse?.data?.(session.envelope.rcptTo.map((r) => r.address));
        if (refused) return callback(refusal(refused));
        const done = () => {
          received.push({
            envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            envelopeTo: session.envelope.rcptTo.map((r) => r.address),
            parsed,
            raw: Buffer.concat(chunks),
          });
          callback();
        };
        if (opts.delayMs) setTimeout(done, opts.delayMs);
        else done();
      }, callback);
    },
  };
  const server = new SMTPServer(options);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = ((server as any).server.address() as AddressInfo).port;
  return {
    port,
    received,
    mailsTo: (address) => received.filter((m) => m.envelopeTo.includes(address)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Polls until `check` returns a truthy value. `timeoutMs` bounds the time without progress, not
 * the whole wait: the time is counted from the last change of the worker's background work
 * (outbox entries and queued jobs by state, ./background.ts), so a wait for a mail, a job or a
 * poll goes on while the machine, loaded, still gets through the work before it, and fails once
 * nothing moves. A wait on something else is bounded by `timeoutMs` itself.
 */
export async function waitFor<T>(check: () => T | Promise<T>, timeoutMs = 15000, what = 'condition'): Promise<NonNullable<T>> {
  // Loaded when first needed: files without a database import this module too.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { backgroundProgress } = require('./background') as typeof import('./background');
  // A wait already met costs no sample of the background work.
  const met = await check();
  if (met) return met as NonNullable<T>;
  let progress = JSON.stringify(await backgroundProgress());
  let movedAt = Date.now();
  let sampledAt = movedAt;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    const now = Date.now();
    if (now - sampledAt >= 1000) {
      sampledAt = now;
      const current = JSON.stringify(await backgroundProgress());
      if (current !== progress) {
        progress = current;
        movedAt = now;
      }
    }
    if (now - movedAt > timeoutMs) throw new Error(`Timed out after ${timeoutMs} ms without progress waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Polls until `done(value)` holds for the value `measure` returns, failing only when nothing moves
 * for `stallMs`: neither the value nor the worker's background work (as `waitFor` counts it), however
 * long the whole wait takes. A loaded machine makes the work slower, not stuck, and the workers may
 * first get through jobs that earlier files of this jest worker left queued.
 */
export async function waitForProgress<T>(measure: () => Promise<T>, done: (value: T) => boolean, what: string, stallMs = 20000): Promise<T> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { backgroundProgress } = require('./background') as typeof import('./background');
  let last = JSON.stringify(await measure());
  let background = JSON.stringify(await backgroundProgress());
  let changedAt = Date.now();
  let sampledAt = changedAt;
  for (;;) {
    const value = await measure();
    if (done(value)) return value;
    const now = JSON.stringify(value);
    if (now !== last) {
      last = now;
      changedAt = Date.now();
    } else if (Date.now() - sampledAt >= 1000) {
      sampledAt = Date.now();
      const current = JSON.stringify(await backgroundProgress());
      if (current !== background) {
        background = current;
        changedAt = sampledAt;
      }
    }
    if (Date.now() - changedAt > stallMs) throw new Error(`No progress for ${stallMs} ms waiting for ${what} (stuck at ${now})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
