import type { Transaction } from 'sequelize';
import { Setting, type Brand } from '../db/models';
import { htmlToText, storedHtml } from '../content/html';
import { isEmailAddress } from '../lib/validation';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]!));

export interface MailBody {
  /** Paragraphs of plain text. */
  paragraphs: string[];
  /** An optional call to action, shown as a link. */
  link?: { label: string; url: string };
}

/**
 * The brand's global email header and footer, sanitised as they are on write (a value stored
 * before they were, or written to the database directly, runs nothing in a mail client either).
 */
const brandFrame = (brand: Brand) => ({ header: storedHtml(brand.global_email_header ?? ''), footer: storedHtml(brand.global_email_footer ?? '') });

/** A message body framed by the brand's global email header and footer, as HTML and as text. */
export function frame(brand: Brand, body: MailBody): { html: string; text: string } {
  const htmlBody = body.paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('\n')
    + (body.link ? `\n<p><a href="${escapeHtml(body.link.url)}">${escapeHtml(body.link.label)}</a></p>` : '');
  const textBody = body.paragraphs.join('\n\n') + (body.link ? `\n\n${body.link.label}: ${body.link.url}` : '');
  return frameRendered(brand, { html: htmlBody, text: textBody });
}

/**
 * The line at the top of every ticket mail above which a reply by mail is written: the incoming
 * mail's text is cut there (src/mailbox/quote.ts), whatever the client's quoting looks like.
 * SupportPal's words.
 */
export const REPLY_ABOVE_MARKER = '##- Please type your reply above this line -##';

/** A ticket mail with the marker on top (small and grey in HTML), so a reply above it is told from the quoted mail. */
export const withReplyMarker = (body: { html: string; text: string }): { html: string; text: string } => ({
  html: `<div style="color:#999999;font-size:12px">${REPLY_ABOVE_MARKER}</div>\n${body.html}`,
  text: `${REPLY_ABOVE_MARKER}\n\n${body.text}`,
});

/**
 * A body already rendered as HTML and as text (a ticket mail's template) framed by the brand's
 * global email header and footer; their text part is them read as a template is (htmlToText:
 * links keep their address).
 */
export function frameRendered(brand: Brand, body: { html: string; text: string }): { html: string; text: string } {
  const { header, footer } = brandFrame(brand);
  return {
    html: [header, body.html, footer].filter(Boolean).join('\n'),
    text: [htmlToText(header), body.text, htmlToText(footer)].filter(Boolean).join('\n\n'),
  };
}

/**
 * The headers every mail the help desk sends carries, so it is known for ours should it come
 * back: `X-Loop` with the department (else brand) address it is sent for (the common
 * convention; src/mailbox/ingest.ts refuses an incoming mail that carries one of our addresses
 * there as a loop), and, on an automatic mail, `Auto-Submitted` (RFC 3834: `auto-replied` for an
 * answer to a mail, `auto-generated` otherwise) with `X-Auto-Response-Suppress`, so that
 * auto-responders do not answer it. A mail a person wrote (a reply, a forward) carries no
 * Auto-Submitted.
 */
export function ownMailHeaders(loopAddress: string, automatic: 'auto-replied' | 'auto-generated' | null): Record<string, string> {
  return {
    'X-Loop': loopAddress,
    ...(automatic ? { 'Auto-Submitted': automatic, 'X-Auto-Response-Suppress': 'All' } : {}),
  };
}

/**
 * The help desk's own address: the core setting `default_email` (lower case), null when it is
 * unset or not an address.
 */
export async function systemEmail(transaction?: Transaction): Promise<string | null> {
  const row = await Setting.findOne({ attributes: ['id', 'value'], where: { scope: 'core', name: 'default_email' }, transaction });
  const address = (row?.value ?? '').trim().toLowerCase();
  return address && isEmailAddress(address) ? address : null;
}

/**
 * `"Brand name" <address>` of a mail not sent from a department address: the brand's
 * `default_email`, else the core `default_email`, else (nothing configured) `no-reply@localhost`.
 */
export async function fromAddress(brand: Brand): Promise<{ name: string; address: string }> {
  return { name: brand.name, address: brand.default_email || (await systemEmail()) || 'no-reply@localhost' };
}
