/**
 * The new part of a reply: what the sender wrote above the quoted history their mail client
 * added. Only history that can be told apart is cut, from the first line that starts it:
 *
 * - our own "reply above this line" marker;
 * - an attribution line (`On Tue, 3 Mar 2026, Ada <ada@x> wrote:`, also wrapped over two lines,
 *   and its common translations) followed by quoted (`>`) lines or nothing;
 * - Outlook's `-----Original Message-----` and its `From: ... Sent: ...` header block (after a
 *   blank line or a rule: its HTML `<hr>`, which goes with the history);
 * - a trailing block of `>` lines.
 *
 * When cutting would leave nothing (a mail that is all quote), the text is kept whole: losing what
 * a customer sent is worse than showing a quote twice. Lines are examined one by one with simple
 * patterns, so the work is linear in the length of the text.
 */

export const REPLY_ABOVE_MARKER = '##- Please type your reply above this line -##';

// `On <date>, <name> wrote:`, and the forms where the verb comes before the name (`Am <date> schrieb <name>:`).
const ATTRIBUTION = /^(on|am|le|el|il|op|em)\s.{1,200}\s(wrote|schrieb|a écrit|escribió|ha scritto|schreef|escreveu)(\s.{0,200})?:$/i;
const ORIGINAL = /^-{2,}\s*(original message|ursprüngliche nachricht|message d'origine|mensaje original)\s*-{2,}$/i;
const OUTLOOK_FROM = /^(from|von|de):\s.+$/i;
const OUTLOOK_NEXT = /^(sent|gesendet|envoyé|enviado|date|to|an|à|para):\s/i;

const isQuote = (line: string) => line.trimStart().startsWith('>');
/** A rule between the reply and the history: Outlook's HTML `<hr>` read as text, or a typed `-----`. */
const SEPARATOR = /^\s*[-_=]{3,}\s*$/;

export function stripQuoted(text: string): string {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const cut = cutIndex(lines);
  if (cut === -1) return text.trim();
  // The rule above the history goes with it.
  let end = cut;
  while (end > 0 && (!lines[end - 1].trim() || SEPARATOR.test(lines[end - 1]))) end--;
  return lines.slice(0, end).join('\n').trim() || text.trim();
}

function cutIndex(lines: string[]): number {
  // quotedFrom[i]: every non-blank line from i on is quoted (computed once, backwards).
  const quotedFrom: boolean[] = new Array(lines.length + 1);
  quotedFrom[lines.length] = true;
  for (let j = lines.length - 1; j >= 0; j--) quotedFrom[j] = quotedFrom[j + 1] && (!lines[j].trim() || isQuote(lines[j]));
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line.includes(REPLY_ABOVE_MARKER)) return i;
    if (ORIGINAL.test(line)) return i;
    if (OUTLOOK_FROM.test(line) && i + 1 < lines.length && OUTLOOK_NEXT.test(lines[i + 1].trim())
      && (i === 0 || !lines[i - 1].trim() || SEPARATOR.test(lines[i - 1]))) return i;
    // An attribution, possibly wrapped: this line, or this line and the next joined.
    const joined = i + 1 < lines.length ? `${line} ${lines[i + 1].trim()}` : line;
    const attributionLines = ATTRIBUTION.test(line) ? 1 : ATTRIBUTION.test(joined) ? 2 : 0;
    // An attribution must introduce a quote, or end the mail.
    if (attributionLines && quotedFrom[i + attributionLines]) return i;
  }
  // A trailing block of quoted lines (blank lines inside it included).
  let start = lines.length;
  while (start > 0 && (isQuote(lines[start - 1]) || !lines[start - 1].trim())) start--;
  return lines.slice(start).some(isQuote) ? start : -1;
}
