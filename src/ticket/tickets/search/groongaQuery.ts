/**
 * The words of a search as Groonga looks them up (Mroonga's `MATCH ... AGAINST`, the Groonga
 * server's `--query`): the boolean query with its phrases first: Groonga's parser drops a phrase
 * that follows a prefix term (`+word* +"a phrase"` finds nothing, `+"a phrase" +word*` finds it).
 * Every term is required (`+`), so the order means nothing else.
 */
export function groongaQuery(booleanQuery: string): string {
  // TokenBigram splits a word where letters meet digits (`hp4200`: `hp`, `4200`), and then finds
  // nothing for its prefix form (`+hp4200*`): such a word is looked up whole.
  // It also splits at `_` (a word of its own), which InnoDB keeps inside a word (`err_connection_refused`
  // is one word of the query): each part is a word here (`+err* +connection* +refused*`).
  const terms = (booleanQuery.match(/[+-]?"[^"]*"|\S+/g) ?? [])
    .flatMap((t) => (t.includes('"') || !t.includes('_') ? [t] : t.replace(/^\+|\*$/g, '').split('_').filter(Boolean).map((p) => `+${p}*`)))
    .map((t) => (/\p{L}\p{N}|\p{N}\p{L}/u.test(t) ? t.replace(/\*$/, '') : t));
  return [...terms.filter((t) => t.includes('"')), ...terms.filter((t) => !t.includes('"'))].join(' ');
}

/** A number written into a Groonga command or script: a safe integer, or an error (never text of a request's). */
export function groongaInteger(n: number): string {
  if (!Number.isSafeInteger(n)) throw new Error(`not an integer: ${n}`);
  return String(n);
}

/** A string in a Groonga command or script: in double quotes, with `"` and `\\` escaped. */
export const groongaString = (v: string): string => `"${v.replace(/["\\]/g, (c) => `\\${c}`)}"`;
