import { execFile, execFileSync, spawn, type ExecFileSyncOptions } from 'node:child_process';
import { appendFileSync, chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ImapFlow } from 'imapflow';
import { freePort } from './ports';

/**
 * A private, throwaway dovecot (IMAP + POP3) for one test file, as /work/shared/IMAP-TESTING.md
 * describes: its own directory, ports, self-signed certificate and passwd-file users; it never
 * reads /etc/dovecot. Plain ports offer STARTTLS/STLS; imaps/pop3s are implicit TLS.
 */

export interface DovecotUser { user: string; password: string } // user like 'support@example.test'

export interface DovecotOptions {
  /**
   * Also accept XOAUTH2 and OAUTHBEARER logins, validated by dovecot's oauth2 passdb: it sends the
   * token to this URL (`Authorization: Bearer <token>`, as with Microsoft Graph's /me) and accepts
   * it when the answer is 200 with an `email` equal to the login name. The users still need a line
   * in the passwd-file (the userdb; their password keeps working for the helper's own sessions).
   */
  oauth2?: { introspectionUrl: string };
}

export interface Dovecot {
  host: '127.0.0.1';
  ports: { imap: number; imaps: number; pop3: number; pop3s: number };
  /** PEM of the self-signed certificate (trust it with `tls: { ca: cert }`). */
  cert: string;
  dir: string;
  /** Adds a mailbox user; resolves once logins see it (in the next wall-clock second, 0-1 s). */
  addUser(u: DovecotUser): Promise<void>;
  /** APPENDs a raw message over IMAP as `user`; uidValidity as a string (imapflow gives a BigInt). */
  append(user: string, raw: Buffer | string, opts?: { flags?: string[]; mailbox?: string }): Promise<{ uid: number; uidValidity: string }>;
  /** APPENDs several raw messages to INBOX in one IMAP session, in order (a backlog arriving at once). */
  appendAll(user: string, raws: Array<Buffer | string>): Promise<void>;
  /** What is in a mailbox (default INBOX), in UID order. */
  messages(user: string, mailbox?: string): Promise<Array<{ uid: number; flags: string[]; messageId: string | undefined }>>;
  /** Sets the mailbox's UIDVALIDITY with doveadm: what clients see as a UIDVALIDITY reset. */
  setUidValidity(user: string, value: number, mailbox?: string): Promise<void>;
  /** Kills the server (SIGKILL to its process group), removes its directory and resolves once its
   *  ports refuse connections; idempotent. */
  stop(): Promise<void>;
}

const DOVECOT = '/usr/sbin/dovecot';
const DOVEADM = '/usr/bin/doveadm';
const INSTALL = 'apt-get install dovecot-imapd dovecot-pop3d';

/**
 * Installs dovecot (IMAP + POP3) with apt-get when it is missing and this runs as root, then stops
 * the system instance the package starts (it would hold 143/993/110/995); otherwise throws saying
 * how to install it. Synchronous: called from jest's globalSetup, before any test file starts.
 */
export function ensureDovecotInstalled(): void {
  if (existsSync(DOVECOT)) return;
  if (process.getuid?.() !== 0 || !existsSync('/usr/bin/apt-get')) {
    throw new Error(`The mailbox tests need dovecot (${DOVECOT} is missing): run \`${INSTALL}\` as root (Debian/Ubuntu), or use .ci/run`);
  }
  // Output to stderr: stdout may be a reporter's.
  const opts: ExecFileSyncOptions = { stdio: ['ignore', 2, 2], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } };
  process.stderr.write('dovecot is missing: installing dovecot-imapd and dovecot-pop3d with apt-get\n');
  execFileSync('apt-get', ['update'], opts);
  execFileSync('apt-get', ['install', '-y', 'dovecot-imapd', 'dovecot-pop3d'], opts);
  try {
    execFileSync('/etc/init.d/dovecot', ['stop'], { stdio: 'ignore' });
  } catch {
    // Not started (e.g. a policy-rc.d forbade it): nothing to stop.
  }
  if (!existsSync(DOVECOT)) throw new Error(`apt-get did not install ${DOVECOT}: run \`${INSTALL}\``);
}

/**
 * `n` distinct free ports, below the ephemeral range (./ports.ts: a port `listen(0)` hands out may
 * be taken by any outgoing connection before dovecot binds it).
 */
async function freePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

function userLine(u: DovecotUser): string {
  if (/[:\r\n]/.test(u.user + u.password)) throw new Error(`dovecot test user ${u.user}: no ':' or newlines in a passwd-file`);
  return `${u.user}:{PLAIN}${u.password}::::::\n`;
}

/** The passdb section for OAuth2 logins and its args file (see DovecotOptions.oauth2). */
const oauth2Passdb = (dir: string) => `passdb {
  driver = oauth2
  mechanisms = xoauth2 oauthbearer
  args = ${dir}/oauth2.conf.ext
}
`;
const oauth2Args = (o: NonNullable<DovecotOptions['oauth2']>) => `introspection_mode = auth
introspection_url = ${o.introspectionUrl}
username_attribute = email
`;

const config = (dir: string, p: Dovecot['ports'], o: DovecotOptions) => `base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = ${dir}/dovecot.log
protocols = imap pop3
listen = 127.0.0.1
ssl = yes
ssl_cert = <${dir}/cert.pem
ssl_key = <${dir}/key.pem
disable_plaintext_auth = no
auth_mechanisms = plain login${o.oauth2 ? ' xoauth2 oauthbearer' : ''}
auth_failure_delay = 0
mail_location = maildir:~/Maildir
mail_fsync = never
passdb {
  driver = passwd-file
  mechanisms = plain login
  args = scheme=PLAIN ${dir}/users
}
${o.oauth2 ? oauth2Passdb(dir) : ''}userdb {
  driver = passwd-file
  args = ${dir}/users
  default_fields = uid=nobody gid=nogroup home=${dir}/mail/%u
}
service anvil {
  unix_listener anvil-auth-penalty {
    mode = 0
  }
}
service imap-login {
  inet_listener imap {
    port = ${p.imap}
  }
  inet_listener imaps {
    port = ${p.imaps}
    ssl = yes
  }
}
service pop3-login {
  inet_listener pop3 {
    port = ${p.pop3}
  }
  inet_listener pop3s {
    port = ${p.pop3s}
    ssl = yes
  }
}
`;

/** Resolves once the port greets with `* OK`; false if nothing usable answered. */
const greets = (port: number) => new Promise<boolean>((resolve) => {
  const s = net.connect(port, '127.0.0.1');
  const done = (ok: boolean) => { s.destroy(); resolve(ok); };
  s.setTimeout(1000, () => done(false));
  s.once('data', (d) => done(d.toString('latin1').startsWith('* OK')));
  s.once('error', () => done(false));
  s.once('close', () => done(false));
});

/** Resolves true once a connection to the port is refused. */
const refuses = (port: number) => new Promise<boolean>((resolve) => {
  const s = net.connect(port, '127.0.0.1');
  s.once('connect', () => { s.destroy(); resolve(false); });
  s.once('error', () => resolve(true));
});

export async function startDovecot(users: DovecotUser[], opts: DovecotOptions = {}): Promise<Dovecot> {
  ensureDovecotInstalled();
  // Short: dovecot's unix sockets live in DIR/run and their paths must fit in 108 bytes.
  const dir = mkdtempSync('/tmp/dc-');
  const conf = join(dir, 'dovecot.conf');
  const passwords = new Map<string, string>();
  let ports: Dovecot['ports'];
  let pid: number | undefined;
  const kill = () => {
    if (pid === undefined) return;
    try { process.kill(-pid, 'SIGKILL'); } catch { /* already gone */ }
    pid = undefined;
  };
  try {
    chmodSync(dir, 0o755);
    for (const sub of ['run', 'state', 'mail']) mkdirSync(join(dir, sub));
    chownSync(join(dir, 'mail'), 65534, 65534); // dovecot refuses uid 0 for mail access
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
      '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
    writeFileSync(join(dir, 'users'), users.map(userLine).join(''));
    for (const u of users) passwords.set(u.user, u.password);
    if (opts.oauth2) writeFileSync(join(dir, 'oauth2.conf.ext'), oauth2Args(opts.oauth2));
    const log = () => { try { return readFileSync(join(dir, 'dovecot.log'), 'utf8'); } catch { return '(no dovecot.log)'; } };
    // A port found free can be taken by another process before dovecot binds it (a busy machine,
    // parallel test files): then dovecot exits saying so, and it starts again on other ports.
    for (let attempt = 1; ; attempt++) {
      const [imap, imaps, pop3, pop3s] = await freePorts(4);
      ports = { imap, imaps, pop3, pop3s };
      writeFileSync(conf, config(dir, ports, opts));
      rmSync(join(dir, 'dovecot.log'), { force: true });

      // -F: stays in the foreground (no pidfile race, no inherited pipes); its own process group,
      // so one kill(-pid) takes its children with it.
      const child = spawn(DOVECOT, ['-F', '-c', conf], { stdio: 'ignore', detached: true });
      child.unref();
      pid = child.pid;
      let exited: string | undefined;
      child.once('exit', (code, signal) => { exited = `exited (${signal ?? code})`; });
      child.once('error', (err) => { exited = `failed to start: ${err.message}`; });
      const started = Date.now();
      let greeted = false;
      while (!(greeted = await greets(imap))) {
        if (exited) break;
        if (Date.now() - started > 10000) throw new Error(`dovecot did not greet on port ${imap} within 10 s:\n${log()}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      if (greeted) break;
      kill();
      if (attempt >= 5 || !log().includes('Address already in use')) throw new Error(`dovecot ${exited}:\n${log()}`);
    }
  } catch (err) {
    kill();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  process.once('exit', kill); // safety net if a test file dies before afterAll
  const cert = readFileSync(join(dir, 'cert.pem'), 'utf8');

  const imapSession = async (user: string) => {
    const pass = passwords.get(user);
    if (pass === undefined) throw new Error(`dovecot test server has no user ${user}`);
    // secure:false needs doSTARTTLS:false or imapflow upgrades on its own (and trusts no self-signed cert).
    const c = new ImapFlow({ host: '127.0.0.1', port: ports.imap, secure: false, doSTARTTLS: false, auth: { user, pass }, logger: false, disableAutoIdle: true });
    await c.connect();
    return c;
  };
  const withImap = async <T>(user: string, fn: (c: ImapFlow) => Promise<T>): Promise<T> => {
    const c = await imapSession(user);
    try {
      return await fn(c);
    } finally {
      await c.logout().catch(() => c.close());
    }
  };
  let stopped = false;

  return {
    host: '127.0.0.1',
    ports,
    cert,
    dir,
    async addUser(u) {
      appendFileSync(join(dir, 'users'), userLine(u));
      passwords.set(u.user, u.password);
      // dovecot stats the passwd-file at most once per wall-clock second (passwd_file_sync): a login
      // in the second of this write may not see it yet. From the next second on, every login does.
      await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));
    },
    append: (user, raw, opts = {}) => withImap(user, async (c) => {
      const mailbox = opts.mailbox ?? 'INBOX';
      if (mailbox.toUpperCase() !== 'INBOX') await c.mailboxCreate(mailbox); // existing: no error
      const res = await c.append(mailbox, raw, opts.flags ?? []);
      if (!res || res.uid === undefined || res.uidValidity === undefined) throw new Error(`APPEND to ${mailbox} of ${user} returned no UID`);
      return { uid: res.uid, uidValidity: String(res.uidValidity) };
    }),
    appendAll: (user, raws) => withImap(user, async (c) => {
      for (const raw of raws) await c.append('INBOX', raw, []);
    }),
    messages: (user, mailbox = 'INBOX') => withImap(user, async (c) => {
      const lock = await c.getMailboxLock(mailbox);
      try {
        if (c.mailbox === false || c.mailbox.exists === 0) return [];
        const list = await c.fetchAll('1:*', { uid: true, flags: true, envelope: true });
        return list
          .map((m) => ({ uid: m.uid, flags: [...(m.flags ?? [])].sort(), messageId: m.envelope?.messageId || undefined }))
          .sort((a, b) => a.uid - b.uid);
      } finally {
        lock.release();
      }
    }),
    async setUidValidity(user, value, mailbox = 'INBOX') {
      await promisify(execFile)(DOVEADM, ['-c', conf, 'mailbox', 'update', '-u', user, '--uid-validity', String(value), mailbox]);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      kill(); // ~10 ms; SIGTERM would take over a second for data nobody keeps
      process.removeListener('exit', kill);
      rmSync(dir, { recursive: true, force: true });
      // SIGKILL returns before the kernel has torn the processes down; their listening sockets
      // can accept for a moment after. Return only once the server is really gone.
      const started = Date.now();
      while (!(await refuses(ports.imap))) {
        if (Date.now() - started > 5000) throw new Error(`dovecot still accepts on port ${ports.imap} 5 s after SIGKILL`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}
