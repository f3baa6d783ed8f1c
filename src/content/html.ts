import { convert } from 'html-to-text';
import sanitizeHtml from 'sanitize-html';
import { Joi } from '../lib/validation';

/**
 * The policy for stored rich text (ticket message text, article text, canned responses, comments):
 * text with HTML in it is sanitised on write with an allow-list (sanitize-html), so a client that
 * renders it as HTML runs no script: no `<script>`, `<style>`, `<iframe>`, `<form>`, no `on…=`
 * handlers, no `style`, and links and images only to http(s), mailto, tel (and `cid:` / `data:`
 * images for mail). Text with no tag in it is plain text and is stored exactly as sent (a `<`
 * followed by a space, `&`, quotes stay as they are); text whose `<`s open no tag of HTML is stored
 * escaped (storedHtml). Subjects and names are plain text, never HTML:
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

// The elements of HTML (current and obsolete, and the svg and math roots): a `<` followed by one of
// these, with attributes HTML has, is a tag; any other `<` is text (`<john@example.com>`, `<T>`,
// `if a<b and c>d`), which the sanitiser would otherwise take for an unknown tag and drop with
// what it encloses.
const ELEMENTS = new Set(`a abbr acronym address applet area article aside audio b base basefont bdi bdo bgsound big blink
  blockquote body br button canvas caption center cite code col colgroup data datalist dd del details dfn dialog dir div dl dt
  em embed fieldset figcaption figure font footer form frame frameset h1 h2 h3 h4 h5 h6 head header hgroup hr html i iframe
  image img input ins isindex kbd keygen label legend li link listing main map mark marquee math menu menuitem meta meter
  multicol nav nextid nobr noembed noframes noscript object ol optgroup option output p param picture plaintext portal pre
  progress q rb rp rt rtc ruby s samp script search section select slot small source spacer span strike strong style sub
  summary sup svg table tbody td template textarea tfoot th thead time title tr track tt u ul var video wbr xmp`.split(/\s+/));
const ATTRIBUTES = new Set(`abbr accept accept-charset accesskey action align alink allow alt archive async autocapitalize
  autocomplete autofocus autoplay background bgcolor border cellpadding cellspacing char charoff charset checked cite class
  classid clear code codebase codetype color cols colspan compact content contenteditable controls coords crossorigin data
  datetime decoding default defer dir dirname disabled download draggable enctype enterkeyhint face for form formaction
  frame frameborder headers height hidden high href hreflang hspace icon id inert inputmode integrity is ismap itemid
  itemprop itemref itemscope itemtype kind label lang language list loading longdesc loop low marginheight marginwidth max
  maxlength media method min minlength multiple muted name nonce noresize noshade novalidate nowrap open optimum pattern ping
  placeholder popover poster preload profile readonly referrerpolicy rel required rev reversed role rows rowspan rules
  sandbox scope scrolling selected shape size sizes slot span spellcheck src srcdoc srclang srcset standby start step style
  summary tabindex target text title translate type usemap valign value valuetype version viewbox vlink vspace width wrap
  xmlns`.split(/\s+/));
// A name with a namespace or a hyphen (`o:p` from Word, `x-apple-data-detectors`, `data-id`,
// custom elements) and event handlers (`on…`, which the sanitiser removes) count as HTML's too.
const htmlName = (name: string, known: Set<string>) => known.has(name) || /[-:]/.test(name) || (known === ATTRIBUTES && name.startsWith('on'));
const TAG = /<\/?([a-zA-Z][\w:-]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)\s*\/?>/y;
const ATTRIBUTE = /\s+([^\s"'>/=]+)(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?/g;

/** Whether the `<` at `at` opens a tag of HTML (a comment or a declaration counts). */
function opensTag(text: string, at: number): boolean {
  if (/^<(!--|!doctype\b|\?xml\b)/i.test(text.slice(at, at + 9))) return true;
  TAG.lastIndex = at;
  const tag = TAG.exec(text);
  if (!tag || !htmlName(tag[1].toLowerCase(), ELEMENTS)) return false;
  return [...tag[2].matchAll(ATTRIBUTE)].every((a) => htmlName(a[1].toLowerCase(), ATTRIBUTES));
}

/**
 * HTML with every `<` that opens no tag of HTML escaped, so the sanitiser keeps it as text; null
 * when no `<` in it opens one: plain text that only looks like markup.
 */
function withStrayBracketsEscaped(text: string): string | null {
  let tags = 0;
  const out = text.replace(/</g, (lt, at: number) => (opensTag(text, at) ? (tags++, lt) : '&lt;'));
  return tags ? out : null;
}

const ENTITIES: Record<string, string> = { nbsp: ' ', amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'" };

/**
 * Mail's HTML read as plain text, for the text part: an email template (src/ticket/mail/render.ts)
 * and a brand's header and footer (src/mail/compose.ts) alike. Paragraphs and line breaks
 * kept, a link shown as its text followed by its address when the two differ, other tags dropped,
 * the common entities decoded. Merge fields pass through unchanged (they hold no tags).
 */
export function htmlToText(html: string): string {
  return html
    .replace(/\r\n?/g, '\n')
    .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, '')
    .replace(/<a\b[^>]*?\bhref\s*=\s*(["'])([\s\S]*?)\1[^>]*>([\s\S]*?)<\/a\s*>/gi, (_m, _q, href: string, inner: string) => {
      const label = inner.replace(/<[^>]+>/g, '').trim();
      return !label || label === href.trim() ? href.trim() : `${label} (${href.trim()})`;
    })
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|div|h\d|li|tr|table|blockquote)\s*>/gi, '\n')
    .replace(/<li\b[^>]*>/gi, '- ')
    .replace(/<[^>]+>/g, '')
    .replace(/&(nbsp|amp|lt|gt|quot|#39|apos);/g, (_m, name: string) => ENTITIES[name])
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/**
 * Rich text as a reader sees it, for a search index: HTML read as text (its tags, attributes, link
 * addresses and images gone, entities decoded), plain text unchanged. So a search for `strong` or
 * `href` finds the articles that say it, not every article with bold text or a link.
 */
export function readableText(text: string): string {
  if (!isMarkup(text)) return text;
  return convert(text, { wordwrap: false, selectors: [{ selector: 'a', options: { ignoreHref: true } }, { selector: 'img', format: 'skip' }] });
}

/**
 * Rich text as stored: plain text unchanged, HTML through the allow-list. Plain text that only looks
 * like markup (`Contact John <john@example.com>`, `use <T>`, `if a<b and c>d`: no tag of HTML in
 * it) is escaped into paragraphs, as mail's plain text is (plainTextAsRichText), so it shows
 * exactly as written; in HTML, a `<` that opens no tag is kept as text.
 */
export function storedHtml(text: string): string;
export function storedHtml(text: string | null | undefined): string | null | undefined;
export function storedHtml(text: string | null | undefined): string | null | undefined {
  if (typeof text !== 'string' || !MARKUP.test(text)) return text;
  const html = withStrayBracketsEscaped(text);
  return html === null ? escapedPlainText(text) : sanitizeHtml(html, OPTIONS);
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/**
 * Plain text (a mail's body) as rich text that shows exactly that text: stored as it is when
 * nothing in it reads as markup; otherwise (`Contact John <john@example.com>`, `if a<b`, a pasted
 * config) escaped into paragraphs and line breaks, as storedHtml would otherwise take the `<…` for
 * tags and drop it with all that follows.
 */
export function plainTextAsRichText(text: string): string {
  return isMarkup(text) ? escapedPlainText(text) : text;
}

function escapedPlainText(text: string): string {
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
