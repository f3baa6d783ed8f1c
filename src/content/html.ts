import sanitizeHtml from 'sanitize-html';

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

/** Rich text as stored: plain text unchanged, HTML through the allow-list. */
export function storedHtml(text: string): string;
export function storedHtml(text: string | null | undefined): string | null | undefined;
export function storedHtml(text: string | null | undefined): string | null | undefined {
  if (typeof text !== 'string' || !MARKUP.test(text)) return text;
  return sanitizeHtml(text, OPTIONS);
}
