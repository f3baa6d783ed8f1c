import { convert } from 'html-to-text';
import sanitizeHtml from 'sanitize-html';
import { Joi } from '../lib/validation';

/**
 * The policy for stored rich text (ticket message text, article text, canned responses, comments):
 * text with HTML in it is sanitised on write with an allow-list (sanitize-html), so a client that
 * renders it as HTML runs no script: no `<script>`, `<style>`, `<iframe>`, `<form>`, no `on…=`
 * handlers, no `style`, and links and images only to http(s), mailto, tel (and `cid:` / `data:`
 * images for mail). Text with no tag in it is plain text and is stored exactly as sent (a `<`
 * followed by a space, `&`, quotes stay as they are). Subjects and names are plain text, never HTML:
 * stored as sent, and a client must show them as text.
 */
const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: [
    ...sanitizeHtml.defaults.allowedTags, 'img', 'h1', 'h2', 'span', 'u', 's', 'del', 'ins', 'sub', 'sup', 'font',
  ],
  allowedAttributes: {
    a: ['href', 'name', 'target', 'title', 'rel'],
    img: ['src', 'alt', 'title', 'width', 'height'],
    font: ['color'],
    td: ['colspan', 'rowspan', 'align'],
    th: ['colspan', 'rowspan', 'align', 'scope'],
    ol: ['start', 'type'],
    '*': ['dir', 'lang'],
  },
  allowedSchemes: ['http', 'https', 'mailto', 'tel'],
  allowedSchemesByTag: { img: ['http', 'https', 'cid', 'data'] },
  allowProtocolRelative: false,
  // A link that opens elsewhere cannot reach back to this page (window.opener).
  transformTags: { a: (tagName, attribs) => ({ tagName, attribs: attribs.target ? { ...attribs, rel: 'noopener noreferrer' } : attribs }) },
};

/** Something that reads as markup: a tag, a closing tag, a comment or a declaration. */
const MARKUP = /<\/?[a-zA-Z!?]/;

/** Rich text that is HTML (else it is plain text): what storedHtml sanitises, and mail inserts as markup. */
export const isMarkup = (text: string): boolean => MARKUP.test(text);

/**
 * Rich text as a reader sees it, for a search index: HTML read as text (its tags, attributes, link
 * addresses and images gone, entities decoded), plain text unchanged. So a search for `strong` or
 * `href` finds the articles that say it, not every article with bold text or a link.
 */
export function readableText(text: string): string {
  if (!isMarkup(text)) return text;
  return convert(text, { wordwrap: false, selectors: [{ selector: 'a', options: { ignoreHref: true } }, { selector: 'img', format: 'skip' }] });
}

/** Rich text as stored: plain text unchanged, HTML through the allow-list. */
export function storedHtml(text: string): string;
export function storedHtml(text: string | null | undefined): string | null | undefined;
export function storedHtml(text: string | null | undefined): string | null | undefined {
  if (typeof text !== 'string' || !MARKUP.test(text)) return text;
  return sanitizeHtml(text, OPTIONS);
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/**
 * Plain text (a mail's body) as rich text that shows exactly that text: stored as it is when
 * nothing in it reads as markup; otherwise (`Contact John <john@example.com>`, `if a<b`, a pasted
 * config) escaped into paragraphs and line breaks, as storedHtml would otherwise take the `<…` for
 * tags and drop it with all that follows.
 */
export function plainTextAsRichText(text: string): string {
  if (!isMarkup(text)) return text;
  const escaped = text.replace(/\r\n?/g, '\n').replace(/[&<>]/g, (c) => ESCAPES[c]);
  return escaped.split(/\n{2,}/).map((p) => `<p>${p.replace(/\n/g, '<br />\n')}</p>`).join('\n');
}

/**
 * A rich text field of a request body, at most `max` characters, as storedHtml stores it; trimmed
 * unless `trim` is false (a canned response keeps its text exactly as written). Text that the
 * allow-list empties (`<script>…</script>`, a comment, `<base href>`) is missing text: `The text
 * field is required.`, as an empty value is, never an empty message or a 500 from the column's
 * NOT NULL.
 */
export const richText = (max: number, { trim = true } = {}) => (trim ? Joi.string().trim() : Joi.string()).max(max).custom((value: string, helpers) => {
  const html = storedHtml(value);
  return html.trim() === '' ? helpers.error('any.required') : html;
});
