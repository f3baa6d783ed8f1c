import { createHash } from 'node:crypto';
import Encoding from 'encoding-japanese';
import libmime from 'libmime';
import { convert as htmlToText } from 'html-to-text';
import { simpleParser, type Attachment, type ParsedMail } from 'mailparser';
import { normaliseMessageId, parseReferences } from '../ticket/mail/threading';
import { stripQuoted } from './quote';
import { mailboxesOf } from './addresses';
import { isForwardedMail } from './subject';
import { isTnef, readTnef, TnefError } from './tnef';

/**
 * A raw mail read into what the ingestion decides on: addresses lower-cased, ids without angle
 * brackets, the text with its quoted history stripped, the files it carries, and the header
 * facts the loop and bounce rules read.
 */
export interface IncomingMessage {
  raw: Buffer;
  /** The Message-ID, or null when it has none (or an unusable one). */
  messageId: string | null;
  /** What identifies the mail across mailboxes and fetches: its sender and Message-ID (messageKey), else `sha256:<hash of the raw mail>`. */
  key: string;
  /** Who the mail is from: the From header, or the Reply-To when MAIL_PRIORITISE_REPLY_TO makes it the sender (./replyTo.ts). */
  from: { address: string; name: string } | null;
  /** The From header, kept here when the Reply-To took its place as the sender. */
  headerFrom?: { address: string; name: string };
  /** The envelope sender (Return-Path): '' for the null sender of bounces, null when the header is absent. */
  returnPath: string | null;
  replyTo: { address: string; name: string } | null;
  to: string[];
  cc: string[];
  /** Delivered-To / X-Original-To: where the mail really went when To and Cc do not say (Bcc, aliases). */
  deliveredTo: string[];
  subject: string;
  /** The message as plain text, quoted history removed where it can be told apart. */
  text: string;
  /** The text came from the text part (not the HTML alternative beside it, nor a winmail.dat). */
  fromTextPart: boolean;
  date: Date | null;
  inReplyTo: string[];
  references: string[];
  files: Array<{ filename: string; contents: Buffer; inline: boolean }>;
  /** The Message-ID, In-Reply-To and References of mails forwarded as attachments (message/rfc822), without brackets. */
  forwardedIds: string[];
  /** Header name (lower case) → raw values. */
  headers: Map<string, string[]>;
  contentType: string;
  parsed: ParsedMail;
}

/** `<a@b>` or `a@b` (possibly with a comment) → the bare address, lower-cased; '' for `<>`. */
function bareAddress(value: string): string {
  const inBrackets = /<([^<>]*)>/.exec(value);
  return (inBrackets ? inBrackets[1] : value).trim().toLowerCase();
}

function headerMap(parsed: ParsedMail): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const { key, line } of parsed.headerLines) {
    const value = line.slice(line.indexOf(':') + 1).replace(/\r?\n[ \t]+/g, ' ').trim();
    map.set(key.toLowerCase(), [...(map.get(key.toLowerCase()) ?? []), value]);
  }
  return map;
}

/**
 * The threading ids (Message-ID, In-Reply-To, References) of mails forwarded as attachments
 * (message/rfc822 parts), read from the raw mail: mailparser inlines such parts into the text and
 * keeps none of their headers. Parts in base64 (which RFC 2046 forbids, but clients write) are
 * decoded. Bounded: the first 20 such parts, 64 KiB of headers each.
 */
function idsOfAttachedMails(raw: Buffer): string[] {
  const text = raw.toString('latin1');
  const ids: string[] = [];
  const partType = /^content-type:[ \t]*message\/(?:rfc822|global)\b/gim;
  for (let found = 0, m = partType.exec(text); m && found < 20; m = partType.exec(text), found++) {
    const headEnd = text.slice(m.index, m.index + 64 * 1024).search(/\r?\n\r?\n/);
    if (headEnd < 0) continue;
    // The part's headers: from its boundary line (Content-Transfer-Encoding may come before Content-Type).
    const partStart = Math.max(0, text.lastIndexOf('\n--', m.index));
    const partHead = text.slice(partStart, m.index + headEnd);
    let body = text.slice(m.index + headEnd).replace(/^\r?\n\r?\n/, '').slice(0, 64 * 1024);
    if (/^content-transfer-encoding:[ \t]*base64/im.test(partHead)) {
      body = Buffer.from(body.split(/\r?\n(?:\r?\n|--)/)[0].replace(/\s+/g, ''), 'base64').toString('latin1');
    }
    const head = body.split(/\r?\n\r?\n/)[0].replace(/\r?\n[ \t]+/g, ' ');
    for (const h of head.matchAll(/^(?:message-id|in-reply-to|references):(.*)$/gim)) ids.push(...parseReferences(h[1]));
  }
  return [...new Set(ids)];
}

/** The header block of a raw mail (up to its first empty line, at most 256 KiB). */
export function headerBlock(raw: Buffer): Buffer {
  const head = raw.subarray(0, 256 * 1024);
  const end = head.indexOf('\r\n\r\n');
  const lf = head.indexOf('\n\n');
  const cut = [end < 0 ? -1 : end + 4, lf < 0 ? -1 : lf + 2].filter((i) => i >= 0);
  return cut.length ? head.subarray(0, Math.min(...cut)) : head;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const windows1252 = new TextDecoder('windows-1252');

/**
 * The raw mail as mailparser reads it: a header block of ASCII or UTF-8 (RFC 6532) as it is; one
 * with 8-bit bytes that are no UTF-8 (a mailer that wrote its charset unencoded, nearly always
 * Latin-1 or Windows-1252: `Subject: Grüße`, `From: Jörg Bräuer`) re-encoded from Windows-1252,
 * Latin-1's superset, to UTF-8. Read as UTF-8, each such byte became U+FFFD in the ticket's
 * subject and the new user's name, for good.
 */
function withHeadersInUtf8(raw: Buffer): Buffer {
  const head = headerBlock(raw);
  if (!head.some((byte) => byte > 0x7f)) return raw;
  try {
    strictUtf8.decode(head);
    return raw;
  } catch {
    return Buffer.concat([Buffer.from(windows1252.decode(head), 'utf8'), raw.subarray(head.length)]);
  }
}

const JIS_ESCAPE = /\x1b(?:\$[@B]|\([BJ])/;

/**
 * Text in ISO-2022-JP (7-bit, with escape sequences) that declared no charset reaches us as ASCII
 * with the escapes in it (Japanese mailers of old, and some gateways, leave the charset out).
 */
function decodeUndeclaredJis(text: string): string {
  if (!JIS_ESCAPE.test(text) || /[^\x00-\x7f]/.test(text)) return text;
  return Encoding.codeToString(Encoding.convert(Encoding.stringToCode(text), { to: 'UNICODE', from: 'JIS' }));
}

const hashOf = (raw: Buffer) => `sha256:${createHash('sha256').update(raw).digest('hex')}`;

/**
 * The import key of a mail with a Message-ID: its sender's address (the From header, lower case)
 * and its Message-ID, hashed (`id:<sha256 hex of "<address> <id>">`). A Message-ID alone was no
 * mail's: another sender reusing one (a broken mailer, a template) was taken for a duplicate and
 * dropped. Migration 044 rewrites the keys of the lines written before it, in SQL: keep the two
 * in step.
 */
export const messageKey = (address: string, messageId: string): string => `id:${createHash('sha256').update(`${address} ${messageId}`).digest('hex')}`;

/** A path a sender's client put in a file name: absolute (`/home/…`, `C:\…`, `\\server\…`) or climbing (`../`). */
const PATH_NAME = /^(?:[a-z]:)?[\\/]|(?:^|[\\/])\.\.(?:[\\/]|$)/i;
/** How long a stored file name may be (the column's 255 characters, as the API's attachments). */
const FILENAME_MAX = 255;

/**
 * A file name that is safe to store and show, never empty: no control characters; a path's last
 * part only (`C:\Users\bob\report.pdf` → `report.pdf`), any other slash made `_` (`a/b.txt`
 * stays recognisable); shortened to FILENAME_MAX characters keeping its extension, which decides
 * whether the file is allowed. A part without a name is `attachment-<n>.<the extension of its
 * MIME type>` (`attachment-1.pdf`; `.bin` for a type without one), which `allowed_files` judges as
 * it judges a named file: they were all `.bin`, refused, their senders told.
 */
function safeFilename(name: string | undefined, contentType: string, index: number): string {
  // eslint-disable-next-line no-control-regex
  const bare = (name ?? '').replace(/[\u0000-\u001f\u007f]/g, '');
  const last = (PATH_NAME.test(bare) ? bare.split(/[\\/]/).pop()! : bare.replace(/[\\/]/g, '_')).trim();
  const cleaned = /^\.*$/.test(last) ? '' : last;
  const chars = Array.from(cleaned);
  if (chars.length > FILENAME_MAX) {
    const ext = /\.[^.\s]{1,16}$/.exec(cleaned)?.[0] ?? '';
    return `${chars.slice(0, FILENAME_MAX - Array.from(ext).length).join('').trimEnd()}${ext}`;
  }
  if (cleaned) return cleaned;
  return `attachment-${index + 1}.${libmime.detectExtension(contentType.split(';')[0].trim().toLowerCase())}`;
}

/**
 * A meeting invitation's calendar form of its text (`text/calendar; method=REQUEST` beside the text
 * and HTML, as Outlook and Gmail send it in multipart/alternative): no file name, not marked
 * `Content-Disposition: attachment`, in a mail with a text. It is not a file: kept, it was refused
 * (`.ics` is not in the shipped `allowed_files`) and every invitation's organiser was told so. A
 * named one (Gmail adds `invite.ics` as a file too) is a file.
 */
const isCalendarForm = (a: Attachment, parsed: ParsedMail) =>
  a.contentType.toLowerCase() === 'text/calendar' && !a.filename && a.contentDisposition !== 'attachment' && !!(parsed.text?.trim() || parsed.html);

/**
 * The files of a mail: every attachment, inline images of multipart/related included (with or
 * without a Content-Disposition; the HTML refers to them by `cid:`), but an invitation's calendar
 * form of its text (isCalendarForm); a `winmail.dat` (TNEF) is replaced by the files and the text
 * inside it (kept as it is when it cannot be read).
 */
function filesOf(parsed: ParsedMail): { files: IncomingMessage['files']; tnefText: string | null } {
  const files: IncomingMessage['files'] = [];
  let tnefText: string | null = null;
  for (const a of parsed.attachments) {
    if (isCalendarForm(a, parsed)) continue;
    if (isTnef(a.contentType, a.filename)) {
      try {
        const tnef = readTnef(a.content);
        for (const f of tnef.files) files.push({ filename: safeFilename(f.filename, f.mimeType ?? '', files.length), contents: f.contents, inline: false });
        tnefText = tnefText ?? (tnef.text?.trim() || (tnef.html ? htmlToText(tnef.html, { wordwrap: false }) : null));
        continue;
      } catch (err) {
        if (!(err instanceof TnefError)) throw err;
      }
    }
    files.push({ filename: safeFilename(a.filename, a.contentType, files.length), contents: a.content, inline: a.contentDisposition === 'inline' || !!a.related || !!a.cid });
  }
  return { files, tnefText };
}

/**
 * HTML read as a reader sees it: no images (a tracking pixel's address is no text), nothing the
 * HTML hides (`display:none`, `hidden`: preheaders, tracking text), and a table's cells apart, each
 * row a line (`Name: Jane`; they ran together as `Name:Jane`).
 */
const toText = (html: string) => htmlToText(html, {
  wordwrap: false,
  selectors: [
    { selector: 'img', format: 'skip' },
    ...['[hidden]', '[style*="display:none" i]', '[style*="display: none" i]'].map((selector) => ({ selector, format: 'skip' })),
    { selector: 'tr', format: 'block', options: { leadingLineBreaks: 1, trailingLineBreaks: 1 } },
    ...['td', 'th'].map((selector) => ({ selector, format: 'inlineSurround', options: { suffix: ' ' } })),
  ],
}).replace(/[ \t]+$/gm, '');

/**
 * The text of a mail's HTML alternative when its message text came from the text part (else ''):
 * what a reader of the HTML sees, which may say what the text part does not (spam rules read both).
 */
export function htmlAlternativeText(mail: IncomingMessage): string {
  return mail.parsed.html && mail.fromTextPart ? toText(mail.parsed.html) : '';
}

/** A text part that may stand in for its HTML alternative has at most so many words. */
const STUB_WORDS = 30;
const wordsOf = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/**
 * Whether a text part only stands in for the HTML beside it ("This message requires an HTML capable
 * mail client.", a web form's "New submission"), so the HTML's text is the message: the text part
 * is short (STUB_WORDS words at most, its quoted history aside) and the HTML's text says clearly
 * more (twice its words and 10 more), or more in other words (most of the text part's words are not
 * in it). A text part that is the HTML as text (the same words, a signature aside) is kept.
 */
function isStubOf(text: string, htmlText: () => string, forward: boolean): boolean {
  const plain = wordsOf(stripQuoted(text, { forward }));
  if (plain.length > STUB_WORDS) return false;
  const html = wordsOf(stripQuoted(htmlText(), { forward }));
  if (html.length >= 2 * plain.length && html.length >= plain.length + 10) return true;
  const inHtml = new Set(html);
  const distinct = [...new Set(plain)];
  return html.length > plain.length && distinct.filter((w) => inHtml.has(w)).length * 2 < distinct.length;
}

/**
 * The message's text, before its quoted history is cut: the text part, else the HTML's text (also
 * when the text part only stands in for it: isStubOf), else a winmail.dat's. A text part of white
 * space only is none (mailers send an empty text alternative to an HTML one). The HTML is read
 * only when it may be needed.
 */
function bodyOf(parsed: ParsedMail, tnefText: string | null, forward: boolean): { body: string; fromTextPart: boolean } {
  const text = decodeUndeclaredJis(parsed.text ?? '');
  let read: string | undefined;
  const htmlText = () => (read ??= parsed.html ? toText(parsed.html) : '');
  if (text.trim() && !(parsed.html && isStubOf(text, htmlText, forward))) return { body: text, fromTextPart: true };
  return { body: htmlText() || (text.trim() ? text : '') || tnefText || '', fromTextPart: false };
}

export async function parseMail(raw: Buffer): Promise<IncomingMessage> {
  // The HTML is read as text by toText only: mailparser's reading of an HTML-only mail kept image
  // addresses (`x [https://tracker.test/pixel.gif]`) and hidden text, and ran table cells together.
  const parsed = await simpleParser(withHeadersInUtf8(raw), { skipImageLinks: true, skipTextToHtml: true, skipHtmlToText: true });
  const headers = headerMap(parsed);
  const first = (name: string) => headers.get(name)?.[0] ?? null;
  const messageId = normaliseMessageId(parsed.messageId);
  // Address headers are read from their raw values (./addresses.ts), never from mailparser's.
  const mailboxes = (name: string) => mailboxesOf(headers.get(name) ?? []);
  const [fromValue] = mailboxes('from');
  const [replyToValue] = mailboxes('reply-to');
  const returnPath = first('return-path');
  // mailparser writes no text for an HTML part inside multipart/related (HTML with inline images).
  const { files, tnefText } = filesOf(parsed);
  const subject = decodeUndeclaredJis(parsed.subject ?? '').replace(/[\r\n]+/g, ' ').trim();
  const forward = isForwardedMail(subject);
  const { body, fromTextPart } = bodyOf(parsed, tnefText, forward);
  return {
    raw,
    messageId,
    key: messageId && fromValue ? messageKey(fromValue.address, messageId) : hashOf(raw),
    from: fromValue ?? null,
    returnPath: returnPath === null ? null : bareAddress(returnPath),
    replyTo: replyToValue ?? null,
    to: mailboxes('to').map((a) => a.address),
    cc: mailboxes('cc').map((a) => a.address),
    deliveredTo: [...(headers.get('delivered-to') ?? []), ...(headers.get('x-original-to') ?? [])].map(bareAddress).filter(Boolean),
    subject,
    // A forward's text is the mail forwarded, not history to cut.
    text: stripQuoted(body, { forward }),
    fromTextPart,
    date: parsed.date && !Number.isNaN(parsed.date.getTime()) ? parsed.date : null,
    inReplyTo: parseReferences(typeof parsed.inReplyTo === 'string' ? parsed.inReplyTo : ''),
    references: parseReferences([parsed.references ?? []].flat().map((r) => (r.startsWith('<') ? r : `<${r}>`)).join(' ')),
    files,
    forwardedIds: idsOfAttachedMails(raw),
    headers,
    contentType: (parsed.headers.get('content-type') as { value?: string } | undefined)?.value?.toLowerCase() ?? 'text/plain',
    parsed,
  };
}
