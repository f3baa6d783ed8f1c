import { AsyncLocalStorage } from 'node:async_hooks';
import type { Socket } from 'node:net';
import nodemailer, { type SendMailOptions, type Transporter } from 'nodemailer';
import type { Brand } from '../db/models';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import { OutboundRefusedError, connectChecked, foreignText } from '../net/outbound';
import { accessToken } from '../oauth/tokens';
import { BRAND_SMTP_PASSWORD } from '../crypto/secrets';
import { revealSecret } from '../crypto/storedSecret';

/** A recipient the SMTP server refused (at RCPT TO), with its answer. */
export interface RefusedRecipient {
  address: string;
  response: string | null;
}

/** A message a transport sent (or tried to): what the mail delivery record shows. */
export interface SentMail {
  /** Every recipient of the envelope: To, Cc and Bcc. */
  recipients: string[];
  subject: string | null;
  messageId: string | null;
  /** The SMTP server's last answer (`250 2.0.0 OK ...`, or the refusal). */
  response: string | null;
  /** The recipients the server refused: of a mail it took, those it does not deliver to. */
  refused: RefusedRecipient[];
  error?: Error;
}

/** The mails sent within one job (mail/deliveries.ts reads them to record the delivery). */
export const sentMails = new AsyncLocalStorage<SentMail[]>();

const addresses = (v: SendMailOptions['to']): string[] => ((Array.isArray(v) ? v.flat() : v ? [v] : []) as Array<string | { address?: string }>)
  .map((a) => (typeof a === 'string' ? a : a.address ?? '')).filter(Boolean);

type Rejections = { rejected?: unknown[]; rejectedErrors?: Array<Error & { recipient?: string; response?: string }> };

/** The recipients nodemailer says were refused (`rejected`), each with the server's answer (`rejectedErrors`). */
function refusedOf({ rejected, rejectedErrors }: Rejections): RefusedRecipient[] {
  const out = (rejectedErrors ?? []).filter((e) => e.recipient)
    .map((e) => ({ address: e.recipient!, response: e.response ? foreignText(e.response, 200) : null }));
  for (const address of rejected ?? []) {
    if (typeof address === 'string' && !out.some((r) => r.address === address)) out.push({ address, response: null });
  }
  return out;
}

/** `a@x.test (550 5.1.1 No such user); b@x.test (…)`: the refused recipients and why. */
export const describeRefused = (refused: RefusedRecipient[]): string => refused.map((r) => (r.response ? `${r.address} (${r.response})` : r.address)).join('; ');

/**
 * Whether an SMTP error refuses the mail itself for good: a 5xx reply (RFC 5321: permanent; but 503,
 * bad sequence of commands, as nodemailer reads it) to MAIL FROM, to every RCPT TO, to DATA or at
 * its end. Trying it again would get the same answer for a day. Not a refused login (a setting to
 * mend, after which the mail goes), a 4xx or a connection that failed: those are tried again.
 */
export function isPermanentRefusal(err: unknown): boolean {
  const { code, responseCode } = (err ?? {}) as { code?: string; responseCode?: number };
  return (code === 'EENVELOPE' || code === 'EMESSAGE') && typeof responseCode === 'number' && responseCode >= 500 && responseCode < 600 && responseCode !== 503;
}

/**
 * Records every message of the transport in the current job's `sentMails`, sent or refused, with
 * its envelope's recipients and those the server refused. What the server said is kept to its
 * first line, shortened (foreignText): enough to identify a failure.
 */
function recording(transport: Transporter): Transporter {
  const send = transport.sendMail.bind(transport) as (mail: SendMailOptions) => Promise<any>;
  transport.sendMail = (async (mail: SendMailOptions) => {
    const base = {
      recipients: [...addresses(mail.to), ...addresses(mail.cc), ...addresses(mail.bcc)], subject: typeof mail.subject === 'string' ? mail.subject : null,
    };
    try {
      const info = await send(mail);
      sentMails.getStore()?.push({
        ...base, messageId: info.messageId ?? null, response: info.response ? foreignText(info.response, 200) : null, refused: refusedOf(info),
      });
      return info;
    } catch (err) {
      const e = err as Error & Rejections & { response?: string; code?: string };
      const response = e.response ? foreignText(e.response, 200) : null;
      const refused = refusedOf(e);
      // Every recipient refused: the answer to each one, not only the last.
      const message = (e instanceof OutboundRefusedError ? e.message : foreignText(e.message, 200)) + (refused.length ? `: ${describeRefused(refused)}` : '');
      const error = Object.assign(new Error(message), { code: e.code, response, responseCode: (e as any).responseCode });
      sentMails.getStore()?.push({ ...base, messageId: null, response, refused, error });
      throw error;
    }
  }) as Transporter['sendMail'];
  return transport;
}

/**
 * What a transport is built from: a change to any of these rebuilds it. (Not the OAuth2 tokens:
 * they change with every refresh, and the transport asks the token service for them.)
 */
const settingsKey = (b: Brand) => JSON.stringify([b.smtp_host, b.smtp_port, b.smtp_encryption, b.smtp_requires_auth, b.smtp_username, b.smtp_password,
  b.auth_type, b.oauth_provider, b.oauth_client_id, b.oauth_tenant, b.oauth_token_url, b.oauth_scope]);

/**
 * XOAUTH2 with tokens from the token service (src/oauth/tokens.ts), not nodemailer's own refresh:
 * one refresh logic for mailboxes and SMTP, rotated refresh tokens stored. nodemailer asks again
 * with `renew` when the server refused a token; the service then replaces that token.
 */
function oauth2Auth(brand: Brand): SMTPTransport.Options['auth'] {
  let last: string | undefined;
  return {
    type: 'OAuth2',
    user: brand.smtp_username ?? '',
    provisionCallback(_user, renew, callback) {
      accessToken({ table: 'brands', id: brand.id, use: 'smtp' }, renew ? { rejected: last } : {}).then(({ token, expiresAt }) => {
        last = token;
        callback(null, token, expiresAt * 1000);
      }, (err: Error) => callback(err, '', 0));
    },
  };
}

const CONNECTION_TIMEOUT_MS = 15000;

/**
 * nodemailer's `getSocket`: every pooled connection is opened by connectChecked, to an address
 * checked for that connection, instead of nodemailer resolving the name again on its own (a DNS
 * answer changed after the check before the send would reach an address nobody checked). TLS,
 * implicit or STARTTLS, runs over this socket with the brand's host name for SNI and the
 * certificate check.
 */
function checkedSocket(options: { host?: string; port?: number }, callback: (err: Error | null, socket?: { connection: Socket }) => void): void {
  connectChecked(options.host ?? '', options.port ?? 25, 'mail-server', CONNECTION_TIMEOUT_MS).then((connection) => callback(null, { connection }), (err: Error) => callback(err));
}

const cache = new Map<number, { key: string; transport: Transporter }>();

export class MailConfigError extends Error {}

/**
 * One pooled SMTP transport per brand, built from the brand's own settings, cached, and rebuilt
 * (the old pool closed) when the brand's SMTP settings change.
 * Encryption: `ssl` is TLS from the first byte (usually port 465), `tls` requires STARTTLS, empty
 * is none (plain SMTP, never upgraded: a server offering STARTTLS with a certificate that does not
 * verify would otherwise fail every send).
 */
export function transportFor(brand: Brand): Transporter {
  if (brand.email_method !== 'smtp') throw new MailConfigError(`Brand ${brand.id} does not send mail by SMTP (email_method ${brand.email_method})`);
  if (!brand.smtp_host) throw new MailConfigError(`Brand ${brand.id} has no SMTP host`);
  const key = settingsKey(brand);
  const cached = cache.get(brand.id);
  if (cached?.key === key) return cached.transport;
  cached?.transport.close();
  const transport = recording(nodemailer.createTransport({
    pool: true,
    maxConnections: 3,
    host: brand.smtp_host,
    port: brand.smtp_port ?? (brand.smtp_encryption === 'ssl' ? 465 : 25),
    secure: brand.smtp_encryption === 'ssl',
    requireTLS: brand.smtp_encryption === 'tls',
    ignoreTLS: !brand.smtp_encryption,
    auth: brand.auth_type === 'oauth2' ? oauth2Auth(brand)
      : brand.smtp_requires_auth ? { user: brand.smtp_username ?? '', pass: revealSecret(brand.smtp_password, BRAND_SMTP_PASSWORD) ?? '' } : undefined,
    getSocket: checkedSocket,
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    greetingTimeout: 15000,
    socketTimeout: 30000,
    logger: false,
  }));
  cache.set(brand.id, { key, transport });
  return transport;
}

export function closeTransports(): void {
  for (const { transport } of cache.values()) transport.close();
  cache.clear();
}
