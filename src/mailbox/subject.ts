/**
 * Reply and forward prefixes of subjects as mail clients write them in many languages: `Re:`,
 * `AW:` (German), `SV:` (Nordic), `Antw:`/`Antwort:`, `RES:`/`RE :`, `Fwd:`/`FWD:`/`Fw:`, `WG:`
 * (German "Weitergeleitet"), `TR:` (French "Transféré"), `RV:` (Spanish), `ENC:` (Portuguese),
 * `VS:`/`VB:` (Finnish, Dutch), `PD:`/`PR:`, `Doorst:`, `回复:`/`转发:`, and a counter (`Re[2]:`).
 * Outlook stacks them (`WG: AW: RE: …`).
 */

const REPLY = ['re', 'aw', 'sv', 'antw', 'antwort', 'res', 'odp', 'ynt', 'atb', 'vs', 'ref', 'rif', 'r', '回复', '回覆', '答复'];
const FORWARD = ['fwd', 'fw', 'wg', 'tr', 'rv', 'enc', 'vb', 'doorst', 'pd', 'pr', 'i', 'fs', 'vl', 'továbbítás', '转发', '轉寄', 'weitergeleitet'];

// One prefix: a word of the lists, an optional `[2]`/`(2)` counter, optional blanks, then a colon (ASCII or full-width).
const PREFIX = new RegExp(`^\\s*(${[...REPLY, ...FORWARD].sort((a, b) => b.length - a.length).join('|')})\\s*(?:[[(]\\d{1,3}[\\])])?\\s*[:：]\\s*`, 'iu');
const FORWARDS = new Set(FORWARD);

/** The subject without its reply/forward prefixes, and whether any of them was a forward's. */
export function stripSubjectPrefixes(subject: string): { subject: string; forwarded: boolean; replied: boolean } {
  let rest = subject;
  let forwarded = false;
  let replied = false;
  for (let i = 0; i < 20; i++) {
    const m = PREFIX.exec(rest);
    if (!m) break;
    if (FORWARDS.has(m[1].toLowerCase())) forwarded = true;
    else replied = true;
    rest = rest.slice(m[0].length);
  }
  return { subject: rest.trim(), forwarded, replied };
}

/** Whether the subject says the mail is a forward (`Fwd:`, `WG:`, `TR:`, `Fw:` … anywhere in its prefixes). */
export const isForwardSubject = (subject: string) => stripSubjectPrefixes(subject).forwarded;

/**
 * Whether the mail is itself a forward: its outermost prefix is a forward's (`FW: RE: x`). `RE: FW: x`
 * answers a forward: a reply, whose quoted history goes as any reply's (./quote.ts).
 */
export function isForwardedMail(subject: string): boolean {
  const outermost = PREFIX.exec(subject);
  return !!outermost && FORWARDS.has(outermost[1].toLowerCase());
}

/** The one definition of a ticket's tag in a subject: `[#number]` (as our mails write it) or `(#number)`. */
const TICKET_TAG = /[[(]#([A-Za-z0-9-]{1,64})[\])]/;
const TICKET_TAGS = new RegExp(`\\s*${TICKET_TAG.source}:?\\s*`, 'g');

/** The ticket number a subject names in its tag, once its prefixes are stripped. */
export function ticketNumberInSubject(subject: string): string | null {
  return TICKET_TAG.exec(stripSubjectPrefixes(subject).subject)?.[1] ?? null;
}

/** The subject without its ticket tags (nor the colon after one). */
export const withoutTicketTags = (subject: string): string => subject.replace(TICKET_TAGS, ' ').trim();
