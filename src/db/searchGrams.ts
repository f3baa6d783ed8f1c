import { LONG_TEXT, PEOPLE, type GramSource } from '../../migrations/068_user_search_grams';
import { ORGANISATIONS } from '../../migrations/069_organisation_search_grams';
import { VALUES } from '../../migrations/070_custom_field_value_grams';
import { OPTIONS } from '../../migrations/071_custom_field_value_options';
import { select } from './select';
import { allOf, joined, sqlCondition, sqlFragment, sqlText, trusted, type BoundCondition } from './sql';

/**
 * The grams of one table's texts (migrations 068, 069 and 070): the grams' table, its owner column,
 * the records' table, and the share of the records under which narrowing to a gram's holders
 * pays: each holder is read by its key (then its LIKE), where the LIKE alone reads every record
 * in order, and a narrow record is cheap to read so. `scope`: the grams (and records) of one
 * value of a column (a custom field's); `always`: a gram every look-up includes (LONG_TEXT).
 */
export interface GramIndex {
  grams: string;
  owner: string;
  records: string;
  narrowsBelow: number;
  scope?: { column: string; value: number };
  always?: string;
}

/** A migration's grams (its table, owner and records' table), looked up with `narrowsBelow`. */
const indexOf = (source: GramSource, narrowsBelow: number): GramIndex =>
  ({ grams: source.grams, owner: source.owner, records: source.table, narrowsBelow });

/**
 * People's full names and addresses (migration 068). Measured at 124,200 people: a gram a
 * twentieth hold, 6 times faster (21 against 132 ms); at 20,000, one every person holds, 2-3
 * times slower (45-65 against 20 ms).
 */
export const PEOPLE_GRAMS = indexOf(PEOPLE, 1 / 4);
/**
 * Organisations' names (migration 069): a row of a few columns, read in order for less. Measured
 * at 100,000 organisations: a gram 3 % hold, 2 times faster (20 against 44 ms); 12 %, as slow (33
 * against 31 ms).
 */
export const ORGANISATION_GRAMS = indexOf(ORGANISATIONS, 1 / 10);

/**
 * The grams of `term` worth weighing: its first, its last and one between (fewer for a term of
 * three or four characters), as MariaDB compares characters (code points in utf8mb4). None under
 * three characters. None either where lower-casing lengthens a character ('İ'): a person's address
 * is matched by the lower-cased term, whose grams would not be the term's.
 */
function gramsOf(term: string): string[] {
  const chars = Array.from(term);
  if (chars.length < 3 || Array.from(term.toLowerCase()).length !== chars.length) return [];
  const gram = (i: number) => chars.slice(i, i + 3).join('');
  const last = chars.length - 3;
  // Exact duplicates only: the column compares in its collation anyway.
  return [...new Set([gram(0), gram(Math.floor(last / 2)), gram(last)])];
}

/** The gram to narrow by: the rarest by its estimate `n`, if fewer than `share` of the `records` hold it. */
export function narrowingGram(grams: Array<{ gram: string; n: number }>, records: number, share: number): string | undefined {
  const [rarest] = grams.filter((g) => Number.isFinite(g.n)).sort((a, b) => a.n - b.n);
  return rarest && rarest.n < records * share ? rarest.gram : undefined;
}

/**
 * `condition`, a LIKE of a part of a record's text (a person's name or address, an
 * organisation's name, a custom field's value), narrowed first to the records holding one of the
 * term's grams (`index`): a value that contains the term holds each of its grams, so the LIKE
 * then reads only those records, found by an index range.
 *
 * Which gram, and whether at all, is decided by MariaDB's own estimates (one EXPLAIN of each
 * gram's range and of the records: index dives, no rows read): the rarest gram, unless even it is
 * held by the index's share of all records (an address's domain, a common name), where reading
 * them all is cheaper than reading so many by their keys. The result is the same either way;
 * only its cost differs. A term under three characters is the LIKE alone.
 */
export async function narrowedByGrams(index: GramIndex, term: string, condition: BoundCondition): Promise<BoundCondition> {
  const grams = gramsOf(term);
  if (!grams.length) return condition;
  const { scope, always } = index;
  const inScope = scope ? sqlFragment`${trusted(scope.column)} = ${scope.value}` : undefined;
  /** The grams' rows of `gram` (and of `always`), in the scope. */
  const rowsOf = (gram: string) => sqlFragment`${trusted(index.grams)} WHERE ${inScope ? sqlFragment`${inScope} AND ` : trusted('')}${
    always ? sqlFragment`gram IN (${[gram, always]})` : sqlFragment`gram = ${gram}`}`;
  const records = sqlFragment`${trusted(index.records)}${inScope ? sqlFragment` WHERE ${inScope}` : trusted('')}`;
  const explained = joined([...grams.map((g) => sqlFragment`SELECT 1 FROM ${rowsOf(g)}`), sqlFragment`SELECT 1 FROM ${records}`], ' UNION ALL ');
  const plan = await select<{ id: number; rows: number | string | null }>(`EXPLAIN ${sqlText(explained)}`, explained.replacements);
  const estimate = (id: number) => Number(plan.find((r) => Number(r.id) === id)?.rows ?? NaN);
  const gram = narrowingGram(grams.map((g, i) => ({ gram: g, n: estimate(i + 1) })), estimate(grams.length + 1), index.narrowsBelow);
  if (gram === undefined) return condition;
  const holders = sqlCondition`id IN (SELECT ${trusted(index.owner)} FROM ${rowsOf(gram)})`;
  return sqlCondition`${allOf([holders, condition])}`;
}

/**
 * A custom field's values (migration 070): the grams of that field's values, and its values too
 * long for grams. A value is a narrow row: the organisations' share (where it breaks even for
 * fields was not measured; at a million values one a gram of 0.7 % of them holds was 23 times
 * faster, 34 against 773 ms).
 */
export const customFieldGrams = (fieldId: number): GramIndex => ({
  ...indexOf(VALUES, 1 / 10), scope: { column: VALUES.scope!, value: fieldId }, always: LONG_TEXT,
});

/**
 * The records whose value of field `fieldId` names option `optionId` (migration 071): an index
 * range of (field, option), the same records as `FIND_IN_SET(optionId, value)` over the field's
 * values as the API writes them (ids, comma-separated).
 */
export const holdingOption = (fieldId: number, optionId: number): BoundCondition =>
  sqlCondition`id IN (${optionHolders(fieldId, [optionId])})`;

/** The owners of the field's values that name one of `optionIds` (migration 071), as a subquery. */
export const optionHolders = (fieldId: number, optionIds: number[]): BoundCondition => sqlFragment`SELECT ${trusted(OPTIONS.owner)}
  FROM ${trusted(OPTIONS.grams)} WHERE ${trusted(OPTIONS.scope!)} = ${fieldId} AND ${trusted(OPTIONS.parts!.column)} IN (${optionIds})`;
