import { randomInt } from 'node:crypto';
import { wallClock } from './timezone';

/**
 * Ticket number formats, SupportPal's tokens (research: supportpal-semantics.md §1):
 *   %S        the sequential number (the ticket's sequence value, no padding)
 *   %N, %L    one random digit, one random upper-case letter; `{n}` repeats it (`%N{7}`, `%L{3}`)
 *   %Y %y     year, 4 and 2 digits           %m %d   month and day, 2 digits
 *   %j        day without leading zero        %H %G   hour 00-23, 0-23
 *   %h %g     hour 01-12, 1-12                %i %s   minutes and seconds, 2 digits
 * Anything else is literal and may be a letter, a digit or one of `-_.+!*,`.
 *
 * A format must be able to give every ticket its own number: it contains %S, or its random part
 * has at least MIN_RANDOM_COMBINATIONS values (`%N{5}`; date tokens do not count, they repeat).
 * Pure: the caller gives the sequence value, the random source and the date.
 */

export const DEFAULT_TICKET_NUMBER_FORMAT = '%N{7}';
export const MIN_RANDOM_COMBINATIONS = 100_000;
/** Longest number a format may produce (the ticket's `number` column). */
export const MAX_NUMBER_LENGTH = 64;
const MAX_REPEAT = 20;
/** %S is at most a 32-bit unsigned id. */
const SEQUENCE_DIGITS = 10;

const DATE_TOKENS = {
  Y: 4, y: 2, m: 2, d: 2, j: 2, g: 2, G: 2, h: 2, H: 2, i: 2, s: 2,
} as const;
type DateChar = keyof typeof DATE_TOKENS;

export type FormatToken =
  | { kind: 'literal'; text: string }
  | { kind: 'sequence' }
  | { kind: 'digits'; count: number }
  | { kind: 'letters'; count: number }
  | { kind: 'date'; char: DateChar };

/** A format that cannot be used; the message is the 422's. */
export class NumberFormatError extends Error {}

const LITERAL = /^[A-Za-z0-9\-_.+!*,]$/;

/** The tokens of a format, or a NumberFormatError naming the first problem. */
export function parseNumberFormat(format: string): FormatToken[] {
  const tokens: FormatToken[] = [];
  for (let i = 0; i < format.length;) {
    const c = format[i];
    if (c !== '%') {
      if (!LITERAL.test(c)) {
        throw new NumberFormatError(`The ticket number format may not contain "${c}": use letters, digits, the characters -_.+!*, and the tokens %S, %N, %L, %Y, %y, %m, %d, %j, %g, %G, %h, %H, %i, %s.`);
      }
      const last = tokens[tokens.length - 1];
      if (last?.kind === 'literal') last.text += c;
      else tokens.push({ kind: 'literal', text: c });
      i++;
      continue;
    }
    const t = format[i + 1];
    i += 2;
    if (t === 'S') tokens.push({ kind: 'sequence' });
    else if (t === 'N' || t === 'L') {
      let count = 1;
      const m = /^\{(\d{1,3})\}/.exec(format.slice(i));
      if (format[i] === '{') {
        if (!m || Number(m[1]) < 1 || Number(m[1]) > MAX_REPEAT) {
          throw new NumberFormatError(`The ticket number format may repeat %${t} 1 to ${MAX_REPEAT} times, written %${t}{n}.`);
        }
        count = Number(m[1]);
        i += m[0].length;
      }
      tokens.push({ kind: t === 'N' ? 'digits' : 'letters', count });
    } else if (t !== undefined && t in DATE_TOKENS) tokens.push({ kind: 'date', char: t as DateChar });
    else if (t === undefined) throw new NumberFormatError('The ticket number format ends with a % that starts no token.');
    else throw new NumberFormatError(`The ticket number format has an unknown token %${t}.`);
  }
  return tokens;
}

/** How many different numbers the random part of a format gives (Infinity with %S). */
export function combinations(tokens: FormatToken[]): number {
  if (tokens.some((t) => t.kind === 'sequence')) return Infinity;
  return tokens.reduce((n, t) => n * (t.kind === 'digits' ? 10 ** t.count : t.kind === 'letters' ? 26 ** t.count : 1), 1);
}

/** The longest number a format renders. */
export function maxLength(tokens: FormatToken[]): number {
  return tokens.reduce((n, t) => n + (t.kind === 'literal' ? t.text.length : t.kind === 'sequence' ? SEQUENCE_DIGITS
    : t.kind === 'date' ? DATE_TOKENS[t.char] : t.count), 0);
}

/** Checks a format for use by a department (or the global setting); throws NumberFormatError. */
export function assertNumberFormat(format: string): FormatToken[] {
  const tokens = parseNumberFormat(format);
  if (combinations(tokens) < MIN_RANDOM_COMBINATIONS) {
    throw new NumberFormatError('The ticket number format cannot give every ticket its own number: it must contain %S (the sequential number) or at least 5 random digits or letters (%N{5}).');
  }
  if (maxLength(tokens) > MAX_NUMBER_LENGTH) throw new NumberFormatError(`The ticket number format gives numbers longer than ${MAX_NUMBER_LENGTH} characters.`);
  return tokens;
}

/** An integer in [0, max): crypto's randomInt by default, a fixed sequence in tests. */
export type RandomSource = (max: number) => number;

export interface RenderInput {
  /** The value of %S (the ticket's sequence number). */
  sequence: number;
  /** The moment the number is made (date tokens). */
  date: Date;
  /** IANA zone of the date tokens; UTC when omitted. */
  timezone?: string;
  random?: RandomSource;
}

const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const two = (n: number) => String(n).padStart(2, '0');

/** Renders a format (text or parsed tokens) to a ticket number. */
export function renderTicketNumber(format: string | FormatToken[], input: RenderInput): string {
  const tokens = typeof format === 'string' ? parseNumberFormat(format) : format;
  const random = input.random ?? randomInt;
  const clock = tokens.some((t) => t.kind === 'date') ? wallClock(input.date.getTime(), input.timezone ?? 'UTC') : null;
  let out = '';
  for (const t of tokens) {
    switch (t.kind) {
      case 'literal': out += t.text; break;
      case 'sequence': out += String(input.sequence); break;
      case 'digits': for (let k = 0; k < t.count; k++) out += String(random(10)); break;
      case 'letters': for (let k = 0; k < t.count; k++) out += LETTERS[random(26)]; break;
      case 'date': {
        const c = clock!;
        const h12 = c.hour % 12 === 0 ? 12 : c.hour % 12;
        out += {
          Y: String(c.year).padStart(4, '0'), y: two(c.year % 100), m: two(c.month), d: two(c.day), j: String(c.day),
          g: String(h12), G: String(c.hour), h: two(h12), H: two(c.hour), i: two(c.minute), s: two(c.second),
        }[t.char];
        break;
      }
    }
  }
  return out;
}
