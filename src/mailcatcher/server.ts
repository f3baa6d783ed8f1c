import { SMTPServer } from 'smtp-server';
import { simpleParser } from 'mailparser';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { Op } from 'sequelize';
import { CaughtMail } from '../db/models';
import { logger } from '../logger';

/** The largest mail kept (the SMTP server announces it in EHLO and refuses bigger ones). */
export const MAX_MAIL_BYTES = 10 * 1024 * 1024;

export interface MailCatcher {
  port: number;
  close(): Promise<void>;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The mail's header block: everything before the first empty line. */
function headerBlock(raw: Buffer): string {
  const text = raw.subarray(0, 256 * 1024).toString('utf8');
  const end = text.search(/\r?\n\r?\n/);
  return end < 0 ? text : text.slice(0, end);
}

/** Stores one received mail, then drops the oldest beyond the newest `keep`. */
export async function storeCaughtMail(raw: Buffer, envelope: { from: string | null; to: string[] }, keep: number): Promise<CaughtMail> {
  const parsed = await simpleParser(raw);
  const mail = await CaughtMail.create({
    mail_from: envelope.from?.slice(0, 998) ?? null,
    rcpt_to: envelope.to.join(', ').slice(0, 4096),
    subject: parsed.subject?.slice(0, 998) ?? null,
    message_id: parsed.messageId?.slice(0, 998) ?? null,
    text: parsed.text ?? null,
    html: typeof parsed.html === 'string' ? parsed.html : null,
    headers: headerBlock(raw),
    size: raw.length,
  });
  const oldestKept = await CaughtMail.findOne({ attributes: ['id'], order: [['id', 'DESC']], offset: keep - 1 });
  if (oldestKept) await CaughtMail.destroy({ where: { id: { [Op.lt]: oldestKept.id } } });
  return mail;
}

/**
 * A local SMTP server that accepts every mail, without authentication or TLS, and keeps it in
 * `caught_mails` (the newest `keep`): what the help desk would have sent, for a developer to read
 * on `/admin/mail` or `GET /api/core/mailcatcher` instead of it reaching anyone.
 */
export async function startMailCatcher(opts: { host: string; port: number; keep: number }): Promise<MailCatcher> {
  const server = new SMTPServer({
    name: 'helpdesk-mailcatcher',
    banner: 'helpdesk mail catcher: mail is kept, never delivered',
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    size: MAX_MAIL_BYTES,
    logger: false,
    closeTimeout: 1000,
    onData(stream, session, callback) {
      readAll(stream).then(async (raw) => {
        if ((stream as Readable & { sizeExceeded?: boolean }).sizeExceeded) {
          const err = Object.assign(new Error(`Message exceeds the ${MAX_MAIL_BYTES} bytes the mail catcher keeps`), { responseCode: 552 });
          return callback(err);
        }
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : null;
        const to = session.envelope.rcptTo.map((r) => r.address);
        const mail = await storeCaughtMail(raw, { from, to }, opts.keep);
        logger.info({ id: mail.id, to: mail.rcpt_to, subject: mail.subject }, 'mail caught');
        callback(null, `Caught as mail ${mail.id}`);
      }).catch((err: Error) => {
        logger.error({ err }, 'mail catcher could not store a mail');
        callback(Object.assign(new Error('The mail catcher could not store the mail'), { responseCode: 451 }));
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => logger.error({ err }, 'mail catcher connection error'));
  const port = ((server as unknown as { server: { address(): AddressInfo } }).server.address()).port;
  return { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
