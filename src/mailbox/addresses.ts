import libmime from 'libmime';
import addressparser from 'nodemailer/lib/addressparser';
import { canonicalEmail, isEmailAddress } from '../lib/validation';

export interface Mailbox {
  address: string;
  name: string;
}

/** A run of RFC 2047 encoded-words: adjacent ones are separated by white space only, which decoding drops (RFC 2047 6.2). */
const ENCODED_RUN = /=\?[^?\s]+\?[BbQq]\?[^?\s]*\?=(?:\s+=\?[^?\s]+\?[BbQq]\?[^?\s]*\?=)*/g;

/** Text as a quoted string of a header: line breaks and tabs as spaces, quotes and backslashes escaped. */
const quoted = (text: string) => `"${text.replace(/[\r\n\t]+/g, ' ').replace(/[\\"]/g, '\\$&')}"`;

function decoded(run: string): string {
  try {
    return libmime.decodeWords(run);
  } catch {
    return run;
  }
}

type Parsed = ReturnType<typeof addressparser>;
const flatten = (list: Parsed): Array<{ name: string; address: string }> =>
  list.flatMap((a) => ('group' in a && a.group ? flatten(a.group) : [{ name: a.name, address: (a as { address?: string }).address ?? '' }]));

/**
 * The mailboxes of address headers (the raw values of From, Reply-To, To or Cc), where only the
 * header's own syntax names an address: each run of encoded-words becomes a quoted display name
 * before the addresses are parsed, so nothing encoded can name one. mailparser parses first and
 * decodes after: `From: =?UTF-8?Q?Olga_<olga@corp.test>?= <mallory@evil.test>` was a mail from
 * olga@ (an encoded-word that breaks RFC 2047's rules for a phrase, which addressparser split at
 * its `<`), and an encoded line break and colon made the sender a group with no address. Only
 * addresses the API would take as emails are kept (canonical: lower case, NFC, punycode).
 */
export function mailboxesOf(values: string[]): Mailbox[] {
  // Header lines come as bytes (one character each); raw 8-bit text in them is UTF-8 (RFC 6532), as mailparser reads it.
  const text = values.map((v) => Buffer.from(v, 'latin1').toString('utf8').replace(ENCODED_RUN, (run) => quoted(decoded(run)))).join(', ');
  return flatten(addressparser(text))
    .map((a) => ({ address: canonicalEmail(a.address), name: a.name.replace(/\s+/g, ' ').trim() }))
    .filter((a) => isEmailAddress(a.address));
}
