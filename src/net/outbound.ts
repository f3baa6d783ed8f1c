import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, connect as netConnect, isIP, isIPv4, type LookupFunction, type Socket } from 'node:net';
import { config } from '../config';
import { ValidationError } from '../errors';
import { Joi } from '../lib/validation';

/**
 * Where the server may connect on its own (webhook deliveries, OAuth2 token endpoints, mailbox
 * polls, SMTP), one policy for all. `webhook` and `oauth-token`: public addresses only, unless the
 * host or address is listed in OUTBOUND_ALLOW_HOSTS. `mail-server`: configured by an administrator, so internal addresses are
 * fine (a local MTA on 127.0.0.1:25 is a normal setup), but never a cloud metadata service.
 * Metadata addresses are refused for every use, whatever OUTBOUND_ALLOW_HOSTS says.
 */
export type OutboundUse = 'webhook' | 'oauth-token' | 'mail-server';

export class OutboundRefusedError extends Error {
  readonly code = 'EOUTBOUNDREFUSED';
}

const ranges = (list: Array<[string, number, 'ipv4' | 'ipv6']>) => {
  const block = new BlockList();
  for (const [net, prefix, type] of list) block.addSubnet(net, prefix, type);
  return block;
};

// Cloud instance metadata (AWS/GCP/Azure/OpenStack 169.254.169.254, AWS IPv6, Alibaba), and the
// IPv4 link-local range they live in: never a target.
const METADATA = ranges([['169.254.0.0', 16, 'ipv4'], ['fd00:ec2::', 32, 'ipv6'], ['100.100.100.200', 32, 'ipv4']]);

/** Ranges that are not the public internet, each with the words an error uses for it. */
const INTERNAL: Array<[string, BlockList]> = [
  ['an unspecified address', ranges([['0.0.0.0', 8, 'ipv4'], ['::', 128, 'ipv6']])],
  ['a loopback address', ranges([['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6']])],
  ['a private address', ranges([['10.0.0.0', 8, 'ipv4'], ['172.16.0.0', 12, 'ipv4'], ['192.168.0.0', 16, 'ipv4'], ['100.64.0.0', 10, 'ipv4'], ['192.0.0.0', 24, 'ipv4'], ['198.18.0.0', 15, 'ipv4']])],
  ['a link-local address', ranges([['fe80::', 10, 'ipv6']])],
  ['a unique-local address', ranges([['fc00::', 7, 'ipv6']])],
  // Deprecated (RFC 3879) but still routed inside networks that use it: never the public internet.
  ['a site-local address', ranges([['fec0::', 10, 'ipv6']])],
  ['a multicast address', ranges([['224.0.0.0', 4, 'ipv4'], ['ff00::', 8, 'ipv6']])],
  // With the documentation ranges (TEST-NET-1, -2, -3, 2001:db8::/32): never a real host.
  ['a reserved address', ranges([
    ['240.0.0.0', 4, 'ipv4'], ['192.0.2.0', 24, 'ipv4'], ['198.51.100.0', 24, 'ipv4'], ['203.0.113.0', 24, 'ipv4'],
    ['100::', 64, 'ipv6'], ['2001:db8::', 32, 'ipv6'],
  ])],
  // RFC 8215's local-use NAT64 prefix: a network's own translator, where the IPv4 address sits
  // depends on the prefix length it uses. Its /96 form is judged by that IPv4 address (embeddedIPv4).
  ['a local-use NAT64 address', ranges([['64:ff9b:1::', 48, 'ipv6']])],
  // Teredo hides the client's IPv4 address (inverted) and the tunnel may end anywhere: never public here.
  ['a Teredo tunnel address', ranges([['2001::', 32, 'ipv6']])],
];

/** The eight 16-bit groups of an IPv6 address, as a URL parser writes it (lower case, `::` for zeros, no dotted quad). */
function ipv6Groups(ip: string): number[] {
  const canonical = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  const part = (s: string) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const [head, tail] = canonical.split('::');
  if (tail === undefined) return part(head);
  const [h, t] = [part(head), part(tail)];
  return [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
}

/**
 * The IPv4 address an IPv6 one carries, if any: IPv4-mapped (::ffff:a.b.c.d), IPv4-translated
 * (::ffff:0:a.b.c.d), IPv4-compatible (::a.b.c.d; not :: or ::1), NAT64 (64:ff9b::a.b.c.d, and
 * the local-use 64:ff9b:1::a.b.c.d) and
 * 6to4 (2002:aabb:ccdd::/48 for a.b.c.d: the tunnel ends at that IPv4 host) reach that IPv4 host.
 */
function embeddedIPv4(ip: string): string | null {
  const g = ipv6Groups(ip);
  const quad = (hi: number, lo: number) => [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && g[5] === 0xffff) return quad(g[6], g[7]);
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return quad(g[6], g[7]);
  if (zero(0, 6) && (g[6] !== 0 || g[7] > 1)) return quad(g[6], g[7]);
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return quad(g[6], g[7]);
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1 && zero(3, 6)) return quad(g[6], g[7]);
  if (g[0] === 0x2002) return quad(g[1], g[2]);
  return null;
}

/** Which address Node connects to when given `ip`: IPv4 itself, or the IPv4 an IPv6 form embeds. */
function effective(ip: string): { ip: string; type: 'ipv4' | 'ipv6' } {
  if (isIPv4(ip)) return { ip, type: 'ipv4' };
  const v4 = embeddedIPv4(ip);
  return v4 ? { ip: v4, type: 'ipv4' } : { ip, type: 'ipv6' };
}

const isMetadata = (ip: string) => {
  const e = effective(ip);
  return METADATA.check(e.ip, e.type);
};

/** The kind of internal address `ip` is ('a loopback address', …), or null for a public one. */
export function internalKind(ip: string): string | null {
  const e = effective(ip);
  if (METADATA.check(e.ip, e.type)) return 'a cloud metadata or link-local address';
  for (const [words, block] of INTERNAL) if (block.check(e.ip, e.type)) return words;
  return null;
}

/** Strips the brackets of an IPv6 URL host and a trailing dot of a name; lower case. */
const bare = (host: string) => host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');

function allowListed(host: string, ip: string | null): boolean {
  for (const entry of config().outboundAllowHosts) {
    const e = bare(entry);
    if (e === host) return true;
    if (!ip) continue;
    const slash = e.indexOf('/');
    const base = slash < 0 ? e : e.slice(0, slash);
    const type = isIP(base) === 4 ? 'ipv4' : isIP(base) === 6 ? 'ipv6' : null;
    if (!type) continue;
    const block = new BlockList();
    if (slash < 0) block.addAddress(base, type);
    else block.addSubnet(base, Number(e.slice(slash + 1)), type);
    const target = effective(ip);
    if (block.check(ip, isIP(ip) === 4 ? 'ipv4' : 'ipv6') || block.check(target.ip, target.type)) return true;
  }
  return false;
}

/**
 * Why the server will not connect to `address` (resolved from, or written as, `host`) for `use`,
 * or null when it may. The reason names the address and what it is.
 */
export function addressRefusal(host: string, address: string, use: OutboundUse): string | null {
  const name = bare(host);
  if (isMetadata(address)) return `${address} is a cloud metadata or link-local address, which the server never connects to.`;
  if (use === 'mail-server') return null;
  const kind = internalKind(address);
  if (!kind || allowListed(name, address)) return null;
  const shown = name === address ? address : `${name} (${address})`;
  return `${shown} is ${kind}; list it in OUTBOUND_ALLOW_HOSTS to allow it.`;
}

/** A host as a URL parser reads it: `2130706433`, `0x7f.1`, `017700000001` become 127.0.0.1. */
function canonical(host: string): string {
  const name = bare(host);
  if (isIP(name) === 6) return name;
  try {
    return bare(new URL(`http://${name}/`).hostname);
  } catch {
    return name;
  }
}

/** Host names that always mean this machine, whatever DNS says. */
const LOCAL_NAME = /(^|\.)localhost$/;

/**
 * The check that needs no DNS, for validating a target on write: an IP literal (in the form a URL
 * parser makes of it: `2130706433`, `0x7f.1` and `017700000001` are all 127.0.0.1 by then) or
 * `localhost`. Names are checked again, on every address they resolve to, at connection time.
 */
export function hostRefusal(host: string, use: OutboundUse): string | null {
  const name = canonical(host);
  if (isIP(name)) return addressRefusal(name, name, use);
  return LOCAL_NAME.test(name) ? addressRefusal(name, '127.0.0.1', use) : null;
}

/** The host of a URL as WHATWG parsing normalises it (odd IPv4 spellings become dotted quads). */
export const urlHost = (url: string): string => new URL(url).hostname;

/**
 * The joi field of a URL the server will POST to for `use` (a webhook, a token endpoint): http(s),
 * and never an internal address unless OUTBOUND_ALLOW_HOSTS lists it. A name is checked again on
 * every address it resolves to when the server connects (postChecked). `label` names the field in
 * the error: `The <label> is not allowed: <reason>`.
 */
export const outboundUrl = (use: OutboundUse, label: string) => Joi.string().trim().max(2048).uri()
  .custom((v: string) => {
    const invalidUrl = () => new Error(`The ${label} must be a valid URL.`);
    let url: URL;
    try {
      url = new URL(v); // what the request will parse (a port past 65535 passes joi's syntax check)
    } catch {
      throw invalidUrl();
    }
    // http(s) in any letter case (schemes are case-insensitive), on a port a server can listen on.
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.port === '0') throw invalidUrl();
    const refusal = hostRefusal(url.hostname, use);
    if (refusal) throw new Error(`The ${label} is not allowed: ${refusal}`);
    return v.replace(/^[a-z][a-z0-9+.-]*:/i, (scheme) => scheme.toLowerCase());
  });

/**
 * A URL whose host is a name that resolves to an internal address is refused on write too, as
 * outboundUrl refuses a literal one: 422 `The <label> is not allowed: …`. The connection checks
 * again (DNS may change); a name that does not resolve within 2 s is accepted: it may by then.
 */
export async function refuseInternalName(target: string, use: OutboundUse, label: string): Promise<void> {
  const host = urlHost(target);
  if (isIP(host.replace(/^\[|\]$/g, ''))) return; // checked by outboundUrl
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => { timer = setTimeout(() => resolve(null), 2000); });
  try {
    await Promise.race([resolveChecked(host, use), timeout]);
  } catch (err) {
    if (err instanceof OutboundRefusedError) throw new ValidationError(`The ${label} is not allowed: ${err.message}`);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Resolves `host` and checks every address it resolves to (a name with one public and one
 * internal address is refused: DNS rebinding picks either). Returns the addresses, checked: the
 * caller connects to one of these, never resolves the name again.
 */
export async function resolveChecked(host: string, use: OutboundUse): Promise<LookupAddress[]> {
  const name = canonical(host);
  const literal = hostRefusal(name, use);
  if (literal) throw new OutboundRefusedError(literal);
  if (isIP(name)) return [{ address: name, family: isIP(name) }];
  const addresses = await new Promise<LookupAddress[]>((resolve, reject) => {
    dnsLookup(name, { all: true, verbatim: true }, (err, list) => (err ? reject(err) : resolve(list)));
  });
  for (const a of addresses) {
    const reason = addressRefusal(name, a.address, use);
    if (reason) throw new OutboundRefusedError(reason);
  }
  return addresses;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for `http.request`/`net.connect`: resolves through resolveChecked, so the socket
 * connects to an address that was checked (net skips lookup for IP literals: check those first
 * with hostRefusal).
 */
export function checkedLookup(use: OutboundUse): LookupFunction {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    resolveChecked(hostname, use).then(
      (list) => (options?.all ? callback(null, list) : callback(null, list[0].address, list[0].family)),
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

/**
 * A TCP connection to `host:port` for `use`, made only to an address checked here (an IP literal,
 * or what checkedLookup resolved and checked for this very connection): a name whose DNS answer
 * changes after an earlier check cannot send the connection elsewhere. Resolves once connected;
 * fails with an OutboundRefusedError, the connection's own error, or ETIMEDOUT after `timeoutMs`.
 */
export function connectChecked(host: string, port: number, use: OutboundUse, timeoutMs: number): Promise<Socket> {
  const literal = hostRefusal(host, use);
  if (literal) return Promise.reject(new OutboundRefusedError(literal));
  return new Promise((resolve, reject) => {
    const socket = netConnect({ host: bare(host), port, lookup: checkedLookup(use) });
    const fail = (err: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(err);
    };
    const timer = setTimeout(() => fail(Object.assign(new Error(`No connection to ${host}:${port} within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })), timeoutMs);
    socket.once('error', fail);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeListener('error', fail);
      resolve(socket);
    });
  });
}

/** What postChecked answers: the status, and the body when it was asked to read one. */
export interface CheckedAnswer { status: number; body: Buffer | null }

/**
 * POSTs `body` to `url` for `use`. Connects only to an address checked here (the literal, or every
 * address the name resolves to, resolved once), never follows a redirect (a 3xx is just the answer),
 * and gives up after `timeoutMs`. The answer's body is read only when `maxBodyBytes` is given, and
 * at most that much (more is an error); otherwise the connection is closed once the status is in.
 *
 * Fails with an OutboundRefusedError (the target is not allowed), an error named `TimeoutError`
 * (no answer in time), or the connection's own error (its `code`: ECONNREFUSED, …).
 */
export function postChecked(url: string, body: string, opts: {
  use: OutboundUse; headers: Record<string, string>; timeoutMs: number; maxBodyBytes?: number;
}): Promise<CheckedAnswer> {
  const target = new URL(url);
  const literal = hostRefusal(target.hostname, opts.use);
  if (literal) return Promise.reject(new OutboundRefusedError(literal));
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const fail = (err: Error) => reject(err.name === 'AbortError' ? Object.assign(new Error('timeout'), { name: 'TimeoutError' }) : err);
    const req = send(target, {
      method: 'POST',
      headers: { ...opts.headers, 'Content-Length': String(Buffer.byteLength(body)) },
      lookup: checkedLookup(opts.use) as any,
      agent: false,
      signal: AbortSignal.timeout(opts.timeoutMs),
    }, (res) => {
      const status = res.statusCode ?? 0;
      const max = opts.maxBodyBytes;
      if (max === undefined) {
        resolve({ status, body: null });
        res.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > max) res.destroy(new Error(`The answer was longer than ${Math.round(max / 1024)} KB.`));
        else chunks.push(c);
      });
      res.on('error', fail);
      res.on('end', () => resolve({ status, body: Buffer.concat(chunks) }));
    });
    req.on('error', fail);
    req.end(body);
  });
}

/**
 * A foreign server's words in our records (an SMTP answer, an IMAP refusal): its first line, only
 * printable characters, at most `max` of them. Enough to identify the failure; not enough to read
 * another service's banner or answer through a misconfigured target.
 */
export function foreignText(text: string | null | undefined, max = 120): string {
  const first = String(text ?? '').split(/\r?\n/, 1)[0].replace(/[^\x20-\x7e]/g, '').trim();
  return first.length > max ? `${first.slice(0, max)}…` : first;
}

/** A joi `custom` for a mail server's host (SMTP, IMAP, POP3): anything but a metadata address. */
export function mailServerHost(value: string | null, helpers: { state: { path?: Array<string | number> } }): string | null {
  const refusal = value ? hostRefusal(value, 'mail-server') : null;
  if (refusal) throw new Error(`The ${(helpers.state.path ?? ['server']).join('.').replace(/_/g, ' ')} is not allowed: ${refusal}`);
  return value;
}
