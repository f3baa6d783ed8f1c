import { select } from '../../db/select';
import { allOf, sqlCondition, type BoundCondition } from '../../db/sql';

/**
 * Narrowing pays while the rarest gram's people are fewer than this share of everyone: each of
 * them is read by its key (then its LIKE), where the plain LIKE reads everyone in order. Measured
 * at 20,000 people, a gram every person holds made the count 2-3 times slower (45-65 ms against
 * 20); one a twentieth hold, 2 times faster.
 */
const NARROWS_BELOW = 1 / 4;

/**
 * The grams of `term` worth weighing: its first, its last and one between (fewer for a term of
 * three or four characters), as MariaDB compares characters (code points in utf8mb4). None under
 * three characters. None either where lower-casing lengthens a character ('İ'): the address is
 * matched by the lower-cased term, whose grams would not be the term's.
 */
function gramsOf(term: string): string[] {
  const chars = Array.from(term);
  if (chars.length < 3 || Array.from(term.toLowerCase()).length !== chars.length) return [];
  const gram = (i: number) => chars.slice(i, i + 3).join('');
  const last = chars.length - 3;
  // Exact duplicates only: the column compares in its collation anyway.
  return [...new Set([gram(0), gram(Math.floor(last / 2)), gram(last)])];
}

/** The gram to narrow by: the rarest by its estimate `n`, if fewer than a share of the `people` hold it. */
export function narrowingGram(grams: Array<{ gram: string; n: number }>, people: number): string | undefined {
  const [rarest] = grams.filter((g) => Number.isFinite(g.n)).sort((a, b) => a.n - b.n);
  return rarest && rarest.n < people * NARROWS_BELOW ? rarest.gram : undefined;
}

/**
 * `condition`, a LIKE of a part of a name or of the address, narrowed first to the people holding
 * one of the term's grams (migration 068's `user_search_grams`): a value that contains the term
 * holds each of its grams, so the LIKE then reads only those people, found by an index range.
 *
 * Which gram, and whether at all, is decided by MariaDB's own estimates (one EXPLAIN of each
 * gram's range and of the people: index dives, no rows read): the rarest gram, unless even it is
 * held by a quarter of everyone (an address's domain, a common name), where reading everyone is
 * cheaper than reading so many by their keys. The result is the same either way; only its cost
 * differs. A term under three characters is the LIKE alone.
 */
export async function narrowedByGrams(term: string, condition: BoundCondition): Promise<BoundCondition> {
  const grams = gramsOf(term);
  if (!grams.length) return condition;
  const plan = await select<{ id: number; rows: number | string | null }>(
    `EXPLAIN ${grams.map(() => 'SELECT 1 FROM user_search_grams WHERE gram = ?').join(' UNION ALL ')} UNION ALL SELECT 1 FROM users`,
    grams,
  );
  const estimate = (id: number) => Number(plan.find((r) => Number(r.id) === id)?.rows ?? NaN);
  const gram = narrowingGram(grams.map((g, i) => ({ gram: g, n: estimate(i + 1) })), estimate(grams.length + 1));
  if (gram === undefined) return condition;
  return sqlCondition`${allOf([sqlCondition`id IN (SELECT user_id FROM user_search_grams WHERE gram = ${gram})`, condition])}`;
}
