/**
 * The ticket search language (the list's and the tickets export's `search`), parsed to terms:
 *
 *   printer jammed                  plain words: every one, in the subject or a message (FULLTEXT)
 *   "paper tray"                    an exact phrase
 *   status:open priority:3          a field term: the field, `:`, a value (a name, or an id)
 *   tag:"next day"                  a value in quotes may hold spaces
 *   created>2024-01-31 created<=1706700000   dates (UTC days) or UNIX seconds, with > >= < <= or :
 *   -tag:spam -refund               an exclusion: the term must not hold
 *   status:open OR status:pending   either side (OR binds looser than the spaces between terms)
 *
 * A word with a colon whose name is not a field (`Re:`, `http://x`) is plain text, as before the
 * language existed. Anything else that does not parse is a SearchSyntaxError naming the position
 * (1-based) and the problem. Pure: no database here (./compile.ts turns terms into SQL).
 */

export const SEARCH_FIELDS = ['status', 'priority', 'department', 'tag', 'user', 'assigned', 'created', 'number'] as const;
export type SearchField = (typeof SEARCH_FIELDS)[number];
export type Comparison = ':' | '>' | '>=' | '<' | '<=';

export type Term =
  | { kind: 'text'; text: string; phrase: boolean; negated: boolean; position: number }
  | { kind: 'field'; field: SearchField; op: Comparison; value: string; negated: boolean; position: number };

/** Terms that must all hold, in groups of which one must hold (`a b OR c` is `[[a, b], [c]]`). */
export type SearchQuery = Term[][];

export class SearchSyntaxError extends Error {
  constructor(readonly position: number, readonly problem: string) {
    super(`The search is invalid at position ${position}: ${problem}.`);
  }
}

const FIELDS = new Set<string>(SEARCH_FIELDS);
const MAX_TERMS = 32;
const isSpace = (c: string | undefined) => c !== undefined && /\s/.test(c);

export function parseSearch(input: string): SearchQuery {
  const groups: Term[][] = [[]];
  let i = 0;
  let terms = 0;
  /** Index of an OR waiting for its right-hand side. */
  let pendingOr: number | null = null;
  /** The 1-based position of an index in characters, as a person counts them (an emoji is one). */
  const position = (index: number) => Array.from(input.slice(0, index)).length + 1;
  const fail = (at: number, problem: string): never => {
    throw new SearchSyntaxError(position(at), problem);
  };

  /** A quoted string starting at `at` (the quote): its content and the index after the closing quote. */
  const quoted = (at: number): [string, number] => {
    const end = input.indexOf('"', at + 1);
    if (end < 0) fail(at, 'the quote is not closed');
    const text = input.slice(at + 1, end).trim();
    if (!text) fail(at, 'the quotes hold nothing');
    return [text, end + 1];
  };
  const bareEnd = (from: number) => {
    let j = from;
    while (j < input.length && !isSpace(input[j])) j++;
    return j;
  };

  while (i < input.length) {
    if (isSpace(input[i])) {
      i++;
      continue;
    }
    const start = i;
    if (input.startsWith('OR', i) && (i + 2 === input.length || isSpace(input[i + 2]))) {
      if (!groups[groups.length - 1].length || pendingOr !== null) fail(start, 'OR needs a term before it');
      pendingOr = start;
      groups.push([]);
      i += 2;
      continue;
    }
    let negated = false;
    if (input[i] === '-') {
      if (i + 1 === input.length || isSpace(input[i + 1])) fail(start, "a '-' must be followed by the term to exclude");
      negated = true;
      i++;
    }
    let term: Term;
    if (input[i] === '"') {
      const [text, next] = quoted(i);
      term = { kind: 'text', text, phrase: true, negated, position: position(start) };
      i = next;
    } else {
      const name = /^[A-Za-z]+/.exec(input.slice(i))?.[0] ?? '';
      const op = /^(>=|<=|:|>|<)/.exec(input.slice(i + name.length))?.[0] as Comparison | undefined;
      if (name && op && FIELDS.has(name.toLowerCase())) {
        const field = name.toLowerCase() as SearchField;
        if (field !== 'created' && op !== ':') fail(start, `${field} is compared with ':' only`);
        const at = i + name.length + op.length;
        let value: string;
        if (input[at] === '"') [value, i] = quoted(at);
        else {
          i = bareEnd(at);
          value = input.slice(at, i);
        }
        if (!value) fail(at, `${field}${op} needs a value`);
        if (value.includes('"')) fail(at + value.indexOf('"'), 'a quote must start the value');
        term = { kind: 'field', field, op, value, negated, position: position(start) };
      } else {
        const end = bareEnd(i);
        const text = input.slice(i, end);
        if (text.includes('"')) fail(i + text.indexOf('"'), 'a quote must start a term');
        term = { kind: 'text', text, phrase: false, negated, position: position(start) };
        i = end;
      }
    }
    if (++terms > MAX_TERMS) fail(start, `a search holds at most ${MAX_TERMS} terms`);
    groups[groups.length - 1].push(term);
    pendingOr = null;
  }
  if (pendingOr !== null) fail(pendingOr, 'OR needs a term after it');
  return groups.filter((g) => g.length);
}

/** Whether a query is plain words only (searched exactly as before the language: one FULLTEXT condition). */
export const isPlainWords = (q: SearchQuery): boolean =>
  q.length <= 1 && (q[0] ?? []).every((t) => t.kind === 'text' && !t.phrase && !t.negated);
