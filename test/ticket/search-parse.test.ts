/** The ticket search language's parser (src/ticket/tickets/search/parse.ts): no database. */
import { SearchSyntaxError, isPlainWords, parseSearch } from '../../src/ticket/tickets/search/parse';

const text = (t: string, position: number, extra: Record<string, unknown> = {}) => ({ kind: 'text', text: t, phrase: false, negated: false, position, ...extra });
const fieldTerm = (field: string, op: string, value: string, position: number, negated = false) => ({ kind: 'field', field, op, value, negated, position });

describe('parseSearch', () => {
  it('plain words are one group of text terms', () => {
    const q = parseSearch('printer  jammed');
    expect(q).toEqual([[text('printer', 1), text('jammed', 10)]]);
    expect(isPlainWords(q)).toBe(true);
  });

  it('field terms, phrases, exclusions and OR', () => {
    const q = parseSearch('status:open "paper tray" -tag:spam OR priority:3 -refund created>=2024-01-31');
    expect(q).toEqual([
      [fieldTerm('status', ':', 'open', 1), text('paper tray', 13, { phrase: true }), fieldTerm('tag', ':', 'spam', 26, true)],
      [fieldTerm('priority', ':', '3', 39), text('refund', 50, { negated: true }), fieldTerm('created', '>=', '2024-01-31', 58)],
    ]);
    expect(isPlainWords(q)).toBe(false);
  });

  it('a quoted value may hold spaces; field names are case-insensitive', () => {
    expect(parseSearch('Tag:"next day" USER:a@example.com')).toEqual([[fieldTerm('tag', ':', 'next day', 1), fieldTerm('user', ':', 'a@example.com', 16)]]);
  });

  it('every comparison of created', () => {
    for (const op of [':', '>', '>=', '<', '<=']) expect(parseSearch(`created${op}1700000000`)).toEqual([[fieldTerm('created', op, '1700000000', 1)]]);
  });

  it('a colon after a word that is no field is plain text (as before the language), and so is a lone minus inside a word', () => {
    expect(parseSearch('Re: http://example.com/a-b')).toEqual([[text('Re:', 1), text('http://example.com/a-b', 5)]]);
    expect(isPlainWords(parseSearch('Re: help'))).toBe(true);
  });

  it('"or" in lower case is a word; OR in upper case joins', () => {
    expect(parseSearch('this or that')).toHaveLength(1);
    expect(parseSearch('this OR that')).toHaveLength(2);
    expect(parseSearch('ORDER')).toEqual([[text('ORDER', 1)]]);
  });

  it.each([
    ['"paper tray', 1, 'the quote is not closed'],
    ['status:open "', 13, 'the quote is not closed'],
    ['""', 1, 'the quotes hold nothing'],
    ['status:', 8, 'status: needs a value'],
    ['printer status: open', 16, 'status: needs a value'],
    ['priority>2', 1, "priority is compared with ':' only"],
    ['- printer', 1, "a '-' must be followed by the term to exclude"],
    ['printer -', 9, "a '-' must be followed by the term to exclude"],
    ['OR printer', 1, 'OR needs a term before it'],
    ['printer OR OR toner', 12, 'OR needs a term before it'],
    ['printer OR', 9, 'OR needs a term after it'],
    ['pri"nter', 4, 'a quote must start a term'],
    ['tag:a"b', 6, 'a quote must start the value'],
  ])('%j: position %i, %s', (input, position, problem) => {
    let error: unknown;
    try {
      parseSearch(input);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SearchSyntaxError);
    expect(error).toMatchObject({ position, problem, message: `The search is invalid at position ${position}: ${problem}.` });
  });

  it('refuses more than 32 terms', () => {
    expect(() => parseSearch(Array.from({ length: 33 }, (_, i) => `w${i}`).join(' '))).toThrow('a search holds at most 32 terms');
    expect(parseSearch(Array.from({ length: 32 }, (_, i) => `w${i}`).join(' '))[0]).toHaveLength(32);
  });

  it('an empty search is no terms', () => {
    expect(parseSearch('   ')).toEqual([]);
  });
});
