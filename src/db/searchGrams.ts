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

/**
 * The grams to narrow by, the rarest first by their estimates `n`: those fewer than `share` of the
 * `records` hold (none: the LIKE alone).
 */
export function narrowingGrams(grams: Array<{ gram: string; n: number }>, records: number, share: number): string[] {
  return grams.filter((g) => Number.isFinite(g.n) && g.n < records * share).sort((a, b) => a.n - b.n).map((g) => g.gram);
}

/**
 * The most records that narrowedByGrams names by their ids (`id IN (...)`) in the statements it
 * narrows; more holders of every gram are named by the rarest gram's range, a subquery.
 */
export const FEW_HOLDERS = 1000;

/**
 * `condition`, a LIKE of a part of a record's text (a person's name or address, an
 * organisation's name, a custom field's value), narrowed first to the records holding the term's
 * grams (`index`): a value that contains the term holds each of its grams, so the LIKE then reads
 * only those records.
 *
 * Which grams, and whether at all, is decided by MariaDB's own estimates (one EXPLAIN of each
 * gram's range and of the records: index dives, no rows read): those under the index's share of
 * all records (an address's domain, a common name is not: reading every record is then cheaper
 * than reading so many by their keys). A second statement reads the rarest gram's holders that
 * hold the others too, each looked up by the grams' key (index only), at most FEW_HOLDERS and
 * one: that many or fewer are the statements' `id IN (...)`, more the rarest gram's range. (At
 * 1M tickets, `ORD-500000` in a text field: its rarest gram's 2,702 holders read by their tickets
 * and values took 30 ms a statement, the 120 that hold another of its grams 4 ms to find.) The
 * result is the same either way; only its cost differs. A term under three characters is the
 * LIKE alone.
 */
export async function narrowedByGrams(index: GramIndex, term: string, condition: BoundCondition): Promise<BoundCondition> {
  const grams = gramsOf(term);
  if (!grams.length) return condition;
  const { scope, always } = index;
  /** The grams' rows of `gram` (and of `always`), in the scope, as `alias`. */
  const rowsOf = (gram: string, alias: string) => {
    const a = trusted(alias);
    const inScope = scope ? sqlFragment`${a}.${trusted(scope.column)} = ${scope.value} AND ` : trusted('');
    return sqlFragment`${trusted(index.grams)} AS ${a} WHERE ${inScope}${always ? sqlFragment`${a}.gram IN (${[gram, always]})` : sqlFragment`${a}.gram = ${gram}`}`;
  };
  const records = sqlFragment`${trusted(index.records)}${scope ? sqlFragment` WHERE ${trusted(scope.column)} = ${scope.value}` : trusted('')}`;
  const explained = joined([...grams.map((g) => sqlFragment`SELECT 1 FROM ${rowsOf(g, 'g')}`), sqlFragment`SELECT 1 FROM ${records}`], ' UNION ALL ');
  const plan = await select<{ id: number; rows: number | string | null }>(`EXPLAIN ${sqlText(explained)}`, explained.replacements);
  const estimate = (id: number) => Number(plan.find((r) => Number(r.id) === id)?.rows ?? NaN);
  const [rarest, ...others] = narrowingGrams(grams.map((g, i) => ({ gram: g, n: estimate(i + 1) })), estimate(grams.length + 1), index.narrowsBelow);
  if (rarest === undefined) return condition;
  const owner = trusted(index.owner);
  const holdingOthers = others.map((g) => sqlFragment` AND EXISTS (SELECT 1 FROM ${rowsOf(g, 'o')} AND o.${owner} = r.${owner})`);
  const holders = sqlFragment`SELECT r.${owner} AS id FROM ${rowsOf(rarest, 'r')}${joined(holdingOthers, '')} LIMIT ${FEW_HOLDERS + 1}`;
  const few = await select<{ id: number }>(sqlText(holders), holders.replacements);
  const narrowed = few.length > FEW_HOLDERS ? sqlCondition`id IN (SELECT r.${owner} FROM ${rowsOf(rarest, 'r')})`
    : few.length ? sqlCondition`id IN (${few.map((r) => Number(r.id))})` : sqlCondition`1 = 0`;
  return sqlCondition`${allOf([narrowed, condition])}`;
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
