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
 * And one check (every rule that applies, on every text it reads) is bounded too, since an audit's
 * 256 rules of ~150 instructions that each defeat the DFA ran one 16 KB comment for 7 s of CPU
 * (spamMatch): in work, SPAM_CHECK_BUDGET instructions × characters in all, each rule reading fewer
 * characters than SPAM_TEXT_LIMIT when the rules together would cost more on whole texts; and in
 * time, SPAM_CHECK_MS, after which the rules not run yet are left out.
 */
export const SPAM_RULE_MAX_LENGTH = 256;
export const SPAM_RULE_MAX_PROGRAM = 512;
export const SPAM_TEXT_LIMIT = 16 * 1024;
/**
 * What one check may cost, in the NFA's worst case: the sum over the rules and the texts each reads
 * of the rule's instructions × the characters it reads (readLength). About 0.8 s of CPU on a busy
 * 2-core machine were every rule to defeat the DFA (SPAM_CHECK_MS stops such a check sooner); an
 * ordinary rule costs far less than its bound. Rules of 4,096 instructions in all (eight of the
 * largest program) read a whole 16 KB text within it.
 */
export const SPAM_CHECK_BUDGET = 64 * 1024 * 1024;
/**
 * The time one check may take (checked between rules) before the rules it has not run yet are left
 * out: what the work count leaves out (RE2's attempts at a DFA, a busy machine) is bounded so.
 */
export const SPAM_CHECK_MS = 250;
const DFA_BYTES = 128 * 1024;
/**
 * Rules kept compiled: every rule there may be (SPAM_RULES_MAX, which the create of a rule checks:
 * each incoming mail and comment runs every rule, within the bounds of one check), and the texts
 * being checked by creates and updates.
 */
const cacheSize = () => config().spamRulesMax + 16;

/** A rule's text, compiled. */
export interface CompiledRule {
  /** Instructions of the compiled program (0 for a text too long to compile). */
  readonly size: number;
  /** Why the rule is not applied (too long, or too large a program), or null. */
  readonly refusal: string | null;
  /** Whether the pattern matches anywhere in the first `limit` characters of `text`. */
  test(text: string, limit?: number): boolean;
}

let compilations = 0;
let work = 0;

/** How many rule texts this process has compiled (each is compiled once, then kept). */
export const spamRuleCompilations = (): number => compilations;

/** The work this process's checks have done, in SPAM_CHECK_BUDGET's units (instructions × characters read). */
export const spamCheckWork = (): number => work;

/** The part of `text` a rule runs over: its first `limit` characters (UTF-16 units), never half a surrogate pair. */
export function spamText(text: string, limit = SPAM_TEXT_LIMIT): string {
  if (text.length <= limit) return text;
  const high = text.charCodeAt(limit - 1);
  return text.slice(0, high >= 0xd800 && high <= 0xdbff ? limit - 1 : limit);
}

/** The most characters the engine reads of a text of `length` cut at `limit`: the part twice, once with one more (matches). */
const readLength = (length: number, limit: number) => (length <= limit ? length : 2 * limit + 1);

/** No-break spaces (`&nbsp;` of an HTML mail read as text, U+2007, U+202F): a rule's space matches them. */
const NO_BREAK_SPACES = /[\u00a0\u2007\u202f]/g;

/**
 * Whether a rule's program matches in spamText(text, limit), its no-break spaces read as spaces.
 * The cut is not the text's end, and a match must lean on neither side of it, so a cut text is run
 * twice and matches when both runs do: the part alone (no character the pattern reads comes from
 * past the cut), and the part with a word character standing for the text that goes on (`$` does
 * not match at the cut: `(a+)+$` would find any long text ending in `aaa…b` spam once cut among
 * the a's; nor does `\b` inside a word). Alone, the stand-in could be read by `[^ab]` or `.`: the
 * audit's rules would find a 16 KB comment of a's and b's spam once the check's budget cut it.
 */
function matches(set: RE2Set, size: number, text: string, limit: number): boolean {
  const part = spamText(text, limit).replace(NO_BREAK_SPACES, ' ');
  const run = (s: string) => {
    work += size * s.length;
    return set.match(s).length > 0;
  };
  return part.length === text.length ? run(part) : run(part) && run(`${part}_`);
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
  return { size, refusal: null, test: (s, limit = SPAM_TEXT_LIMIT) => matches(set, size, s, limit) };
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

export interface SpamRuleLike { text: string; type: number; id?: number }

/** The texts of a candidate a rule reads: type 0 the content, 1 the sender, 2 both (either matching). */
function textsRead(type: number, candidate: SpamCandidate): string[] {
  const texts = type === 0 ? [candidate.content] : type === 1 ? [candidate.sender] : [candidate.content, candidate.sender];
  return texts.filter((t): t is string => !!t);
}

/** The compiled rule, or null for one that exceeds the limits (not applied; logged once per process). */
function applicable(rule: SpamRuleLike): CompiledRule | null {
  const entry = cached(rule.text);
  if (!entry.rule.refusal) return entry.rule;
  if (!entry.warned) {
    entry.warned = true;
    logger.warn({ spam_rule_id: rule.id, reason: entry.rule.refusal }, 'A spam rule is not applied: it exceeds the limits on a pattern; edit it to fit them.');
  }
  return null;
}

/**
 * How many characters of each text the rules of one check read: the most, up to SPAM_TEXT_LIMIT,
 * that keeps the check within SPAM_CHECK_BUDGET (Σ instructions × characters read, over every rule
 * and text it reads). A text shorter than that is read whole, so short ones (senders) cost their
 * length and leave the rest to the long ones.
 */
export function spamReadLimit(reads: ReadonlyArray<{ size: number; length: number }>): number {
  const cost = (limit: number) => reads.reduce((sum, r) => sum + r.size * readLength(r.length, limit), 0);
  if (cost(SPAM_TEXT_LIMIT) <= SPAM_CHECK_BUDGET) return SPAM_TEXT_LIMIT;
  let [fits, over] = [0, SPAM_TEXT_LIMIT];
  while (over - fits > 1) {
    const mid = Math.floor((fits + over) / 2);
    if (cost(mid) <= SPAM_CHECK_BUDGET) fits = mid;
    else over = mid;
  }
  return fits;
}

/** When each warning of a check's bounds was last logged: at most once a minute each, whatever the traffic. */
const warnedAt = new Map<string, number>();
function warnAtMostEveryMinute(key: string, fields: Record<string, unknown>, message: string): void {
  const now = Date.now();
  if (now - (warnedAt.get(key) ?? -Infinity) < 60_000) return;
  warnedAt.set(key, now);
  logger.warn(fields, message);
}

/**
 * One spam check: the first of `rules` (in order) that matches one of `candidates`, or undefined.
 * Its cost is bounded twice. In work: at most SPAM_CHECK_BUDGET, each rule reading only the first
 * spamReadLimit characters of a text when the rules together would cost more on whole texts. In
 * time: once `timeBudgetMs` (SPAM_CHECK_MS) have passed, the rules not run yet are not run: the
 * work count bounds the engine's steps, not RE2's attempts at a DFA, which a rule that defeats it
 * pays again on every text (the audit's 256 rules took 0.8 s with texts cut to 465 characters).
 * Both fail open: what is not read, or not run, does not make spam. A help desk that refuses a
 * customer's message loses more than one that lets a spam through; each is logged (at most once a
 * minute) so that the rules can be made fewer or simpler.
 */
export function spamMatch<R extends SpamRuleLike>(rules: readonly R[], candidates: readonly SpamCandidate[], timeBudgetMs = SPAM_CHECK_MS): R | undefined {
  const applied = rules.flatMap((rule) => {
    const compiled = applicable(rule);
    return compiled ? [{ rule, compiled, texts: candidates.flatMap((c) => textsRead(rule.type, c)) }] : [];
  });
  const limit = spamReadLimit(applied.flatMap(({ compiled, texts }) => texts.map((t) => ({ size: compiled.size, length: t.length }))));
  const instructions = applied.reduce((sum, a) => sum + a.compiled.size, 0);
  if (limit < SPAM_TEXT_LIMIT && applied.some((a) => a.texts.some((t) => t.length > limit))) {
    warnAtMostEveryMinute('short', { rules: applied.length, instructions, read_limit: limit },
      `Spam rules read only the first ${limit} characters of a text: together they compile to ${instructions} instructions, too many to run over `
      + `${SPAM_TEXT_LIMIT} characters within one check's budget (SPAM_CHECK_BUDGET); the rest of a long text is not checked. Fewer or simpler rules read more.`);
  }
  // Matching only: a rule is compiled once per process (its limits bound that), not per check.
  const started = performance.now();
  for (const [i, { rule, compiled, texts }] of applied.entries()) {
    if (i > 0 && performance.now() - started >= timeBudgetMs) {
      warnAtMostEveryMinute('time', { rules: applied.length, not_run: applied.length - i, budget_ms: timeBudgetMs },
        `A spam check ran out of time (${timeBudgetMs} ms) after ${i} of its ${applied.length} rules: the others were not run and the text was `
        + 'taken as no spam. Rules that defeat RE2\'s DFA (counted repetitions of alternatives) cost the most: make them fewer or simpler.');
      return undefined;
    }
    for (const text of texts) if (compiled.test(text, limit)) return rule;
  }
  return undefined;
}
