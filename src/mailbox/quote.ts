import { REPLY_ABOVE_MARKER } from '../mail/compose';

/**
 * The new part of a reply: what the sender wrote above the quoted history their mail client
 * added. Only history that can be told apart is cut, from the first line that starts it:
 *
 * - our own "reply above this line" marker;
 * - an attribution line (`On Tue, 3 Mar 2026, Ada <ada@x> wrote:`, also wrapped over two lines,
 *   and its common translations) followed by quoted (`>`) lines or nothing;
 * - Outlook's `-----Original Message-----` and its header block (after a blank line or a rule: its
 *   HTML `<hr>`, which goes with the history), in the shape Outlook writes it: `From:`, then
 *   `Sent:` (or `Date:`), then a run of header lines with `To:` or `Subject:`. Headers a person
 *   pasted into their mail (`From: MAILER-DAEMON` / `To: …` / `Subject: …`, or raw ones with
 *   `Received:`, `Message-ID:` or an RFC 5322 date) are what they wrote, not history;
 * - a trailing block of `>` lines.
 *
 * A forward (`forward`: its subject's outermost prefix is `FW:`, `Fwd:`, `WG:` …) is not cut
 * (but at our marker): what follows its header block is the mail forwarded, the reason it was sent.
 *
 * When cutting would leave nothing (a mail that is all quote), the text is kept whole: losing what
 * a customer sent is worse than showing a quote twice. Lines are examined one by one with simple
 * patterns (a header block: at most HEADER_RUN lines), so the work is linear in the length of the text.
 */


// `On <date>, <name> wrote:`, and the forms where the verb comes before the name (`Am <date> schrieb <name>:`).
// Scandinavian Gmail: `Den sön 29 nov. 2026 kl 21:48 skrev <name>:`.
const ATTRIBUTION = /^(on|am|le|el|il|op|em|den)\s.{1,200}\s(wrote|schrieb|a écrit|escribió|ha scritto|schreef|escreveu|skrev)(\s.{0,200})?\s?:$/i;
const ORIGINAL = /^-{2,}\s*(original message|ursprüngliche nachricht|message d'origine|mensaje original|messaggio originale|oorspronkelijk bericht|mensagem original|originalmeddelande|oprindelig meddelelse|opprinnelig melding)\s*-{2,}$/i;
// Outlook's labels in its common languages; French writes a space before the colon (`De :`).
const label = (names: string) => new RegExp(`^(${names})[ \u00a0]?:\\s`, 'iu');
const OUTLOOK_FROM = label('from|von|de|van|da|från|fra');
/** The line Outlook writes after From: when it was sent (Outlook for Mac and the web: `Date:`). */
const OUTLOOK_SENT = label('sent|gesendet|envoyé|enviado|enviada em|verzonden|inviato|skickat|sendt|date|datum|data|fecha');
/** The lines Outlook writes after it, one of which its block always has. */
const OUTLOOK_TO_OR_SUBJECT = label('to|an|à|para|aan|a|till|til|subject|betreff|objet|asunto|assunto|onderwerp|oggetto|ämne|emne');
/** What only a raw header block has (pasted by a person), never Outlook's: transport headers, an RFC 5322 date with its zone. */
const RAW_HEADER = /^(received|return-path|message-id|mime-version|content-type|delivered-to|dkim-signature|x-[\w-]+):|^date:\s.*\d:\d\d(:\d\d)?\s+[+-]\d{4}\b/i;
const HEADER_LINE = /^[\p{L}\w-]{1,40}( [\p{L}\w-]{1,20})?[ \u00a0]?:\s/u;
/** How many lines an Outlook header block may have (From, Sent, To, Cc, Subject, and a few more). */
const HEADER_RUN = 8;

const isQuote = (line: string) => line.trimStart().startsWith('>');
/** A rule between the reply and the history: Outlook's HTML `<hr>` read as text, or a typed `-----`. */
const SEPARATOR = /^\s*[-_=]{3,}\s*$/;

export function stripQuoted(text: string, { forward = false }: { forward?: boolean } = {}): string {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const cut = forward ? lines.findIndex((l) => l.includes(REPLY_ABOVE_MARKER)) : cutIndex(lines);
  if (cut === -1) return text.trim();
  // The rule above the history goes with it.
  let end = cut;
  while (end > 0 && (!lines[end - 1].trim() || SEPARATOR.test(lines[end - 1]))) end--;
  return lines.slice(0, end).join('\n').trim() || text.trim();
}

/** Whether lines[i] starts a header block as Outlook writes it: From, Sent (or Date), then To or Subject within the run; nothing only raw headers have. */
function isOutlookHeaderBlock(lines: string[], i: number): boolean {
  if (!OUTLOOK_FROM.test(lines[i].trim()) || i + 1 >= lines.length || !OUTLOOK_SENT.test(lines[i + 1].trim())) return false;
  let toOrSubject = false;
  for (let j = i; j < Math.min(lines.length, i + HEADER_RUN); j++) {
    const line = lines[j].trim();
    if (!HEADER_LINE.test(line)) break;
    if (RAW_HEADER.test(line)) return false;
    toOrSubject ||= OUTLOOK_TO_OR_SUBJECT.test(line);
  }
  return toOrSubject;
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
    if ((i === 0 || !lines[i - 1].trim() || SEPARATOR.test(lines[i - 1])) && isOutlookHeaderBlock(lines, i)) return i;
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
