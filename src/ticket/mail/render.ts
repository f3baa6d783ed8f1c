import { htmlToText, isMarkup, storedHtml } from '../../content/html';

/**
 * The merge fields of email templates (`{{ ticket.number }}`, `{{ user.formatted_name }}`), filled
 * from a plain context object. Deliberately small and safe:
 *
 * - a field is a dotted path of names (`a.b.c`); it is looked up in the context's own properties,
 *   through plain objects only, and renders only a string, a number or a RichText: no method call,
 *   no prototype (`{{ ticket.constructor }}` and `{{ __proto__ }}` render nothing), no code run;
 * - a name the context does not hold, or anything that is not a path, renders empty;
 * - a filter (`{{ user.firstname|upper }}`, even `|raw`) is ignored: a template cannot choose to
 *   insert a value as markup;
 * - a string or a number (names, subjects, addresses: never markup) is escaped in HTML, its line
 *   breaks becoming `<br>`, and is as it is in text;
 * - a RichText (stored rich text: a message's text) is the one value that may carry markup: its
 *   HTML, sanitised again, is inserted as HTML and read as text in the text part; plain rich text
 *   is treated as a string (src/content/html.ts decides which is which).
 *
 * Templates are HTML (the stored `contents`); their text part is the template read as text
 * (`htmlToText`) and then filled, so the values of the text part are never touched by tag
 * stripping or entity decoding (but for a RichText's HTML, read as text on its own).
 */

const BREAKS = /\r\n|\r|\n/g;

/**
 * Stored rich text (src/content/html.ts): HTML when it reads as markup, else plain text. The only
 * way a value reaches a mail as markup; the context wraps a field in it only when the field is
 * stored through the allow-list (a message's text).
 */
export class RichText {
  constructor(readonly stored: string) {}

  /** For an HTML part: the HTML sanitised again (rows written before the allow-list existed); plain text escaped, line breaks as `<br>`. */
  html(): string {
    return isMarkup(this.stored) ? storedHtml(this.stored) : escapeHtml(this.stored).replace(BREAKS, '<br>\n');
  }

  /** For a text part: the HTML read as text; plain text as it is. */
  text(): string {
    return isMarkup(this.stored) ? htmlToText(storedHtml(this.stored)) : this.stored;
  }
}

export const richText = (stored: string) => new RichText(stored);

export type TemplateValue = string | number | null | undefined | RichText | TemplateContext;

export interface TemplateContext {
  readonly [name: string]: TemplateValue;
}

export type RenderMode = 'html' | 'text';

const FIELD = /\{\{-?([\s\S]*?)-?\}\}/g;
const PATH = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*){0,7}$/;

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);

const isPlainObject = (v: unknown): v is Record<string, unknown> => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

/** The value at a dotted path: a string, a number or a RichText held by the context's own properties, else null. */
export function lookup(context: TemplateContext, path: string): string | RichText | null {
  if (!PATH.test(path)) return null;
  let current: unknown = context;
  for (const name of path.split('.')) {
    if (!isPlainObject(current) || !Object.prototype.hasOwnProperty.call(current, name)) return null;
    current = current[name];
  }
  if (typeof current === 'string' || current instanceof RichText) return current;
  if (typeof current === 'number' && Number.isFinite(current)) return String(current);
  return null;
}

/** The path of a field's expression: `ticket.number` of ` ticket.number|upper `. */
const pathOf = (expression: string) => expression.split('|')[0].trim();

/**
 * What in a template this renderer would not fill but send as written (a template is refused with
 * it on save: src/core/emailTemplate.ts), as the 422 message for `label` (`contents`,
 * `subject:fr`); null when every `{{` is a merge field. Twig's tags (`{% if %}`, `{% for %}`) and
 * comments (`{# #}`) are not rendered, so a template copied from SupportPal would mail them to
 * customers; a `{{` without its `}}` is sent as written, or swallows the text up to the next
 * field's `}}` (FIELD takes the first `}}`). What is inside a field is not checked: an expression
 * that is no path renders empty, and a filter is ignored.
 */
export function templateProblem(source: string, label: string): string | null {
  const tag = /\{%-?\s*([A-Za-z_][A-Za-z0-9_]*)?/.exec(source);
  if (tag) return `The ${label} field uses a template tag ({% ${tag[1] ? `${tag[1]} ` : ''}%}) that is not supported: only {{ variables }} are.`;
  if (/\{#[\s\S]*?#\}/.test(source)) return `The ${label} field uses a template comment ({# #}) that is not supported: only {{ variables }} are.`;
  let unclosed = false;
  const rest = source.replace(FIELD, (_whole, expression: string) => {
    if (expression.includes('{{')) unclosed = true;
    return '';
  });
  if (unclosed || rest.includes('{{')) return `The ${label} field has a '{{' without its closing '}}'.`;
  return null;
}

/** Fills the merge fields of `source`. */
export function renderTemplate(source: string, context: TemplateContext, mode: RenderMode): string {
  return source.replace(FIELD, (_whole, expression: string) => {
    const value = lookup(context, pathOf(expression)) ?? '';
    if (value instanceof RichText) return mode === 'text' ? value.text() : value.html();
    if (mode === 'text') return value;
    return escapeHtml(value).replace(BREAKS, '<br>\n');
  });
}

/** A one-line header value (a subject): line breaks and other control characters become spaces. */
export function oneLine(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u001f\u007f]+/g, ' ').replace(/ {2,}/g, ' ').trim();
}
