import {
  SPAM_CHECK_BUDGET, SPAM_RULE_MAX_LENGTH, SPAM_RULE_MAX_PROGRAM, SPAM_TEXT_LIMIT, compileRule, ruleRefusal, spamCheckWork, spamMatch,
  spamReadLimit, spamRuleCompilations, spamText, type SpamCandidate,
} from '../../src/core/spam';

/** A check of one rule on one candidate. */
const matchesRule = (rule: { text: string; type: number }, candidate: SpamCandidate) => spamMatch([rule], [candidate]) !== undefined;

/**
 * A rule of the audit's kind: 242 characters, counted repetitions of alternations. On the old code
 * (every check compiled the rule and searched with captures) it ran one 60 KB comment for 10-20 s
 * of CPU, blocking the event loop: its ~12,000 instructions were all alive on every character.
 */
const ALTERNATIVES = `(${'abcdefghijklmnopqrstuvwxyz'.split('').join('|')}| |,|\\.){1,999}`;
const AUDIT_PATTERN = `${ALTERNATIVES.repeat(3)}(?:casino|viagra|lottery|jackpot|bitcoin)`;

/** A 60 KB self-service comment of words, spaces, commas and full stops, and no spam word. */
const COMMENT = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore. '
  .repeat(700).slice(0, 60 * 1024);

/** CPU milliseconds `fn` takes (busy neighbours on the machine do not count, unlike wall-clock time). */
function cpuMs(fn: () => void): number {
  const before = process.cpuUsage();
  fn();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

let seq = 0;
const uniqueWord = () => `zq${process.pid}x${(seq++).toString(36)}`;

describe('matchesRule', () => {
  it('type 0 (content) checks the content only', () => {
    const rule = { text: 'casino', type: 0 };
    expect(matchesRule(rule, { content: 'Visit our online casino today', sender: 'a@example.com' })).toBe(true);
    expect(matchesRule(rule, { content: 'Hello', sender: 'casino@example.com' })).toBe(false);
    expect(matchesRule(rule, { content: null, sender: 'casino@example.com' })).toBe(false);
  });

  it('type 1 (sender) checks the sender only', () => {
    const rule = { text: '@spam\\.example$', type: 1 };
    expect(matchesRule(rule, { content: 'Hello', sender: 'bob@spam.example' })).toBe(true);
    expect(matchesRule(rule, { content: 'mail me at bob@spam.example', sender: 'bob@good.example' })).toBe(false);
    expect(matchesRule(rule, { content: 'bob@spam.example' })).toBe(false);
  });

  it('type 2 (content and sender) matches either', () => {
    const rule = { text: 'lottery', type: 2 };
    expect(matchesRule(rule, { content: 'You won the lottery', sender: 'a@example.com' })).toBe(true);
    expect(matchesRule(rule, { content: 'Hello', sender: 'lottery@example.com' })).toBe(true);
    expect(matchesRule(rule, { content: 'Hello', sender: 'a@example.com' })).toBe(false);
    expect(matchesRule(rule, {})).toBe(false);
  });

  it('is case-insensitive', () => {
    expect(matchesRule({ text: 'CaSiNo', type: 0 }, { content: 'CASINO bonus' })).toBe(true);
    expect(matchesRule({ text: 'casino', type: 0 }, { content: 'Casino' })).toBe(true);
    expect(matchesRule({ text: 'FREE MONEY', type: 1 }, { sender: 'free money <x@example.com>' })).toBe(true);
  });

  it('treats the text as a regular expression', () => {
    const rule = { text: '^buy\\s+(cheap|discount)\\s+\\w+$', type: 0 };
    expect(matchesRule(rule, { content: 'Buy  cheap watches' })).toBe(true);
    expect(matchesRule(rule, { content: 'Please buy cheap watches' })).toBe(false);
    expect(matchesRule({ text: 'v[i1]agra', type: 0 }, { content: 'V1AGRA here' })).toBe(true);
  });

  it('matches an invalid regular expression literally', () => {
    expect(matchesRule({ text: '[free', type: 0 }, { content: 'get it [FREE now' })).toBe(true);
    expect(matchesRule({ text: '[free', type: 0 }, { content: 'get it free now' })).toBe(false);
    expect(matchesRule({ text: '(unclosed', type: 2 }, { sender: 'x (Unclosed y' })).toBe(true);
    expect(matchesRule({ text: '*star', type: 0 }, { content: 'a *star is born' })).toBe(true);
    expect(matchesRule({ text: '*star', type: 0 }, { content: 'a star is born' })).toBe(false);
    expect(() => compileRule('a{2')).not.toThrow();
  });

  it('finishes quickly on a catastrophic pattern', () => {
    const content = `${'a'.repeat(SPAM_TEXT_LIMIT - 1)}b`;
    expect(matchesRule({ text: '(a+)+$', type: 0 }, { content })).toBe(false);
    expect(matchesRule({ text: '(a|aa)+$', type: 0 }, { content })).toBe(false);
    expect(matchesRule({ text: '(a+)+b$', type: 0 }, { content })).toBe(true);
  });
});

describe('the bounds on what one rule costs on one text', () => {
  it('refuses the audit\'s pattern, and does not apply one stored before the limits', () => {
    expect(AUDIT_PATTERN).toHaveLength(242);
    expect(AUDIT_PATTERN.length).toBeLessThanOrEqual(SPAM_RULE_MAX_LENGTH);
    const compiled = compileRule(AUDIT_PATTERN);
    expect(compiled.size).toBeGreaterThan(10000);
    expect(compiled.refusal).toBe(`it compiles to ${compiled.size} instructions, more than ${SPAM_RULE_MAX_PROGRAM}`);
    expect(ruleRefusal(AUDIT_PATTERN)).toBe(
      `The text is too large a pattern: it compiles to ${compiled.size} instructions, at most ${SPAM_RULE_MAX_PROGRAM} are allowed `
      + '(a counted repetition such as {1,100} repeats what it applies to that many times).',
    );
    // The NFA's work is at most program size × text length: the audit's rule on the comment was
    // more than 50 times the most a rule may now cost on any text.
    expect(SPAM_RULE_MAX_PROGRAM * SPAM_TEXT_LIMIT * 50).toBeLessThan(compiled.size * COMMENT.length);

    // A rule stored before the limits (the database has it) is not applied: never run on the comment.
    const used = cpuMs(() => {
      expect(matchesRule({ text: AUDIT_PATTERN, type: 2 }, { content: COMMENT, sender: 'a@example.com' })).toBe(false);
      expect(matchesRule({ text: AUDIT_PATTERN, type: 0 }, { content: `${COMMENT} casino` })).toBe(false);
    });
    expect(used).toBeLessThan(2000); // the old code: 10-20 s of CPU for the first call alone
  });

  it('refuses a text longer than the limit, and does not apply a stored one', () => {
    const word = uniqueWord();
    const longest = word + 'x'.repeat(SPAM_RULE_MAX_LENGTH - word.length);
    expect(ruleRefusal(longest)).toBeNull();
    expect(matchesRule({ text: longest, type: 0 }, { content: `say ${longest.toUpperCase()}!` })).toBe(true);
    const tooLong = `${longest}x`;
    expect(ruleRefusal(tooLong)).toBe(`The text may not be greater than ${SPAM_RULE_MAX_LENGTH} characters.`);
    expect(matchesRule({ text: tooLong, type: 0 }, { content: `say ${tooLong}!` })).toBe(false);
    // Characters, not UTF-16 units, as the column and the 422 count them.
    expect(ruleRefusal('😀'.repeat(SPAM_RULE_MAX_LENGTH))).toBeNull();
    expect(ruleRefusal('😀'.repeat(SPAM_RULE_MAX_LENGTH + 1))).toMatch(/may not be greater than/);
    // A stored rule of the old 65535-character limit costs no compilation.
    const before = spamRuleCompilations();
    expect(matchesRule({ text: 'casino'.repeat(10000), type: 0 }, { content: 'casino'.repeat(10000) })).toBe(false);
    expect(spamRuleCompilations()).toBe(before);
  });

  it('runs a rule over the first 16 KB of a text only', () => {
    expect(SPAM_TEXT_LIMIT).toBe(16384);
    expect(spamText(COMMENT)).toHaveLength(SPAM_TEXT_LIMIT);
    expect(spamText('short')).toBe('short');
    // Never half a surrogate pair: an emoji across the boundary is left out whole.
    const across = `${'a'.repeat(SPAM_TEXT_LIMIT - 1)}😀b`;
    expect(spamText(across)).toBe('a'.repeat(SPAM_TEXT_LIMIT - 1));

    const word = uniqueWord();
    const rule = { text: word, type: 0 };
    const at = (offset: number) => `${'x'.repeat(offset)}${word}${'y'.repeat(1000)}`;
    expect(matchesRule(rule, { content: at(SPAM_TEXT_LIMIT - word.length) })).toBe(true);
    expect(matchesRule(rule, { content: at(SPAM_TEXT_LIMIT - word.length + 1) })).toBe(false);
    expect(matchesRule({ ...rule, type: 1 }, { sender: at(SPAM_TEXT_LIMIT) })).toBe(false);
  });

  it('matches a space of the rule to a no-break space of the text (an HTML mail\'s &nbsp;)', () => {
    const word = uniqueWord();
    const rule = { text: `cheap ${word}`, type: 0 };
    for (const space of ['\u00a0', '\u202f', '\u2007']) expect(matchesRule(rule, { content: `buy cheap${space}${word} now` })).toBe(true);
    expect(matchesRule(rule, { content: `buy cheap-${word} now` })).toBe(false);
  });

  it('does not take the cut for the end of the text or of a word: `$` and `\\b` match only where the text really ends', () => {
    const anchored = { text: '(a+)+$', type: 0 };
    for (const n of [SPAM_TEXT_LIMIT - 1, SPAM_TEXT_LIMIT, SPAM_TEXT_LIMIT + 5000]) {
      expect(matchesRule(anchored, { content: `${'a'.repeat(n)}b` })).toBe(false);
      expect(matchesRule(anchored, { content: `b${'a'.repeat(n)}` })).toBe(n < SPAM_TEXT_LIMIT);
    }
    const word = uniqueWord();
    const whole = { text: `\\b${word}\\b`, type: 0 };
    const cutAfter = `${'x '.repeat(SPAM_TEXT_LIMIT / 2)}`.slice(0, SPAM_TEXT_LIMIT - word.length - 1);
    expect(matchesRule(whole, { content: `${cutAfter} ${word}est and more` })).toBe(false);
    expect(matchesRule(whole, { content: `${cutAfter} ${word}` })).toBe(true);
  });

  it('the costliest patterns within the limits run over a long text in a bounded time', () => {
    // Each defeats RE2's DFA (it would need too many states) so that the NFA runs, with most of the
    // program alive on every character: the worst case, program size × SPAM_TEXT_LIMIT.
    const random = (n: number) => {
      let x = 12345;
      return Array.from({ length: n }, () => ((x = (x * 1103515245 + 12345) & 0x7fffffff) >> 16) & 1 ? 'a' : 'b').join('');
    };
    const worst: Array<[string, string]> = [
      [`[a-z ,.]{1,${Math.floor(SPAM_RULE_MAX_PROGRAM / 2) - 2}}!`, COMMENT],
      [`(?:a|b)*a(?:a|b){${SPAM_RULE_MAX_PROGRAM - 6}}c`, random(60 * 1024)],
      [`(?:.{${SPAM_RULE_MAX_PROGRAM - 4}})*!`, COMMENT],
    ];
    for (const [pattern, text] of worst) {
      const compiled = compileRule(pattern);
      expect({ pattern, refusal: compiled.refusal }).toEqual({ pattern, refusal: null });
      expect(compiled.size).toBeGreaterThan(SPAM_RULE_MAX_PROGRAM * 0.9);
      // Measured at ~0.2 s of CPU each on a busy 2-core machine; the audit's rule took 10-20 s.
      expect(cpuMs(() => expect(matchesRule({ text: pattern, type: 0 }, { content: text })).toBe(false))).toBeLessThan(3000);
    }
  });

  it('compiles a rule once, however many times it is checked', () => {
    const text = `${uniqueWord()}|(?:cheap|free)\\s+pills`;
    const before = spamRuleCompilations();
    expect(ruleRefusal(text)).toBeNull(); // saving it compiles it...
    for (const type of [0, 1, 2, 0, 1, 2]) {
      expect(matchesRule({ text, type }, { content: 'Get FREE   pills now', sender: 'FREE PILLS <a@example.com>' })).toBe(true);
      expect(matchesRule({ text, type }, { content: 'hello', sender: 'a@example.com' })).toBe(false);
    }
    expect(spamRuleCompilations() - before).toBe(1); // ...and every check after reuses it
    matchesRule({ text: `${text}|other`, type: 0 }, { content: 'x' });
    expect(spamRuleCompilations() - before).toBe(2);
  });
});

describe('the bound on one check (every rule on every text)', () => {
  /** The audit's 256 rules: each defeats the DFA, ~150 instructions alive on every character of a/b text. */
  const AUDIT_RULES = Array.from({ length: 256 }, (_, i) => ({ id: i + 1, type: 0, text: `(?:a|b)*a(?:a|b){${60 + Math.floor((i * 150) / 255)}}[^ab]` }));
  const randomAb = (n: number) => {
    let x = 987654321;
    return Array.from({ length: n }, () => (((x = (x * 1103515245 + 12345) & 0x7fffffff) >> 16) & 1 ? 'a' : 'b')).join('');
  };
  const sizeOf = (text: string) => compileRule(text).size;
  /**
   * `text` with `word` at `offset`, after 220 b's: no 'a' then 60-210 a's or b's then another
   * character leads to the word, so none of the audit's rules matches there.
   */
  const withWordAt = (text: string, word: string, offset: number) => `${text.slice(0, offset - 220)}${'b'.repeat(220)}${word}${text.slice(offset + word.length)}`;
  /** What the check's reads cost when each reads `limit` characters: the formula spamReadLimit keeps within the budget. */
  const cost = (reads: Array<{ size: number; length: number }>, limit: number) =>
    reads.reduce((sum, r) => sum + r.size * (r.length <= limit ? r.length : 2 * limit + 1), 0);

  it('reads whole texts while the rules fit the budget, and less of the long ones when they do not', () => {
    const largest = { size: SPAM_RULE_MAX_PROGRAM, length: SPAM_TEXT_LIMIT };
    const fitting = Math.floor(SPAM_CHECK_BUDGET / (SPAM_RULE_MAX_PROGRAM * SPAM_TEXT_LIMIT));
    expect(fitting).toBe(8);
    expect(spamReadLimit([])).toBe(SPAM_TEXT_LIMIT);
    expect(spamReadLimit(Array(fitting).fill(largest))).toBe(SPAM_TEXT_LIMIT);
    const over = Array(fitting + 1).fill(largest);
    const limit = spamReadLimit(over);
    expect(limit).toBeLessThan(SPAM_TEXT_LIMIT);
    expect(cost(over, limit)).toBeLessThanOrEqual(SPAM_CHECK_BUDGET);
    expect(cost(over, limit + 1)).toBeGreaterThan(SPAM_CHECK_BUDGET);
    // A text past the cut is read twice (matches): a longer one costs more than a whole 16 KB text.
    expect(spamReadLimit(Array(fitting).fill({ ...largest, length: SPAM_TEXT_LIMIT + 1 }))).toBeLessThan(SPAM_TEXT_LIMIT);
    // A short text (a sender) is read whole and takes its share only: the long ones read the rest.
    const withSender = [...over, { size: SPAM_RULE_MAX_PROGRAM, length: 40 }];
    const shared = spamReadLimit(withSender);
    expect(shared).toBeGreaterThan(40);
    expect(cost(withSender, shared)).toBeLessThanOrEqual(SPAM_CHECK_BUDGET);
    expect(cost(withSender, shared + 1)).toBeGreaterThan(SPAM_CHECK_BUDGET);
  });

  it('the audit\'s 256 rules on a 16 KB comment: the check\'s work stays within the budget, and each rule reads the same first characters', () => {
    const text = randomAb(SPAM_TEXT_LIMIT);
    const reads = AUDIT_RULES.map((r) => ({ size: sizeOf(r.text), length: text.length }));
    // Unbounded, the check was some 9 times the budget (7 s of CPU on a busy 2-core machine).
    expect(cost(reads, SPAM_TEXT_LIMIT)).toBeGreaterThan(8 * SPAM_CHECK_BUDGET);
    const limit = spamReadLimit(reads);
    expect(cost(reads, limit)).toBeLessThanOrEqual(SPAM_CHECK_BUDGET);
    // Every rule run (no time budget): within the work budget. Counted as the engine reads: a cut
    // text whose part alone does not match is not run again.
    const before = spamCheckWork();
    expect(spamMatch(AUDIT_RULES, [{ content: text }, { sender: 'Mallory' }, { sender: 'mallory@example.com' }], Infinity)).toBeUndefined();
    expect(spamCheckWork() - before).toBeLessThanOrEqual(SPAM_CHECK_BUDGET);
    expect(spamCheckWork() - before).toBeGreaterThan(SPAM_CHECK_BUDGET / 4);

    // A word rule among them reads as far as they all do: a word that ends there is found, one
    // character later it is not (the rest of the text is not checked). Alone, it reads 16 KB.
    const word = uniqueWord();
    const rules = [{ id: 999, type: 0, text: word }, ...AUDIT_RULES];
    const shared = spamReadLimit(rules.map((r) => ({ size: sizeOf(r.text), length: text.length })));
    expect(shared).toBeLessThanOrEqual(limit);
    const at = (offset: number) => withWordAt(text, word, offset);
    expect(spamMatch(rules, [{ content: at(shared - word.length) }])?.id).toBe(999);
    expect(spamMatch(rules, [{ content: at(shared - word.length + 1) }], Infinity)).toBeUndefined();
    expect(spamMatch([rules[0]], [{ content: at(shared - word.length + 1) }])?.id).toBe(999);
  });

  it('runs no rule past the time budget: the rules left are not run, and the text is no spam', () => {
    const [first, second] = [uniqueWord(), uniqueWord()];
    const rules = [{ id: 1, type: 0, text: first }, { id: 2, type: 2, text: second }];
    expect(spamMatch(rules, [{ content: `x ${second} y` }])?.id).toBe(2);
    // A budget of 0 ms has passed once the first rule has run, however fast it was; the first always runs.
    expect(spamMatch(rules, [{ content: `x ${second} y` }], 0)).toBeUndefined();
    expect(spamMatch(rules, [{ content: `x ${first} y` }], 0)?.id).toBe(1);
  });
});

