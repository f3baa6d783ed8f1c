import { createHash } from 'node:crypto';
import { RE2JS, RE2Set } from 're2js';
import { config } from '../config';
import { characters } from '../lib/validation';
import { logger } from '../logger';

/**
 * Spam rule texts are regular expressions, matched case-insensitively with RE2 semantics (linear
 * time: a user-supplied pattern cannot hang the process). A text that is not a valid pattern is
 * matched as a literal string.
 *
 * Linear in the text is not enough on its own: RE2's fallback engine (an NFA) costs up to the
 * compiled program's size × the text's length, and a short pattern can compile to a large program
 * (a counted repetition is expanded: `[a-z ]{1,999}` is ~2,000 instructions; an audit's
 * 242-character rule of 12,000 ran a 60 KB comment for 20 s). So the work of one rule on one text
 * is bounded (docs/security.md, *Spam rules*):
 * - a rule's text is at most SPAM_RULE_MAX_LENGTH characters and compiles to at most
 *   SPAM_RULE_MAX_PROGRAM instructions: refused on create and update (spamrule.ts, ruleRefusal); a
 *   rule stored before these limits that exceeds them is not applied (logged once per process);
 * - a rule runs over the first SPAM_TEXT_LIMIT characters of a text, no more (spamText);
 * - each rule is compiled once per process and kept (a bounded cache keyed by the text), with its
 *   DFA's memory capped at DFA_BYTES: a pattern whose DFA would grow past it gives up early and
 *   falls back to the NFA (bounded by the two limits above) instead of building states for ever.
 */
export const SPAM_RULE_MAX_LENGTH = 256;
export const SPAM_RULE_MAX_PROGRAM = 512;
export const SPAM_TEXT_LIMIT = 16 * 1024;
const DFA_BYTES = 128 * 1024;
/**
 * Rules kept compiled: every rule there may be (SPAM_RULES_MAX, which the create of a rule checks:
 * each incoming mail and comment runs every rule, so their number bounds that work as the limits
 * above bound one rule's), and the texts being checked by creates and updates.
 */
const cacheSize = () => config().spamRulesMax + 16;

/** A rule's text, compiled. */
export interface CompiledRule {
  /** Instructions of the compiled program (0 for a text too long to compile). */
  readonly size: number;
  /** Why the rule is not applied (too long, or too large a program), or null. */
  readonly refusal: string | null;
  /** Whether the pattern matches anywhere in the first SPAM_TEXT_LIMIT characters of `text`. */
  test(text: string): boolean;
}

let compilations = 0;

/** How many rule texts this process has compiled (each is compiled once, then kept). */
export const spamRuleCompilations = (): number => compilations;

/** The part of `text` a rule runs over: its first SPAM_TEXT_LIMIT characters (UTF-16 units), never half a surrogate pair. */
export function spamText(text: string): string {
  if (text.length <= SPAM_TEXT_LIMIT) return text;
  const high = text.charCodeAt(SPAM_TEXT_LIMIT - 1);
  return text.slice(0, high >= 0xd800 && high <= 0xdbff ? SPAM_TEXT_LIMIT - 1 : SPAM_TEXT_LIMIT);
}

/** No-break spaces (`&nbsp;` of an HTML mail read as text, U+2007, U+202F): a rule's space matches them. */
const NO_BREAK_SPACES = /[\u00a0\u2007\u202f]/g;

/**
 * What a rule is matched against: spamText with its no-break spaces as spaces, and after a cut,
 * one word character standing for the text that goes on. The cut is not the text's end: `$` must
 * not match there (`(a+)+$` would find any long text ending in `aaa…b` spam once cut among the
 * a's), nor `\b` inside a word.
 */
function matchedText(text: string): string {
  const part = spamText(text).replace(NO_BREAK_SPACES, ' ');
  return part.length < text.length ? `${part}_` : part;
}

function program(pattern: string): RE2Set {
  const set = new RE2Set(RE2Set.UNANCHORED, RE2JS.CASE_INSENSITIVE, DFA_BYTES);
  set.add(pattern);
  set.compile();
  return set;
}

const refused = (size: number, refusal: string): CompiledRule => ({ size, refusal, test: () => false });

/** Compiles a rule's text (uncached: matchesRule and ruleRefusal keep what this returns). */
export function compileRule(text: string): CompiledRule {
  const length = characters(text);
  if (length > SPAM_RULE_MAX_LENGTH) return refused(0, `it is ${length} characters long, more than ${SPAM_RULE_MAX_LENGTH}`);
  compilations++;
  let set: RE2Set;
  try {
    set = program(text);
  } catch {
    set = program(RE2JS.quote(text));
  }
  const size = set.prog.numInst();
  if (size > SPAM_RULE_MAX_PROGRAM) {
    return refused(size, `it compiles to ${size} instructions, more than ${SPAM_RULE_MAX_PROGRAM}`);
  }
  return { size, refusal: null, test: (s) => set.match(matchedText(s)).length > 0 };
}

interface Cached { rule: CompiledRule; warned: boolean }
const cache = new Map<string, Cached>();

/** The compiled rule for `text`, compiled at most once while it stays among the cacheSize() most recently used. */
function cached(text: string): Cached {
  // A stored text may be up to 65535 characters (rules from before the limit): such keys are hashed.
  const key = text.length <= 2 * SPAM_RULE_MAX_LENGTH ? text : `sha256:${createHash('sha256').update(text).digest('hex')}`;
  let entry = cache.get(key);
  if (entry) {
    cache.delete(key);
  } else {
    entry = { rule: compileRule(text), warned: false };
    if (cache.size >= cacheSize()) cache.delete(cache.keys().next().value as string);
  }
  cache.set(key, entry);
  return entry;
}

/**
 * Why a rule's text cannot be saved, as a 422 message, or null. Compiling it here keeps it: the
 * rule saved is not compiled again by this process.
 */
export function ruleRefusal(text: string): string | null {
  const { rule } = cached(text);
  if (!rule.refusal) return null;
  if (rule.size === 0) return `The text may not be greater than ${SPAM_RULE_MAX_LENGTH} characters.`;
  return `The text is too large a pattern: it compiles to ${rule.size} instructions, at most ${SPAM_RULE_MAX_PROGRAM} are allowed `
    + '(a counted repetition such as {1,100} repeats what it applies to that many times).';
}

export interface SpamCandidate {
  content?: string | null;
  sender?: string | null;
}

/** Rule types: 0 content, 1 sender, 2 content and sender (either matching). */
export function matchesRule(rule: { text: string; type: number; id?: number }, candidate: SpamCandidate): boolean {
  const entry = cached(rule.text);
  const re = entry.rule;
  if (re.refusal) {
    if (!entry.warned) {
      entry.warned = true;
      logger.warn({ spam_rule_id: rule.id, reason: re.refusal }, 'A spam rule is not applied: it exceeds the limits on a pattern; edit it to fit them.');
    }
    return false;
  }
  const test = (s?: string | null) => !!s && re.test(s);
  if (rule.type === 0) return test(candidate.content);
  if (rule.type === 1) return test(candidate.sender);
  return test(candidate.content) || test(candidate.sender);
}
