import { compileRule, matchesRule } from '../../src/core/spam';

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
    const content = `${'a'.repeat(50000)}b`;
    expect(matchesRule({ text: '(a+)+$', type: 0 }, { content })).toBe(false);
    expect(matchesRule({ text: '(a|aa)+$', type: 0 }, { content })).toBe(false);
    expect(matchesRule({ text: '(a+)+b$', type: 0 }, { content })).toBe(true);
  });
});
