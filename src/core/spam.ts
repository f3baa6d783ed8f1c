import { RE2JS } from 're2js';

/**
 * Spam rule texts are regular expressions, matched case-insensitively with RE2 semantics (linear
 * time: a user-supplied pattern cannot hang the process). A text that is not a valid pattern is
 * matched as a literal string.
 */
export function compileRule(text: string): RE2JS {
  try {
    return RE2JS.compile(text, RE2JS.CASE_INSENSITIVE);
  } catch {
    return RE2JS.compile(RE2JS.quote(text), RE2JS.CASE_INSENSITIVE);
  }
}

export interface SpamCandidate {
  content?: string | null;
  sender?: string | null;
}

/** Rule types: 0 content, 1 sender, 2 content and sender (either matching). */
export function matchesRule(rule: { text: string; type: number }, candidate: SpamCandidate): boolean {
  const re = compileRule(rule.text);
  const test = (s?: string | null) => !!s && re.matcher(s).find();
  if (rule.type === 0) return test(candidate.content);
  if (rule.type === 1) return test(candidate.sender);
  return test(candidate.content) || test(candidate.sender);
}
