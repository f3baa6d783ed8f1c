import type { WhereOptions } from 'sequelize';
import { Ticket } from '../../db/models';
import { whereSql as renderWhere } from '../../db/whereSql';
import { select } from '../../db/select';
import { NO_INTERSECTIONS, NO_SEMIJOINS, afterAnchor, anchorOf, type Anchor } from '../../db/load';
import { keysetCondition } from '../../db/keyset';
import { invalid } from '../../errors';
import type { ListPageInput, ListResult } from '../../http/resource';
import { allOf, joined, sqlCondition, sqlFragment, sqlText, trusted, type BoundCondition } from '../../db/sql';
import { unassigned } from './conditions';
import { departmentsBelow } from './departmentsBelow';
import { countWithinView, type DepartmentCounters, type OperatorView } from './operatorVisibility';
import { DAY, DAY_COLUMNS } from '../../../migrations/026_ticket_day_counts';
import { DAY_FILTER_COLUMNS, DAY_FILTER_PAIRS, DAY_FLAG_COLUMNS, pairDim } from '../../../migrations/028_ticket_day_filter_counts';
import { DAY_SPAN, FOLDED_SLOT } from '../../../migrations/052_ticket_span_counts';
import { ORDER_DAY_COLUMNS, VALUE_DAYS, orderDayCol } from '../../../migrations/061_ticket_day_order_counts';
import { CUSTOMER_ORDER_COL } from '../../../migrations/062_ticket_customer_order_counts';
import { MARKED_ORDERS, keyIs, markCol, type MarkedOrder } from '../../../migrations/063_ticket_order_marks';
import { ASSIGNEE_LIST } from '../../../migrations/030_ticket_assignee_list';
import { TAG_LIST } from '../../../migrations/082_ticket_tag_list';
import { LINK_LIST_COPIED, linkListOrders, listColumnOf } from '../../../migrations/083_link_list_orders';
import { TRASHED } from '../../../migrations/084_link_list_trash';
import { CUSTOMER_UPDATED_INDEX } from '../../../migrations/085_customer_updated_index';
import { ORGANISATION_INDEX, ORGANISATION_UPDATED_INDEX } from '../../../migrations/086_ticket_organisation';
import { COVERED_SORTS } from '../../../migrations/088_subject_index_holds_counted';
import { MARK_FILTER_COLUMNS } from '../../../migrations/089_ticket_mark_filter_counts';
import { CUSTOMER_SUBJECT_INDEX, ORGANISATION_SUBJECT_INDEX } from '../../../migrations/090_customer_subject_indexes';
import { TIME_DELTA_SHIFTS } from '../../../migrations/095_ticket_time_order_filter_deltas';
import { DEPARTMENT_UPDATED_INDEX } from '../../../migrations/097_department_updated_index';
import { MAX_ID } from '../../lib/validation';
import { NARROWING_PARAMS } from './listFilters';
import { oneOptionNamed } from '../../customfields/values';
import { searchEngine } from './search/engine';
import { listedSearch } from './search/listed';

/**
 * The ticket list's page and `count` at a million tickets (docs/performance.md): two statements
 * whatever the filters, sort or page (three with `after_id`; one for a search the engine answers
 * alone, listedSearchPage).
 *
 * - `count`: a list narrowed by nothing but status, priority, department, brand, channel,
 *   internal, locked and `assigned=-1` (the trash too) sums the counters of migrations 018 and 025
 *   (`ticket_list_counts`, kept exact by triggers); a range of created_at or updated_at, alone or
 *   with a status and one of those (or two of priority, department, brand and channel), sums the
 *   day counters of migrations 026-028, 054 and 055 and COUNTs its partial first and last days;
 *   one operator's tickets (`assigned=<id>`, and a status) sum migration 029's counters, one
 *   customer's or several (`user`, and a status) migration 035's, and organisations' (and a status) their
 *   members' rows of them; one option of a ticket field's (`customfield`, and counted filters)
 *   migrations 072 and 076's, one tag's migration 081's; several operators' or tags' the largest
 *   one's counters and the others' link list entries (severalCount); any other filter counts its
 *   matches through its index.
 * - The page: a deferred join. The ids of the page come from an index alone (the sort column's
 *   `tickets_list_<column>` index, which also holds the equality filters' columns for the usual
 *   orders), then the page's rows by primary key (STRAIGHT_JOIN: the page first, whatever the
 *   table's size): a deep `start` skips index entries, not rows.
 *   Which index: walking the sort index reads about (start + limit) × total / matches entries;
 *   reading the matches through a filter's own index and sorting them reads `matches`. With the
 *   counters' exact figures the page takes the walk when it reads fewer entries, else leaves the
 *   choice to the optimiser (a filter's index, then a sort of at most √((start + limit) × total)
 *   matches). One operator's or tag's tickets, or several, listed or trashed, are a range of
 *   their link list (migrations 030, 031, 082, 083 and 084) in any order, after an `after_id` too
 *   (LINK_LISTS). One department's in `updated_at` order (the narrowest counted filter), a range
 *   of its own index (migration 097, departmentRange).
 * - `after_id` (keyset paging, beyond the spec): the page after that ticket in the list's order,
 *   whatever the order column: `(column, id)` past the ticket's own, an index range.
 */

/**
 * The filters on a column of the ticket that the counters hold: a list narrowed only by these (and
 * `assigned=-1`) reads its count from them. (Also the search engine's column filters: ./search/listed.ts.)
 */
const COUNTED_FILTERS: Record<string, string> = {
  status: 'status_id', priority: 'priority_id', department: 'department_id', brand: 'brand_id', channel: 'channel_id', internal: 'internal', locked: 'locked',
};
/**
 * The index that holds exactly a counted filter's listed tickets (`assigned`: the unassigned), in
 * id order for one value.
 */
const FILTER_INDEXES: Record<string, string> = {
  status: 'tickets_list_status_id', priority: 'tickets_list_priority_id', department: 'tickets_list_department_id', brand: 'tickets_list_brand_id',
  channel: 'tickets_list_channel_id', internal: 'tickets_internal', locked: 'tickets_locked', assigned: 'tickets_filter_assigned',
};
/** Every other list parameter that narrows the list (whatever filter is added to the list's). */
const OTHER_FILTERS = NARROWING_PARAMS.filter((k) => !(k in COUNTED_FILTERS));

const given = (p: Record<string, any>, k: string) => p[k] !== undefined && p[k] !== null;

/** The statuses a list asks for (null: any). */
const statusesOf = (p: Record<string, any>): number[] | null => (given(p, 'status') ? [p.status].flat() : null);

/**
 * `assigned=-1` alone (no operator beside it): the unassigned tickets, `assigned = 0` in the
 * counters as on tickets (migration 025). Operators' ids are counted by their matches.
 */
const unassignedOnly = (p: Record<string, any>): boolean => {
  // A list's parameter is a list of ids; a saved filter's condition (conditions.ts, listFiltersOf) one id.
  const ids = given(p, 'assigned') ? [p.assigned].flat() : [];
  return ids.length === 1 && ids[0] === -1;
};

/**
 * The one person or tag a list is narrowed to, alone or with `status`: `assigned=<one operator>`,
 * whose count migration 029's counters per operator, state, status and slot hold (a ticket of two
 * operators is in each one's rows, so one operator at a time) and whose orders migration 030's
 * list; `user=<one customer>` (migration 035's counters); `tag=<one tag>`, whose orders migration
 * 082's list. Null otherwise.
 */
function onePerson(p: Record<string, any>, name: 'assigned' | 'user' | 'tag'): number | null {
  const ids = withStatusOnly(p, name);
  return ids?.length === 1 ? ids[0] : null;
}

/**
 * One operator's or one tag's tickets of some customers or organisations: `assigned` (not -1) or
 * `tag` of one id beside `user`, `user_email` or `organisation`, and counted filters whose columns
 * the link lists copy at most (a status, a priority, a department, a brand, a channel). The link
 * list, the key, the list's column of the customers or organisations (`customer_id`, migration
 * 083; `organisation_id`, 094) and the condition on it; null otherwise.
 */
function linkOfPeople(p: Record<string, any>): { list: LinkList; key: number; column: 'customer_id' | 'organisation_id'; people: BoundCondition } | null {
  const named = (['user', 'user_email', 'organisation'] as const).filter((k) => given(p, k));
  const links = (['assigned', 'tag'] as const).filter((k) => given(p, k));
  if (named.length !== 1 || links.length !== 1) return null;
  const [name, link] = [named[0], links[0]];
  const keys = [p[link]].flat().map(Number);
  if (keys.length !== 1 || !(keys[0] > 0)) return null;
  if (!NARROWING_PARAMS.every((k) => !given(p, k) || k === name || k === link || LIST_COPIED_FILTERS.includes(k))) return null;
  const column = name === 'organisation' ? 'organisation_id' : 'customer_id';
  // An address: the persons it is one of.
  if (name === 'user_email') return { list: LINK_LISTS[link], key: keys[0], column, people: sqlCondition`customer_id IN (${personsOf(addressOf(p))})` };
  const ids = [p[name]].flat().map(Number);
  if (!ids.length || !ids.every((id) => id > 0)) return null;
  return { list: LINK_LISTS[link], key: keys[0], column, people: sqlCondition`${trusted(column)} IN (${ids})` };
}

/** `assigned` of several operators' ids (no -1) or `tag` of several tags, alone or with `status`: their ids, or null. */
function severalOf(p: Record<string, any>, name: 'assigned' | 'tag'): number[] | null {
  const ids = withStatusOnly(p, name);
  return ids && ids.length > 1 ? ids : null;
}

/** `user_email` lower-cased, as its filter reads it. */
const addressOf = (p: Record<string, any>): string => String(p.user_email).toLowerCase();

/** The persons an address is one of, primary or additional (person_emails, as the `user_email` filter reads it). */
const personsOf = (email: string) => sqlFragment`SELECT user_id FROM person_emails WHERE email = ${email}`;

/** `user_email` (addressOf) when it narrows the list alone or with counted filters; null otherwise. */
function emailAmongCounted(p: Record<string, any>): string | null {
  return given(p, 'user_email') && countedByCounters({ ...p, user_email: undefined }) ? addressOf(p) : null;
}

/**
 * The ids of `name` (none of them -1) when counted filters alone are beside it, whose count the
 * counters per organisation (migration 091) or customer (092) hold; null otherwise.
 */
function amongCounted(p: Record<string, any>, name: 'organisation' | 'user'): number[] | null {
  const ids = given(p, name) ? [p[name]].flat().map(Number) : [];
  return ids.length && ids.every((id) => id > 0) && countedByCounters({ ...p, [name]: undefined }) ? ids : null;
}

/** The counters per organisation (migration 091) and per customer (035, widened by 092), by the list's parameter. */
const KEYED_COUNTS = { organisation: ['ticket_organisation_counts', 'organisation_id'], user: ['ticket_user_counts', 'user_id'] } as const;

/** The ids of `name` (none of them -1) when it narrows the list alone or with `status`; null otherwise. */
function withStatusOnly(p: Record<string, any>, name: string): number[] | null {
  const ids = given(p, name) ? [p[name]].flat().map(Number) : [];
  if (!ids.length || !ids.every((id) => id > 0)) return null;
  return NARROWING_PARAMS.every((k) => !given(p, k) || k === name || k === 'status') ? ids : null;
}

/**
 * The most customers or organisations whose own ranges a page merges (rangesPage in
 * listTicketPage): a statement of a subquery per key; beyond, the optimiser's page.
 */
const MAX_MERGED_RANGES = 64;

/**
 * The orders a customer's listed tickets are a range of, by the customer index that holds them
 * so: migration 032's (user_id, deleted_at, merged_into_id, id, status_id, ...), 085's
 * (user_id, deleted_at, merged_into_id, updated_at, id, status_id) and 090's (user_id,
 * deleted_at, merged_into_id, subject, id: a status beside the customer is tested on each entry's
 * ticket). The customer order (user_id, then id) is one customer's id order: 032's too.
 */
const CUSTOMER_RANGES: ReadonlyMap<string, string> = new Map([
  ['id', 'tickets_filter_user_id'], ['updated_at', CUSTOMER_UPDATED_INDEX], ['subject', CUSTOMER_SUBJECT_INDEX], ['user_id', 'tickets_filter_user_id'],
]);

/** The same orders of an organisation's listed tickets, by migrations 086's and 090's indexes of `tickets.organisation_id`. */
const ORGANISATION_RANGES: ReadonlyMap<string, string> = new Map([
  ['id', ORGANISATION_INDEX], ['updated_at', ORGANISATION_UPDATED_INDEX], ['subject', ORGANISATION_SUBJECT_INDEX],
]);

/** A column of `tickets` whose values' listed tickets are ranges of indexes, by order. */
interface Ranged { key: 'user_id' | 'organisation_id'; ranges: ReadonlyMap<string, string> }
const BY_CUSTOMER: Ranged = { key: 'user_id', ranges: CUSTOMER_RANGES };
const BY_ORGANISATION: Ranged = { key: 'organisation_id', ranges: ORGANISATION_RANGES };

/** A table of counters per key, state, status (some per every counted column: 076, 081, 091, 092) and slot, and the condition on its rows. */
interface KeyedCounters { table: 'ticket_assignee_counts' | 'ticket_user_counts' | 'ticket_option_counts' | 'ticket_tag_counts' | 'ticket_organisation_counts'; where: BoundCondition }

/** The rows of `table` of `key` (a person's `user_id`, an organisation's id, an option's `field_id` and `option_id`), of the statuses asked for (null: any). */
const countersOf = (table: KeyedCounters['table'], key: BoundCondition, statuses: unknown[] | null): KeyedCounters =>
  ({ table, where: statuses ? sqlCondition`${key} AND status_id IN (${statuses})` : key });

/** A person's rows of ticket_assignee_counts or ticket_user_counts. */
const personKey = (userId: number) => sqlCondition`user_id = ${userId}`;

/**
 * One person's tickets (onePerson: `assigned` or `user`, and a status) or one option's or tag's
 * (oneLinked, and counted filters), as their counters, or null (a saved filter's ticket_count: ../filter.ts).
 */
export async function keyedCounters(p: Record<string, any>): Promise<KeyedCounters | null> {
  const statuses = statusesOf(p);
  for (const [name, table] of [['assigned', 'ticket_assignee_counts'], ['user', 'ticket_user_counts']] as const) {
    const person = onePerson(p, name);
    if (person !== null) return countersOf(table, personKey(person), statuses);
  }
  const linked = await oneLinked(p);
  return linked && linkedCounters(linked, given(p, 'department') ? { ...p, department: await departmentsBelow([p.department].flat()) } : p);
}

/** The counters of one option or tag (oneLinked) and the condition on their rows of it. */
interface Linked { table: DepartmentCounters['table'] & KeyedCounters['table']; key: BoundCondition }

/**
 * An option's or a tag's rows of its counters that the counted filters beside it select
 * (migrations 076 and 081 keep the list counters' columns): `p`'s `department` with the
 * departments below it.
 */
const linkedCounters = ({ table, key }: Linked, p: Record<string, any>): KeyedCounters & DepartmentCounters =>
  ({ table, where: sqlCondition`${key} AND ${allCounted(counterConditions(p))}` });

/** The tickets the counters hold, listed or trashed. */
async function countersSum(counters: KeyedCounters, trashed: boolean): Promise<number> {
  return (await countersAndTotal(counters, trashed, false)).count;
}

/** The listed or trashed tickets (the counted list's total: ticket_list_counts), as a column `total`. */
const totalOf = (trashed: boolean) => sqlFragment`(SELECT COALESCE(SUM(n), 0) FROM ticket_list_counts WHERE state = ${trashed ? 1 : 0}) AS total`;

/** countersSum, and with `withTotal` the tickets of the list unfiltered (0 without), in the same statement. */
async function countersAndTotal({ table, where }: KeyedCounters, trashed: boolean, withTotal: boolean): Promise<{ count: number; total: number }> {
  const total = withTotal ? sqlFragment`, ${totalOf(trashed)}` : trusted('');
  const sum = sqlFragment`SELECT COALESCE(SUM(n), 0) AS matches${total} FROM ${trusted(table)} WHERE ${where} AND state = ${trashed ? 1 : 0}`;
  const [r] = await select<{ matches: string | number | null; total?: string | number | null }>(sqlText(sum), sum.replacements);
  return { count: Number(r?.matches ?? 0), total: Number(r?.total ?? 0) };
}

/**
 * The one option of a ticket field a list is narrowed to (`customfield` naming one option field,
 * alone or with counted filters), whose count migration 076's counters hold; null otherwise.
 */
async function oneOption(p: Record<string, any>): Promise<{ fieldId: number; optionId: number } | null> {
  if (!given(p, 'customfield') || !countedByCounters({ ...p, customfield: undefined })) return null;
  return oneOptionNamed('ticket', p.customfield);
}

/** The one tag a list is narrowed to (`tag` of one id, alone or with counted filters), whose count migration 081's counters hold; null otherwise. */
function oneTag(p: Record<string, any>): number | null {
  const ids = given(p, 'tag') ? [p.tag].flat() : [];
  if (ids.length !== 1 || !(Number(ids[0]) > 0) || !countedByCounters({ ...p, tag: undefined })) return null;
  return Number(ids[0]);
}

/** One option of a ticket field (oneOption) or one tag (oneTag) beside counted filters: its counters; null otherwise. */
export async function oneLinked(p: Record<string, any>): Promise<Linked | null> {
  const option = await oneOption(p);
  if (option) return { table: 'ticket_option_counts', key: sqlCondition`field_id = ${option.fieldId} AND option_id = ${option.optionId}` };
  const tag = oneTag(p);
  return tag === null ? null : { table: 'ticket_tag_counts', key: sqlCondition`tag_id = ${tag}` };
}

/** A table of link rows with copies of their tickets' columns, and the orders it holds with their index ((key, listed, <column>, ticket_id, status_id)). */
interface LinkList { table: string; key: string; orders: ReadonlyMap<string, string>; /** The counters of each key's tickets (migrations 029, 081). */ counts: string }

/**
 * The link lists: one operator's tickets (`ticket_assignee_list`, migrations 030, 031 and 083) and
 * one tag's (`ticket_tag_list`, migrations 082 and 083), each in every order of the list.
 */
const LINK_LISTS: Record<'assigned' | 'tag', LinkList> = {
  assigned: { table: ASSIGNEE_LIST.list, key: ASSIGNEE_LIST.key, orders: linkListOrders(ASSIGNEE_LIST), counts: 'ticket_assignee_counts' },
  tag: { table: TAG_LIST.list, key: TAG_LIST.key, orders: linkListOrders(TAG_LIST), counts: 'ticket_tag_counts' },
};

/** A link list's `listed` of the tickets a list shows: 1, or in the trash 2 (migration 084). */
const listedState = (trashed: boolean): number => (trashed ? TRASHED : 1);

/**
 * The number of listed (or trashed) tickets of several operators or tags (`keys`, and `statuses`), a ticket of
 * two of them once, in one statement. When the largest one holds most of their entries (its
 * counters, migrations 029 and 081, say which), the union is the largest one's tickets (its
 * counters: no entry read) and the others' tickets that are not the largest one's (their entries
 * of the link list, each looked up in the largest one's id index; a ticket's rows agree on
 * `listed` and the status, copies of its own); CASE evaluates only the branch it takes.
 * Otherwise a COUNT of the distinct tickets of all their entries. A look-up costs about eight
 * entries read in order (at 1M: 20,000 of them 22 ms, 20,000 entries 2.6 ms; the distinct count
 * of 40,000 entries 15 ms), hence the third. Two tags of 100,000 and 1,000 tickets: 1,000
 * look-ups, 3 ms, where the distinct count of 101,000 entries took 35-42 ms.
 */
async function severalCount({ table, key, counts, orders }: LinkList, keys: number[], statuses: unknown[] | null, trashed: boolean): Promise<number> {
  const ofStatuses = (alias: string) => (statuses ? ` AND ${alias}status_id IN (:statuses)` : '');
  const counted = `${counts} WHERE ${key} IN (:keys) AND state = ${trashed ? 1 : 0}${ofStatuses('')}`;
  // `table`, `key`, `counts` and the index are the code's own names (LINK_LISTS), never a request's.
  const branches = keys.map((_, i) => {
    const rest = keys.filter((k) => k !== keys[i]);
    const others = rest.length ? `(SELECT COUNT(${rest.length > 1 ? 'DISTINCT a.ticket_id' : '*'}) FROM ${table} a
        LEFT JOIN ${table} b FORCE INDEX (${orders.get('id')}) ON b.${key} = :key${i} AND b.listed = :listed AND b.ticket_id = a.ticket_id
        WHERE a.${key} IN (:rest${i}) AND a.listed = :listed${ofStatuses('a.')} AND b.ticket_id IS NULL)` : '0';
    return `WHEN s.top = :key${i} THEN s.size + ${others}`;
  });
  const [r] = await select<{ n: number | string | null }>(
    `SELECT CASE WHEN (s.total - s.size) * 3 >= s.total
       THEN (SELECT COUNT(DISTINCT ticket_id) FROM ${table} WHERE ${key} IN (:keys) AND listed = :listed${ofStatuses('')})
       ${branches.join(' ')} END AS n
     FROM (SELECT ${key} AS top, SUM(n) AS size, (SELECT SUM(n) FROM ${counted}) AS total FROM ${counted} GROUP BY ${key} ORDER BY SUM(n) DESC, ${key} LIMIT 1) s`,
    { keys, statuses, listed: listedState(trashed), ...Object.fromEntries(keys.flatMap((k, i) => [[`key${i}`, k], [`rest${i}`, keys.filter((x) => x !== k)]])) },
  );
  return Number(r?.n ?? 0);
}

/** The counted filters whose column the link lists copy (status, priority, department, brand, channel): testable on a list's own rows. */
const LIST_COPIED_FILTERS = Object.keys(COUNTED_FILTERS).filter((name) => LINK_LIST_COPIED.includes(COUNTED_FILTERS[name]));

/** Whether the counters answer the list's count: only counted filters given. */
export const countedByCounters = (p: Record<string, any>): boolean =>
  !OTHER_FILTERS.some((k) => given(p, k) && !(k === 'assigned' && unassignedOnly(p)));

/** A list narrowed by one date column's range, besides counted filters at most (DATES: min and max inclusive). */
interface DateRange { column: (typeof DAY_COLUMNS)[number]; min: number; max: number }

/** The largest value an INT UNSIGNED time column holds: the range of a missing `_max`. */
const NO_MAX = 4_294_967_295;

/** The list's date range, when the day counters can count it: one date column, no filter but counted ones. */
function dateRange(p: Record<string, any>): DateRange | null {
  const columns = DAY_COLUMNS.filter((c) => given(p, `${c}_min`) || given(p, `${c}_max`));
  if (columns.length !== 1) return null;
  if (OTHER_FILTERS.some((k) => given(p, k) && !/^(created|updated)_at_m(in|ax)$/.test(k) && !(k === 'assigned' && unassignedOnly(p)))) return null;
  const column = columns[0];
  return { column, min: p[`${column}_min`] ?? 0, max: p[`${column}_max`] ?? NO_MAX };
}

/**
 * The count of a date range from the day counters (migrations 026-028, 054, 055), the bounds of the
 * range's ticket ids and the total of the listed (or trashed) tickets, in one statement: the whole
 * UTC days inside [min, max] are a sum of counters (of the statuses, or of the one other counted
 * filter's values or a pair's, asked for; a row per span of 32 days among them, migrations 052 and
 * 053, so an open end or a long range reads about as many rows as a month); the partial first and
 * last days (or the range, when it holds no whole day: less than two days) a COUNT over the list
 * index's range. With other counted filters beside the dates (three besides a status, or a flag
 * beside another: dayFiltered), the count is a COUNT of the matches (the counters hold one filter
 * column at a time or a pair of value columns, per status: migrations 054 and 055).
 */
async function datedCount(range: DateRange, p: Record<string, any>, where: WhereOptions, replacements: Record<string, unknown>, trashed: boolean) {
  const { column, min, max } = range;
  const firstWhole = Math.ceil(min / DAY);
  const lastWhole = Math.floor((max + 1) / DAY) - 1;
  const parts: Array<[number, number]> = firstWhole > lastWhole ? [[min, max]] : [
    ...(min < firstWhole * DAY ? [[min, firstWhole * DAY - 1] as [number, number]] : []),
    ...(max >= (lastWhole + 1) * DAY ? [[(lastWhole + 1) * DAY, max] as [number, number]] : []),
  ];
  // `column` is created_at or updated_at (DAY_COLUMNS), never a value from the request.
  const listed = trashed ? 'deleted_at IS NOT NULL' : 'deleted_at IS NULL';
  const hint = trashed ? '' : ` FORCE INDEX (${sortIndex(column)})`;
  // The statuses asked for (the day counters hold them: migration 027).
  const statuses = statusesOf(p);
  const ofStatuses = statuses ? ' AND status_id IN (:dayStatuses)' : '';
  // Another counted filter (or a pair of them) beside the dates (and the statuses): its whole days
  // from migration 028's counters (per status, 054; pairs, 055), its partial days COUNTed with its condition.
  const other = dayFiltered(p);
  const filter = other?.length ? dayFilterSum(other, p, ofStatuses) : null;
  const cond = filter ? allCounted(counterConditions(p)) : null;
  const partial = parts.map((_, i) => `(SELECT COUNT(*) FROM tickets${hint} WHERE ${listed} AND merged_into_id IS NULL AND ${column} BETWEEN :partFrom${i} AND :partTo${i}${ofStatuses}${cond ? ` AND ${sqlText(cond)}` : ''})`);
  const values: Record<string, unknown> = { ...filter?.sum.replacements, ...cond?.replacements };
  parts.forEach(([a, b], i) => { values[`partFrom${i}`] = a; values[`partTo${i}`] = b; });
  const whole = filter ? (filter.complement ? `d.whole - ${sqlText(filter.sum)}` : sqlText(filter.sum)) : 'd.whole';
  const byDays = countedByDays(p);
  const matches = byDays ? [whole, ...partial].join(' + ') : `(SELECT COUNT(*) FROM \`tickets\` AS \`Ticket\` WHERE ${whereSql(where)})`;
  // A COUNT of the matches: without index merge intersections. Given the dates and two counted
  // filters of many tickets each (a year, a department of 999,000 and a status, measured before
  // migration 054 summed that pair), the optimiser intersected four single-column indexes row by
  // row (0.66 s at 1M) where the date's list index, which holds every counted column, reads the
  // range's entries alone (0.12 s); with a filter of few tickets it still takes that filter's index.
  const switches = byDays ? '' : NO_INTERSECTIONS;
  const [firstDay, lastDay] = [Math.floor(min / DAY), Math.floor(max / DAY)];
  const counters = `col = :dayCol AND state = :dayState${ofStatuses}`;
  const spanned: SpannedCounters = { days: 'ticket_day_counts', spans: 'ticket_span_counts', bounds: true, where: () => counters };
  // The days' units: each day of the range outside its whole spans (a day of the whole days, or
  // not: `w`), and each whole span (its row, and its days' rows not folded yet).
  const [r] = await select<{ matches: string | number; lo: number | null; hi: number | null; total: string | number | null }>(
    `${switches}SELECT ${matches} AS matches, d.lo, d.hi, (SELECT SUM(n) FROM ticket_list_counts WHERE state = :dayState) AS total
     FROM (SELECT COALESCE(SUM(IF(w, n, 0)), 0) AS whole, MIN(IF(n > 0, lo_id, NULL)) AS lo, MAX(IF(n > 0, hi_id, NULL)) AS hi FROM (
       SELECT day BETWEEN :firstWhole AND :lastWhole AS w, SUM(n) AS n, MIN(lo_id) AS lo_id, MAX(hi_id) AS hi_id FROM ticket_day_counts
         WHERE ${counters} AND ${outsideSpans(':firstDay', ':lastDay')} GROUP BY day
       UNION ALL
       SELECT 1, SUM(n), MIN(lo_id), MAX(hi_id) FROM (${spanRows(spanned, 'span, n, lo_id, hi_id', ' AND span BETWEEN :spanFirst AND :spanLast')}) s
       GROUP BY span) units) d`,
    {
      ...replacements, ...values, dayCol: DAY_COLUMNS.indexOf(column), dayState: trashed ? 1 : 0, dayStatuses: statuses,
      firstWhole, lastWhole, firstDay, lastDay, ...wholeSpans(firstDay, lastDay, firstWhole, lastWhole),
    },
  );
  return { count: Number(r.matches), lo: r.lo === null ? null : Number(r.lo), hi: r.hi === null ? null : Number(r.hi), total: Number(r.total ?? 0) };
}

/**
 * A date range's days [first, last] as the spans of 32 days wholly among its whole days
 * [firstWhole, lastWhole] (`spanFirst` to `spanLast`: read from migrations 052 and 053's rows,
 * one per span, however long the range) and the days before and after them (to `headLast`, from
 * `tailFirst`: at most 31 and a partial day at each end, read a row per day). No whole span: the
 * days are all outside (`spanFirst` > `spanLast`).
 */
function wholeSpans(first: number, last: number, firstWhole: number, lastWhole: number) {
  const spanFirst = Math.ceil(firstWhole / DAY_SPAN);
  const spanLast = Math.floor((lastWhole + 1) / DAY_SPAN) - 1;
  if (spanFirst > spanLast) return { spanFirst: 1, spanLast: 0, headLast: last, tailFirst: last + 1 };
  return { spanFirst, spanLast, headLast: spanFirst * DAY_SPAN - 1, tailFirst: (spanLast + 1) * DAY_SPAN };
}

/** The days of [from, to] outside the whole spans (wholeSpans): two ranges of the key at most. */
const outsideSpans = (from: string, to: string): string => `day BETWEEN ${from} AND ${to} AND (day <= :headLast OR day >= :tailFirst)`;

/** The counted filters a list gives (`assigned=-1` as `assigned`). */
const countedGiven = (p: Record<string, any>): string[] => [
  ...Object.keys(COUNTED_FILTERS).filter((k) => given(p, k)), ...(unassignedOnly(p) ? ['assigned'] : []),
];

/**
 * The counted filters besides status that a list gives, when the day counters hold their rows
 * together: none, one, or a pair of DAY_FILTER_PAIRS (migration 055: two of priority, department,
 * brand and channel). Null otherwise (a flag with another filter, three filters).
 */
function dayFiltered(p: Record<string, any>): string[] | null {
  const other = countedGiven(p).filter((k) => k !== 'status');
  if (other.length <= 1) return other;
  return other.length === 2 && pairDim(COUNTED_FILTERS[other[0]] ?? '', COUNTED_FILTERS[other[1]] ?? '') >= 0 ? other : null;
}

/** Whether a dated list's count comes from the day counters: a status and the filters dayFiltered allows beside the dates. */
const countedByDays = (p: Record<string, any>): boolean => dayFiltered(p) !== null;

/** Whether a dated list is narrowed by its dates alone (its range's index entries are its matches). */
const datesAlone = (p: Record<string, any>): boolean => countedGiven(p).length === 0;

/**
 * The sum of migration 028's counters over the range's whole days for one counted filter (not
 * status) or a pair of them (dayFiltered): its values (a department with those below it), of the
 * statuses asked for (`ofStatuses`, migration 054's column; empty: all). A flag's rows count the
 * tickets that have it set: asked for those without it, the count is the days' total (of those
 * statuses) less the sum (`complement`).
 */
function dayFilterSum(names: string[], p: Record<string, any>, ofStatuses: string): { sum: BoundCondition; complement: boolean } {
  const { rows, complement } = dayFilterRows(names, p);
  // The whole days outside the whole spans, then the spans' rows and their days' rows not folded yet (wholeSpans).
  const of = sqlCondition`col = :dayCol AND state = :dayState AND ${rows}${trusted(ofStatuses)}`;
  const spanned: SpannedCounters = { ...FILTER_COUNTERS, where: () => sqlText(of) };
  const sum = sqlCondition`(SELECT COALESCE(SUM(n), 0) FROM (
      SELECT n FROM ticket_day_filter_counts WHERE ${of} AND ${trusted(outsideSpans(':firstWhole', ':lastWhole'))}
      UNION ALL ${trusted(spanRows(spanned, 'n', ' AND span BETWEEN :spanFirst AND :spanLast'))}) u)`;
  return { sum, complement };
}

/** The first column of a pair's dim (migration 055): its rows hold it in `val`, the second in `val2`. */
const pairFirst = (dim: number): string => DAY_FILTER_PAIRS[dim - DAY_FILTER_COLUMNS.length][0];

/**
 * The rows of migration 028's counters for one counted filter (not status): its column's, of its
 * values; or for a pair of them (dayFiltered): the pair's, of both columns' values (migration
 * 055). A flag's rows count the tickets that have it set (`complement`: asked for the others).
 */
function dayFilterRows(names: string[], p: Record<string, any>): { rows: BoundCondition; complement: boolean } {
  if (names.length === 2) {
    const dim = pairDim(COUNTED_FILTERS[names[0]], COUNTED_FILTERS[names[1]]);
    // val holds the pair's first column, val2 its second.
    const [first, second] = pairFirst(dim) === COUNTED_FILTERS[names[0]] ? names : [names[1], names[0]];
    return { rows: sqlCondition`dim = ${trusted(String(dim))} AND val IN (${[p[first]].flat()}) AND val2 IN (${[p[second]].flat()})`, complement: false };
  }
  const [name] = names;
  const column = name === 'assigned' ? 'assigned' : COUNTED_FILTERS[name];
  const dim = trusted(String(DAY_FILTER_COLUMNS.indexOf(column as (typeof DAY_FILTER_COLUMNS)[number])));
  const flag = DAY_FLAG_COLUMNS.includes(column);
  const v = name === 'assigned' ? 0 : p[name];
  const values = flag ? trusted('1') : [v].flat();
  return { rows: sqlCondition`dim = ${dim} AND val IN (${values}) AND val2 = 0`, complement: flag && Number(v) === 0 };
}

/**
 * What a row read walking the primary key in id order (the date tested on the row: the wide id
 * index does not hold it) costs against an entry of the date's index read and sorted: about 0.2-0.4
 * µs against 0.7-1 µs at 100k tickets (docs/performance.md, "Dates"), so about half.
 */
const ROW_PER_SORTED = 0.5;

/** The counters' condition of each counted filter given, by name (the same columns as on tickets; `assigned`: the unassigned). */
function counterConditions(p: Record<string, any>): Array<[string, BoundCondition]> {
  const parts: Array<[string, BoundCondition]> = [];
  if (unassignedOnly(p)) parts.push(['assigned', unassigned()]);
  for (const [name, column] of Object.entries(COUNTED_FILTERS)) {
    if (!given(p, name)) continue;
    const col = trusted(column);
    const v = p[name];
    parts.push([name, Array.isArray(v) ? sqlCondition`${col} IN (${v})` : sqlCondition`${col} = ${v}`]);
  }
  return parts;
}

/** The counters' condition for all the counted filters given. */
const allCounted = (counted: Array<[string, BoundCondition]>): BoundCondition => allOf([trusted('1 = 1'), ...counted.map(([, c]) => c)]);

/**
 * The condition on `ticket_list_counts` that list parameters `p` are (their `department` as given,
 * the departments below it added here), or null when the counters do not answer them alone.
 */
export async function countersCondition(p: Record<string, any>): Promise<BoundCondition | null> {
  if (!countedByCounters(p)) return null;
  return allCounted(counterConditions(given(p, 'department') ? { ...p, department: await departmentsBelow([p.department].flat()) } : p));
}

/** The list's WHERE (Sequelize's rendering of the filters, subquery literals included), without the keyword. */
function whereSql(where: WhereOptions): string {
  return renderWhere(Ticket, where, '`Ticket`') || '1 = 1';
}

/** The index a page walks for an order column (deleted_at: listed tickets all have none, so the id order). */
export const sortIndex = (column: string) => `tickets_list_${column === 'deleted_at' ? 'id' : column}`;

/**
 * Where a deep page of the list starts, unfiltered or narrowed by a status, one other counted
 * filter (priority, department, brand, channel, or a flag, set or not) or two of those four
 * (migration 055), or a status and those, from the day counters (migrations 026-028, 051-055):
 * a page `start` tickets into a million otherwise skips that many
 * index entries (110-140 ms half-way). Summing the list's tickets per UTC day in the list's order
 * finds the day the page starts in and how many tickets come before it; the page then reads from
 * that day's edge and skips only `start` minus those. Orders by created_at and updated_at start at
 * the day's first (or, in descending order, last) second. The id order uses the created_at days'
 * ticket id bounds: it starts at the day's smallest (largest) id when no ticket of another day lies
 * on the wrong side of it (tickets made in order: ids follow created_at), and else the page is read
 * as any other. (The bounds are those of the status's tickets, or with another filter of all the
 * day's tickets of the status: a filter's counters keep none, and what holds for all holds for the matches.)
 * A value order (VALUE_ORDERS: the column, then id; unfiltered, or by a status, one counted filter
 * or its pair with the column: valueDaySource) is the id order within each value: the value and
 * its day are found together, from the value's days. A time order that may be NULL (TIME_ORDERS,
 * migration 061; unfiltered or by a status) is its NULL block in id order, then its times: its
 * counters' days are the NULL block's created_at days with their id bounds, then the times' days
 * (timeEdge). The customer order (migration 062; unfiltered or by a status) is positioned at the
 * first ticket of a customer, its counters' "days" being customers (customerEdge).
 * Finding the day reads a row per span of 32 days and status (and value of the filter or pair), then one
 * span's days (migrations 052 and 053, dayPositionSql: unfiltered, 1.2-1.7 ms at two years of
 * days or ten, where a row per past day and status took 2.8 ms at two years and 11 at ten),
 * whatever the number of tickets and the help desk's age. A page is positioned when reading to
 * it would skip `deepPaging.start` index entries or more (below that, skipping costs no more:
 * 0.2-0.4 µs an entry): its reach, or narrowed by a filter its reach times total / matches (the
 * sort index holds every listed ticket: 10,000 tickets into a priority of a quarter of them is
 * 40,000 entries, 15-23 ms). Whether a narrowed page may be that deep is told before the
 * statement from the filter's share when this process last counted it (lastShares): asked for
 * every time, an unused position costs the statement 1-3 ms. A value order narrowed by a filter is
 * positioned only while the rows its walk reads for a page's matches (`rowWalk` × limit × total /
 * count) are no more than the narrowest filter's matches (a sort of those is the other way).
 */
export const deepPaging = { start: 10_000, rowWalk: 1 };

/**
 * The share of the listed tickets each combination of counted filters matched when this process
 * last read its count (before its first count, unknown: any page but the first may be deep, for
 * a filter may match a handful of a million tickets). A hint only: a stale share asks for a
 * position that is then not used, or reads a page by skipping; either way the same page.
 */
const lastShares = new Map<string, number>();
const SHARES_KEPT = 1_000;

function recordShare(key: string, count: number, total: number) {
  if (!total) return;
  if (lastShares.size >= SHARES_KEPT && !lastShares.has(key)) lastShares.clear();
  // No match: no page to position (1: deep from `deepPaging.start`, as before a first count).
  lastShares.set(key, count ? count / total : 1);
}

/**
 * The index entries the walk of the list's sort index skips to reach `reach` of its `count` matches
 * (of `total` listed tickets: unfiltered, the count is the total, and the entries the reach).
 */
const walkedEntries = (reach: number, count: number, total: number) => (count > 0 ? (reach * total) / count : reach);

/**
 * A walk of an order's index for a page of a filter's matches reads about walkedEntries of them
 * where the matches lie along the order independently of it, and far more where they do not: at
 * 1M the benchmark's large organisation (63,000 tickets) read 16,700 to 62,300 entries for its
 * first page in the customer, `subject` and `created_at` orders (against 800 expected), and walks
 * of a million entries are possible. Reading the matches the other way (through their filter's
 * own index) and sorting them costs about as much per entry (1.85 µs against 1.1 to 2.2 µs for a
 * walked entry with its row), so a walk stops (LIMIT ROWS EXAMINED) when it has read about as
 * many entries as that way reads, and the page is read that way: at most a few times the cheaper
 * way's reads, where an unbounded walk could read every ticket. The server counts an entry of an
 * ascending walk as 3 rows examined, of a descending one as 1 (measured at 1M: 62,308 entries
 * needed 187,251, 25,049 needed 25,157), hence `perSorted` by the walk's direction. A walk that
 * tests its filter on the index entries alone (`covered`: a customer's or an organisation's, by
 * migration 087; the counted filters' in a wide order or `subject`, migrations 018, 025 and
 * 088) reads no ticket, and counts 1 row examined per entry either way (187,500 entries needed
 * 187,802), so it may go `perCovered` entries per match sorted, by what a match sorted costs.
 * Measured at 1M one statement at a time (the same hour): an entry walked 0.17-0.19 µs in a
 * narrow order's index (`subject`, before migration 088), 0.29-0.31 in a wide one's
 * (`updated_at`, with or without four filters tested on it); a match read and sorted 2.7 µs for
 * the busy customer's (one ticket in 16: a page of rows each) and 1.3-1.5 for a status's (a
 * quarter: four to a page). So `customers` (a customer's or an organisation's, in any order) 8,
 * `counted` (the narrowest counted filter's) 4: where the walk is expected to pass up to that
 * many entries per match it is the cheaper way, and stopped there it costs at most that again.
 * `perRow` and `fixed`: the statement's rows examined for the page's own rows (walkBound).
 */
export const boundedWalks = { perSorted: { ASC: 3, DESC: 1 }, perCovered: { customers: 8, counted: 4 }, perRow: 8, fixed: 16 };

/**
 * The rows a walk in `dir` may examine before it stops (LIMIT ROWS EXAMINED): as many entries as
 * the other way reads (`sorted`; `perCovered` times as many where the walk is covered, else null),
 * and the page's own rows (the derived table's written, read and sorted, and their tickets
 * joined: 14 for a page of 2 whose walk read 2 entries).
 */
const walkBound = (sorted: number, limit: number, dir: string, perCovered: number | null) =>
  Math.ceil((perCovered ?? (dir === 'DESC' ? boundedWalks.perSorted.DESC : boundedWalks.perSorted.ASC)) * sorted)
    + boundedWalks.perRow * limit + boundedWalks.fixed;

/**
 * Walks stopped at their bound, by list (its filters, order and the walk's direction): the least
 * reach (offset and limit) at which one stopped, and when. For `stoppedFor.ms` after, a page of
 * that list as deep or deeper is read the other way at once (a walk that passed its bound before
 * a reach passes it before any deeper one: the bound grows with the list's count alone); then a
 * walk is tried again, for the tickets change. A hint per process, as lastShares: the same page
 * either way.
 */
const stoppedWalks = new Map<string, { reach: number; at: number }>();
const STOPPED_KEPT = 1_000;
export const stoppedFor = { ms: 10 * 60_000 };

const walkStopped = (walk: string, reach: number): boolean => {
  const stopped = stoppedWalks.get(walk);
  return !!stopped && reach >= stopped.reach && Date.now() - stopped.at < stoppedFor.ms;
};

function stoppedWalk(walk: string, reach: number) {
  if (stoppedWalks.size >= STOPPED_KEPT && !stoppedWalks.has(walk)) stoppedWalks.clear();
  const known = stoppedWalks.get(walk);
  const fresh = known && Date.now() - known.at < stoppedFor.ms;
  stoppedWalks.set(walk, { reach: fresh ? Math.min(known.reach, reach) : reach, at: Date.now() });
}

/**
 * A statement stopped by LIMIT ROWS EXAMINED while it sorted (ER_FILSORT_ABORT): an error, where
 * one stopped while it read returns the rows it had.
 */
const sortStopped = (err: unknown): boolean => (err as { parent?: { errno?: number } }).parent?.errno === 1028;

/**
 * The day rows a deep page is positioned by: all tickets' or one other counted filter's (or a pair's), of the
 * statuses given (null: all); `complement`: all tickets' less the filter's (a flag's rows count
 * the tickets that have it set: `locked=0`, `internal=0`, `assigned=-1` are the others).
 */
interface DaySource {
  statuses: number[] | null; filter: BoundCondition | null; complement: boolean;
  /** A value order's: the column of the positioning rows that holds the value (SpannedCounters.by). */
  by?: string;
  /** A time order's filter rows: differences from column 0's rows, shifted by `shift` days (migration 095). */
  deltaOf?: { col: number; shift: number };
}

/**
 * The day rows that count a list's matches, when a deep page of it can be positioned by them: the
 * list unfiltered, or narrowed by status, or by one other counted filter or a pair of them
 * (dayFiltered), alone or with status (migrations 054 and 055).
 */
function daySource(p: Record<string, any>, filtered: boolean): DaySource | null {
  const narrowing = NARROWING_PARAMS.filter((k) => given(p, k) && k !== 'status');
  const statuses = statusesOf(p);
  if (!narrowing.length) return filtered && !statuses ? null : { statuses, filter: null, complement: false };
  const counted = dayFiltered(p);
  if (!counted || narrowing.length !== counted.length || !counted.every((k) => narrowing.includes(k))) return null;
  const { rows, complement } = dayFilterRows(counted, p);
  return { statuses, filter: rows, complement };
}

/** The columns whose order the day counters can position in: each with the day column it counts by. */
const POSITIONED: Record<string, (typeof DAY_COLUMNS)[number]> = { id: 'created_at', created_at: 'created_at', updated_at: 'updated_at' };

/**
 * The nullable time columns whose order (`column, id`, NULLs first ascending) a deep page of the
 * list, unfiltered, by status or by one other counted filter or a pair of them, is positioned in
 * (migration 061's counters, 093's and 095's of the filters): the tickets without a time (the
 * NULL block, in id order) by their created_at days and a day's id bound, as the id order; then
 * the times' days, as the created_at order (timeEdge).
 */
const TIME_ORDERS: readonly string[] = ORDER_DAY_COLUMNS;

/**
 * The customer order (`user_id`, then id), positioned by migration 062's counters (093's of one
 * other counted filter): their "days" are customers, so the running sums find the customer the
 * page starts with and the tickets of the customers before it (customerEdge).
 */
const CUSTOMER_ORDER = 'user_id';

/**
 * The rows that position a deep page in a time or the customer order (migrations 061, 062, 093
 * and 095): the list's unfiltered, by status, or by one other counted filter beside them, or in
 * a time order a pair of them too (the customer order keeps no pair's rows), else null. A time
 * order's filter rows are differences from column 0's (`deltaOf`, migration 095).
 */
function orderDaySource(p: Record<string, any>, filtered: boolean, column: string): DaySource | null {
  const days = daySource(p, filtered);
  if (!days?.filter) return days;
  if (!TIME_ORDERS.includes(column)) return dayFiltered(p)?.length === 1 ? days : null;
  const col = orderDayCol(column as (typeof ORDER_DAY_COLUMNS)[number]);
  return { ...days, deltaOf: { col: DAY_COLUMNS.indexOf('created_at'), shift: TIME_DELTA_SHIFTS[col] } };
}

/**
 * The rows that position a deep page in a string order (migrations 063 and 089): the list's
 * unfiltered or by status, or by one other counted filter beside them (its rows per stretch; no
 * pair's), else null. A flag's rows there count either value (`assigned=-1`: its rows of 0).
 */
function markDaySource(p: Record<string, any>, filtered: boolean): DaySource | null {
  const days = daySource(p, filtered);
  if (!days?.filter) return days;
  const [name, ...others] = dayFiltered(p) ?? [];
  const column = name === 'assigned' ? 'assigned' : COUNTED_FILTERS[name] ?? '';
  if (others.length || !(MARK_FILTER_COLUMNS as readonly string[]).includes(column)) return null;
  if (!DAY_FLAG_COLUMNS.includes(column)) return days;
  const dim = trusted(String(DAY_FILTER_COLUMNS.indexOf(column as (typeof DAY_FILTER_COLUMNS)[number])));
  return { ...days, filter: sqlCondition`dim = ${dim} AND val = ${name === 'assigned' ? 0 : Number(p[name])} AND val2 = 0`, complement: false };
}

/**
 * Where a positioned page starts: a condition on the list's query (`c`, the order column), its
 * values, and whether its matches are read in id order alone (all of one value of the column).
 */
interface PageStart { where: string; values: Record<string, number | string>; byId?: boolean }

/**
 * Where a deep page in id, created_at or updated_at order, or a value order, starts (deepPaging):
 * a date order at its day's first second (descending, its last); the id order at the day's id
 * bound; a value order at the bound within its value, then the values after it (two ranges of its index).
 */
function dayEdge(c: string, day: number, bound: number, value: number, desc: boolean, fromBound: boolean, valueOrder: boolean): PageStart {
  const edge = fromBound ? bound : desc ? (day + 1) * DAY - 1 : day * DAY;
  const [to, past] = desc ? ['<=', '<'] : ['>=', '>'];
  if (valueOrder) return { where: `((${c} = :pageValue AND \`Ticket\`.\`id\` ${to} :pageEdge) OR ${c} ${past} :pageValue)`, values: { pageEdge: edge, pageValue: value } };
  return { where: `${c} ${to} :pageEdge`, values: { pageEdge: edge } };
}

/** Where a deep page in the customer order starts: its customer's first ticket (descending, the last), the customers after it following. */
const customerEdge = (c: string, customer: number, desc: boolean): PageStart => ({ where: `${c} ${desc ? '<=' : '>='} :pageEdge`, values: { pageEdge: customer } });

/**
 * Where a deep page in a string order (MARKED_ORDERS, migration 063) starts: at its stretch's
 * first mark, `(column, id)` from there on; descending, below the next mark (the stretch's end),
 * or from the top in the last stretch (no next mark).
 */
function markEdge(c: string, mark: { val: string | null; id: number | null }, desc: boolean): PageStart {
  if (mark.val === null || mark.id === null) return { where: 'TRUE', values: {} };
  return { where: keyIs(c, '`Ticket`.`id`', desc ? '<' : '>=', 'page'), values: { pageVal: mark.val, pageId: mark.id } };
}

/**
 * Where a deep page in a time order (TIME_ORDERS) starts, on the `column` of the list's query, from
 * the counters' `day` and id `bound` (migration 061): in the NULL block (a day below VALUE_DAYS,
 * a bound needed) at the bound's id, followed ascending by every ticket with a time; at a time's
 * day, its first second ascending, its last descending (followed there by the NULL block).
 */
function timeEdge(c: string, day: number, bound: number | null, desc: boolean): PageStart | null {
  const id = '`Ticket`.`id`';
  if (day < VALUE_DAYS) {
    if (bound === null) return null;
    // Descending, the rest of the NULL block, by id: MariaDB sorts `c IS NULL` ordered by (c, id)
    // (it reads the range, then a filesort), not by id alone.
    if (desc) return { where: `${c} IS NULL AND ${id} <= :pageEdge`, values: { pageEdge: bound }, byId: true };
    return { where: `(${c} IS NULL AND ${id} >= :pageEdge OR ${c} IS NOT NULL)`, values: { pageEdge: bound } };
  }
  const time = day - VALUE_DAYS;
  return desc ? { where: `(${c} <= :pageEdge OR ${c} IS NULL)`, values: { pageEdge: (time + 1) * DAY - 1 } } : { where: `${c} >= :pageEdge`, values: { pageEdge: time * DAY } };
}

/**
 * The value columns whose order (`column, id`) a deep page is positioned in: the order is each
 * value's tickets in id order, so the created_at day counters of each value summed per value,
 * span and day find the value and the day the page starts in, and the day's id bound where the
 * page starts within the value, as for a list of that value in id order (valueDaySource).
 */
const VALUE_ORDERS: readonly string[] = ['status_id', ...DAY_FILTER_COLUMNS.filter((c) => !DAY_FLAG_COLUMNS.includes(c))];

/**
 * The day rows that position a deep page in a value order (VALUE_ORDERS), their value in `by`, of
 * the statuses asked for: in the status order, the statuses' own rows, or with one other counted
 * filter (not a flag's complement: a difference of counters) that filter's rows per status; in
 * another column's order, its rows of migration 028 (of its own values when the list is narrowed
 * by that column too), or with one other of priority, department, brand and channel the pair's
 * rows (migration 055) of that filter's values. Null for any other list.
 */
function valueDaySource(p: Record<string, any>, filtered: boolean, column: string): DaySource | null {
  const statuses = statusesOf(p);
  const narrowing = NARROWING_PARAMS.filter((k) => given(p, k) && k !== 'status');
  if (!narrowing.length && filtered && !statuses) return null;
  const counted = dayFiltered(p);
  if (!counted || counted.length > 1 || narrowing.length !== counted.length) return null;
  const [name] = counted;
  if (column === 'status_id') {
    if (!name) return { statuses, filter: null, complement: false, by: 'status_id' };
    const { rows, complement } = dayFilterRows(counted, p);
    return complement ? null : { statuses, filter: rows, complement: false, by: 'status_id' };
  }
  const dim = (n: number) => trusted(String(n));
  const own = DAY_FILTER_COLUMNS.indexOf(column as (typeof DAY_FILTER_COLUMNS)[number]);
  if (!name) return { statuses, filter: sqlCondition`dim = ${dim(own)} AND val2 = 0`, complement: false, by: 'val' };
  const other = COUNTED_FILTERS[name] ?? '';
  const values = [p[name]].flat();
  if (other === column) return { statuses, filter: sqlCondition`dim = ${dim(own)} AND val IN (${values}) AND val2 = 0`, complement: false, by: 'val' };
  const pair = pairDim(column, other);
  if (pair < 0) return null;
  // The pair's first column is in val, its second in val2.
  const [by, of] = pairFirst(pair) === column ? ['val', 'val2'] : ['val2', 'val'];
  return { statuses, filter: sqlCondition`dim = ${dim(pair)} AND ${trusted(of)} IN (${values})`, complement: false, by };
}

/** Day counters whose past days are summed per span of 32 days (migrations 052 and 053). */
interface SpannedCounters {
  days: string;
  spans: string;
  /** The rows counted: a condition on the columns both tables share (`alias` qualifies them). */
  where: (alias: string) => string;
  /** Whether the rows keep the bounds of their tickets' ids. */
  bounds: boolean;
  /** Counters whose rows are subtracted (a flag's, from all tickets': its complement). Never with bounds. */
  less?: SpannedCounters;
  /** Counters whose rows are added (a time order's filter rows: column 0's beside their differences, migration 095). Never with bounds. */
  plus?: SpannedCounters;
  /** Days added to the rows' days (a multiple of DAY_SPAN): column 0's rows read as `last_reply_time`'s. */
  shift?: number;
  /**
   * The column of the rows that holds the value a list is ordered by first (a value order:
   * `status_id` of all tickets' rows, `val` of a filter column's): its units are then a value's
   * spans and days (`v`), in the order of the value, then of the span or day.
   */
  by?: string;
}

/**
 * A deep page's day, found in two steps over spanned counters: common table expressions named
 * `<name>_spans` (per span: its tickets, its row plus its days' rows not folded yet, and their id
 * bounds), `<name>_at` (the span the page starts in: a running SUM over the spans), `<name>_days`
 * (per day of that span, a range of its index on the computed `span`: its tickets, the tickets
 * ahead of it in the list, and with bounds the largest id of the span's earlier days and the
 * smallest of its later ones, MIN and MAX over window frames of a span's days) and `<name>` (the
 * day: at most one row). A range of `day` taken from a joined row is not one MariaDB's range
 * optimiser uses: the span's days are found by equality on the computed column.
 */
function spannedDay(name: string, c: SpannedCounters, dir: string, rev: string): string[] {
  const sums = c.bounds ? ', MIN(lo_id) AS lo_id, MAX(hi_id) AS hi_id' : '';
  const own = c.bounds ? ', lo_id, hi_id' : '';
  // A value order's units: the spans of each value (`v`), in the value's order first.
  const [v, units] = c.by ? ['v, ', ['v', 'span']] : ['', ['span']];
  return [
    `${name}_spans AS (SELECT ${v}span, SUM(n) AS n${sums} FROM (${spanRows(c, `${c.by ? `${c.by} AS v, ` : ''}span, n${own}`)}) u GROUP BY ${v}span)`,
    `${name}_at AS (${lastAhead(units, `SELECT ${v}span, SUM(n) OVER (ORDER BY ${units.map((u) => `${u} ${dir}`).join(', ')}) - n AS ahead FROM ${name}_spans`, rev)})`,
    spanDays(`${name}_days`, c, `${name}_at`, `${name}_at.span`, `${name}_at.ahead`, dir),
    `${name} AS (${lastAhead(['day'], `SELECT * FROM ${name}_days`, rev)})`,
  ];
}

/**
 * The rows that count spans of spanned counters (`narrow`: more conditions, on `span`): each span's
 * row, which sums its folded days, and its days' rows not folded yet (today's, and the removals
 * written since the last fold). A span's tickets are the sum of its rows here.
 */
function spanRows(c: SpannedCounters, columns: string, narrow = ''): string {
  const parts = partsOf(c);
  // A sum or difference of counters counts spans alone (`span, n`): each part's rows with their
  // counts negated where subtracted, their spans shifted.
  if (parts.length > 1 && (columns !== 'span, n' || narrow)) throw new Error(`a sum of counters has no columns ${columns}${narrow}`);
  return parts.map(({ counters: t, sign, shift }) => {
    const cols = parts.length > 1 ? `span${shift ? ` + ${shift / DAY_SPAN}` : ''} AS span, ${sign}n AS n` : columns;
    return `SELECT ${cols} FROM ${t.spans} WHERE ${t.where('')}${narrow}
      UNION ALL
      SELECT ${cols} FROM ${t.days} WHERE ${t.where('')} AND slot < ${FOLDED_SLOT}${narrow}`;
  }).join('\n      UNION ALL\n      ');
}

/** One table's rows in spanned counters: counted (`sign` '') or subtracted ('-'), their days shifted by `shift`. */
interface CounterPart { counters: SpannedCounters; sign: '' | '-'; shift: number }

/** The parts of spanned counters: their own rows, those they add (`plus`) and those they subtract (`less`). */
function partsOf(c: SpannedCounters, negated = false): CounterPart[] {
  return [
    { counters: c, sign: negated ? '-' : '', shift: c.shift ?? 0 },
    ...(c.plus ? partsOf(c.plus, negated) : []),
    ...(c.less ? partsOf(c.less, !negated) : []),
  ];
}

/** Migration 028's counters and 053's spans of them (`where` names the filter's rows). */
const FILTER_COUNTERS = { days: 'ticket_day_filter_counts', spans: 'ticket_span_filter_counts', bounds: false } as const;

/**
 * The days of one span (`span`, from the one row of `from`; `ahead`: the tickets before it), as
 * spannedDay's `<name>_days`; with `c.by`, of the value of that row (`v`, kept in the days' rows).
 */
function spanDays(name: string, c: SpannedCounters, from: string, span: string, ahead: string, dir: string): string {
  const parts = partsOf(c);
  if (c.by && parts.length > 1) throw new Error('a value order of a sum or difference of counters');
  const windows = c.bounds ? `,
      MAX(IF(n > 0, hi_id, NULL)) OVER (ORDER BY day ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS hi_below,
      MIN(IF(n > 0, lo_id, NULL)) OVER (ORDER BY day ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS lo_above` : '';
  // A sum or difference (`plus`, `less`): each part's days of the span joined on their own (each a
  // range of its span index, at the span less its shift), the subtracted ones' counts negated,
  // their days shifted, then summed per day (the span signed: below the shift, no row's).
  const shifted = (shift: number, of: string) => (shift ? `${of} ${shift > 0 ? '+' : '-'} ${Math.abs(shift)}` : of);
  const days = parts.length > 1
    ? `SELECT day, MIN(base) AS base, SUM(n) AS n FROM (${parts.map(({ counters: t, sign, shift }) => `SELECT ${shifted(shift, 'c.day')} AS day, ${ahead} AS base, ${sign}c.n AS n
        FROM ${from} JOIN ${t.days} c ON ${t.where('c.')} AND c.span = ${shift ? shifted(-shift / DAY_SPAN, `CAST(${span} AS SIGNED)`) : span}`).join(' UNION ALL ')}) u GROUP BY day`
    : `SELECT c.day, MIN(${ahead}) AS base, SUM(c.n) AS n${c.bounds ? ', MIN(c.lo_id) AS lo_id, MAX(c.hi_id) AS hi_id' : ''}${c.by ? `, MIN(${from}.v) AS v` : ''}
      FROM ${from} JOIN ${c.days} c ON ${c.where('c.')} AND c.span = ${span}${c.by ? ` AND c.${c.by} = ${from}.v` : ''} GROUP BY c.day`;
  return `${name} AS (SELECT ${c.by ? 'v, ' : ''}day, base + SUM(n) OVER (ORDER BY day ${dir}) - n AS ahead, n${c.bounds ? ', lo_id, hi_id' : ''}${windows}
    FROM (${days}) g)`;
}

/** The last of `rows` in the list's order of `units` (`rev` reverses it) whose tickets ahead are at most the offset. */
const lastAhead = (units: string[], rows: string, rev: string) =>
  `SELECT * FROM (${rows}) x WHERE ahead <= :posOffset ORDER BY ${units.map((u) => `${u} ${rev}`).join(', ')} LIMIT 1`;

/**
 * The deep page's position, read in the counters' statement: its common table expressions and the
 * derived table `d`, which gives the day a page at :posOffset starts in (`day`), the listed
 * tickets of the days before it in the list's order (`ahead`) and, for the id order (`ids`), the
 * id the page starts at when the days' id bounds allow it (`bound`, else NULL). At most one row
 * (none when no ticket is listed).
 *
 * The day is found from the spans of 32 days (spannedDay): of the statuses' (or all) tickets, or of
 * one other counted filter's value or a pair's (of the statuses), or of those tickets less a flag's (its
 * complement: both tables' rows, the flag's negated). So it reads a row per span and status (and value) and one
 * span's days, however old the help desk (MariaDB derives a common table expression again for
 * each reference: each is referenced once or twice). The id bounds are all tickets' (of the
 * statuses): with another filter, its counters keep none, and what holds for all holds for its
 * matches; they come from the days of the page's span and the spans before and after it.
 */
function dayPositionSql(desc: boolean, ids: boolean, days: DaySource): { ctes: string; select: string } {
  const [dir, rev] = desc ? ['DESC', 'ASC'] : ['ASC', 'DESC'];
  const ofStatuses = (alias: string) => (days.statuses ? ` AND ${alias}status_id IN (:posStatuses)` : '');
  const filter = days.filter;
  // A value order's units are the value's (`by`): of the statuses' own rows, or of the filter column's.
  const tickets: SpannedCounters = {
    days: 'ticket_day_counts', spans: 'ticket_span_counts', bounds: true,
    where: (alias) => `${alias}col = :posCol AND ${alias}state = 0${ofStatuses(alias)}`,
    ...(filter ? {} : { by: days.by }),
  };
  // The filter's rows of a column (`col`: SQL). Its condition names dim, val and val2 alone (no
  // other table of these statements has them).
  const filterRows = (col: string) => (alias: string) => `${alias}col = ${col} AND ${alias}state = 0 AND ${sqlText(filter!)}${ofStatuses(alias)}`;
  const filterCounters: SpannedCounters | null = filter && {
    ...FILTER_COUNTERS,
    where: filterRows(':posCol'),
    by: days.by,
    // A time order's rows are differences from column 0's (migration 095): those added, shifted.
    ...(days.deltaOf ? { plus: { ...FILTER_COUNTERS, where: filterRows(String(days.deltaOf.col)), shift: days.deltaOf.shift } } : {}),
  };
  const ctes = filterCounters
    ? [
      // A flag's complement: the tickets' days (of the statuses) less the flag's.
      ...spannedDay('f', days.complement ? { ...tickets, bounds: false, less: filterCounters } : filterCounters, dir, rev),
      // The bounds: the day's row among all tickets' days.
      ...(ids ? [spannedDay('p', tickets, dir, rev)[0], spanDays('p_days', tickets, 'f', `f.day DIV ${DAY_SPAN}`, '0', dir),
        `p AS (SELECT p_days.*, f.ahead AS filtered${days.by ? ', f.v' : ''} FROM f JOIN p_days ON p_days.day = f.day)`] : []),
    ]
    : spannedDay('p', tickets, dir, rev);
  const day = filter ? 'f' : 'p';
  if (!ids) return { ctes: ctes.join(',\n'), select: `SELECT ${day}.day, ${day}.ahead, NULL AS bound FROM ${day}` };
  // Ascending: every ticket of an earlier day has a smaller id than the day's smallest, which is
  // the smallest of the day and every later day. Descending: the mirror, from the day's largest id.
  const below = `GREATEST(COALESCE(p.hi_below, 0), COALESCE(MAX(IF(s.span < p.day DIV ${DAY_SPAN} AND s.n > 0, s.hi_id, NULL)), 0))`;
  const above = `LEAST(COALESCE(p.lo_above, ${MAX_ID}), COALESCE(MIN(IF(s.span > p.day DIV ${DAY_SPAN} AND s.n > 0, s.lo_id, NULL)), ${MAX_ID}))`;
  const bound = desc
    ? `IF(p.n > 0 AND ${above} > p.hi_id AND ${below} <= p.hi_id, p.hi_id, NULL)`
    : `IF(p.n > 0 AND ${below} < p.lo_id AND ${above} >= p.lo_id, p.lo_id, NULL)`;
  // A value order's (`p.v`, its value): bounds of the value's own spans when the tickets' rows
  // are the value's (the status order, no other filter), else of all tickets' spans (of the statuses).
  const value = days.by ? ', p.v' : '';
  return {
    ctes: ctes.join(',\n'),
    select: `SELECT p.day, ${filter ? 'p.filtered' : 'p.ahead'} AS ahead, ${bound} AS bound${days.by ? ', p.v AS val' : ''}
      FROM p LEFT JOIN p_spans s ON ${tickets.by ? 's.v = p.v' : '1 = 1'}
      GROUP BY p.day, p.ahead, p.n, p.lo_id, p.hi_id, p.hi_below, p.lo_above${filter ? ', p.filtered' : ''}${value}`,
  };
}

/**
 * A deep page's position in a string order (migration 063), read in the counters' statement as
 * dayPositionSql's: the stretch it starts in (`day`), the listed tickets (of the statuses, and of
 * the filter's values: migration 089's rows) before it in the list's order (`ahead`), and the key
 * the page starts from (`mark_val`, `mark_id`: the stretch's mark, descending the next one's, NULL
 * for the last). Reads every mark of the column and its stretch's rows (a stretch per MARK_EVERY
 * tickets: 245 at 1M), summed in the marks' order.
 */
function markPositionSql(desc: boolean, days: DaySource): { ctes: string; select: string } {
  const [dir, rev] = desc ? ['DESC', 'ASC'] : ['ASC', 'DESC'];
  const ofStatuses = days.statuses ? ' AND status_id IN (:posStatuses)' : '';
  // The filter's condition names dim, val and val2 alone (markDaySource: one filter column's rows).
  const rows = days.filter ? `ticket_day_filter_counts WHERE col = :posCol AND state = 0 AND ${sqlText(days.filter)}` : 'ticket_day_counts WHERE col = :posCol AND state = 0';
  return {
    ctes: [
      `m_n AS (SELECT day, SUM(n) AS n FROM ${rows}${ofStatuses} GROUP BY day)`,
      // Each mark with the next one in the order (where its stretch ends), whatever their tickets.
      `m_at AS (SELECT m.day, m.val, m.ticket_id, COALESCE(m_n.n, 0) AS n,
         LEAD(m.val) OVER (ORDER BY m.val, m.ticket_id) AS next_val, LEAD(m.ticket_id) OVER (ORDER BY m.val, m.ticket_id) AS next_id
         FROM ticket_order_marks m LEFT JOIN m_n ON m_n.day = m.day WHERE m.col = :posCol)`,
      `m_ahead AS (SELECT m_at.*, SUM(n) OVER (ORDER BY val ${dir}, ticket_id ${dir}) - n AS ahead FROM m_at)`,
    ].join(',\n'),
    select: `SELECT day, ahead, NULL AS bound, ${desc ? 'next_val AS mark_val, next_id' : 'val AS mark_val, ticket_id'} AS mark_id
      FROM m_ahead WHERE ahead <= :posOffset ORDER BY val ${rev}, ticket_id ${rev} LIMIT 1`,
  };
}

/**
 * A search the engine answers alone (./search/listed.ts: words, with field terms and filters on
 * the ticket's own columns, listed tickets in id order): its page's rows and exact count from the
 * engine's index, in one statement. Null otherwise (the words are then a condition like any
 * filter, and the count reads the matches).
 */
async function listedSearchPage(p: Record<string, any>, column: string, desc: boolean, offset: number, limit: number): Promise<ListResult<Ticket> | null> {
  const engine = searchEngine();
  if (!engine.listedPage || p.trashed === 1 || column !== 'id' || given(p, 'after_id')) return null;
  const search = listedSearch(p, COUNTED_FILTERS, OTHER_FILTERS, { desc, offset, limit });
  const found = search && await engine.listedPage(search);
  if (!found) return null;
  return { rows: found.rows as unknown as Ticket[], count: found.count };
}

/**
 * One customer's listed tickets: their filter index (`user_id, deleted_at, merged_into_id`, then
 * the primary key) holds them in id order, so the count and an id-ordered page read at most that
 * customer's tickets. Left to itself, with another filter beside the user (`status`: a customer's
 * open tickets), the optimiser walked every listed ticket in id order for the page (240 ms at a
 * million tickets for a customer whose many tickets are the newest) and intersected the user's
 * index with the status's for the count, reading every ticket of the status (50 ms). One
 * organisation's the same way, by migration 086's indexes (ORGANISATION_RANGES), where no customer
 * is given. `column`: the page's order, of the index that holds the tickets in it (none for
 * another order).
 */
function customerHint(p: Record<string, any>, column = 'id'): string {
  if (p.trashed === 1) return '';
  // The customer's, else the organisation's (migration 086: the same columns after the key).
  for (const [name, ranges] of [['user', CUSTOMER_RANGES], ['organisation', ORGANISATION_RANGES]] as const) {
    const keys = given(p, name) ? [p[name]].flat() : [];
    const index = ranges.get(column);
    if (keys.length === 1 && index) return ` FORCE INDEX (${index})`;
    if (keys.length) return '';
  }
  return '';
}

/**
 * A list of counted filters (or one option of a ticket field or one tag beside them) narrowed to what an
 * operator sees (a saved filter of the list's own filters run as an operator who sees part of the
 * tickets: ./resource.ts, countedApart): its count is the counters of the filters in the
 * operator's departments plus a count of their own and assigned tickets outside them, in one
 * statement (as the filters' ticket_count: ../filter.ts); the page is the optimiser's, as for the
 * saved filter's conditions.
 */
async function withinView(
  view: OperatorView, p: Record<string, any>, where: WhereOptions, replacements: Record<string, unknown>, trashed: boolean,
  pageOf: (hint: string, count: number) => Promise<Ticket[]>,
): Promise<ListResult<Ticket>> {
  const counters = await countersOfList(p);
  if (!counters) throw new Error('a list within an operator\'s view is of counted filters');
  // `where` holds what the operator sees: outside their departments, their own and assigned tickets.
  const count = countWithinView(view, { table: counters.table, where: sqlFragment`state = ${trashed ? 1 : 0} AND ${counters.where}` },
    (outside) => sqlFragment`SELECT COUNT(*) FROM \`tickets\` AS \`Ticket\` WHERE (${trusted(whereSql(where))}) AND ${outside}`);
  const [{ n }] = await select<{ n: number | bigint | string }>(`SELECT ${sqlText(count)} AS n`, { ...replacements, ...count.replacements });
  return { rows: await pageOf('', Number(n)), count: Number(n) };
}

/**
 * The counters that hold a list's count by department (what an operator sees is counted so):
 * the list's own for counted filters, an option's or a tag's beside them; null for any other list. `p`'s
 * `department` with the departments below it.
 */
async function countersOfList(p: Record<string, any>): Promise<DepartmentCounters | null> {
  if (countedByCounters(p)) return { table: 'ticket_list_counts', where: allCounted(counterConditions(p)) };
  const linked = await oneLinked(p);
  return linked && linkedCounters(linked, p);
}

export async function listTicketPage({ query: q, where, replacements, filtered, within }: ListPageInput): Promise<ListResult<Ticket>> {
  // `department`: the ids of the departments and every one below them, as the filter's condition
  // has them (./departmentsBelow.ts), for the counters and the search engine alike.
  const p = given(q.params, 'department') ? { ...q.params, department: await departmentsBelow([q.params.department].flat()) } : q.params;
  const trashed = p.trashed === 1;
  // Listed tickets have no deleted_at: that order is the id order (which the optimiser does not see).
  const column: string = p.order_column === 'deleted_at' && !trashed ? 'id' : p.order_column ?? 'id';
  const desc = p.order_direction === 'desc';
  const dir = desc ? 'DESC' : 'ASC';
  const searched = await listedSearchPage(p, column, desc, q.offset, q.limit);
  if (searched) return searched;
  const byCounters = countedByCounters(p);

  let keyset: BoundCondition | undefined;
  let anchor: Anchor | null = null;
  if (given(p, 'after_id')) {
    // `column` is one of the sortable columns (validated), never a value from the request.
    anchor = await anchorOf(Ticket, column, p.after_id);
    if (!anchor) throw invalid('after_id');
    keyset = afterAnchor(Ticket, column, desc, anchor);
  }

  const ord = (alias: string, d = dir) => (column === 'id' ? `${alias}.\`id\` ${d}` : `${alias}.\`${column}\` ${d}, ${alias}.\`id\` ${d}`);
  let pageWhere = keyset ? `(${whereSql(where)}) AND ${sqlText(keyset)}` : whereSql(where);
  const pageValues: Record<string, unknown> = {};
  let pageSwitches = '';
  /**
   * The page's ids read in `innerDir` (the list's, or its reverse from the far end), sorted in the
   * list's; `byId`: the page's matches all have one value of the order column (timeEdge's NULL block).
   */
  const page = (hint: string, offset = q.offset, limit = q.limit, innerDir = dir, byId = false, examined = 0) => select<Ticket>(
    `${pageSwitches}SELECT STRAIGHT_JOIN t.* FROM (SELECT \`Ticket\`.\`id\` FROM \`tickets\` AS \`Ticket\`${hint} WHERE ${pageWhere}
       ORDER BY ${byId ? `\`Ticket\`.\`id\` ${innerDir}` : ord('`Ticket`', innerDir)} LIMIT :pageOffset, :pageLimit) AS page
     JOIN tickets t ON t.id = page.id ORDER BY ${ord('t')}${examined ? ' LIMIT :pageLimit ROWS EXAMINED :pageExamined' : ''}`,
    { ...replacements, ...keyset?.replacements, ...pageValues, pageOffset: offset, pageLimit: limit, ...(examined ? { pageExamined: examined } : {}) },
  );
  // Past the middle of a list whose count is known first (not with after_id), the page is read
  // from the far end (the order reversed: MariaDB puts NULLs first ascending and last descending,
  // so the reverse is exact): a deep `start` skips at most half of the matches' index entries, and
  // the last page is as cheap as the first.
  const fromEnd = (count: number) => !keyset && count - q.offset < q.offset + q.limit;
  type Reader<T> = (offset: number, limit: number, innerDir: string) => Promise<T>;
  const nearerEnd = <T = Ticket[]>(count: number, read: Reader<T>) => (fromEnd(count)
    ? read(Math.max(0, count - q.offset - q.limit), Math.max(0, Math.min(q.limit, count - q.offset)), desc ? 'ASC' : 'DESC')
    : read(q.offset, q.limit, dir));
  const pageOf = (hint: string, count: number) => nearerEnd(count, (offset, limit, innerDir) => page(hint, offset, limit, innerDir));
  /** The index entries a page reaches: from the nearer end. */
  const reachOf = (count: number) => (fromEnd(count) ? Math.max(0, count - q.offset) : q.offset + q.limit);
  /**
   * The page of `count` matches by a walk of the order's index (`walkHint`), bounded
   * (boundedWalks) by `sorted`, the entries read through `sortHint` (the filter's own index)
   * before a sort. A walk stopped at its bound returns fewer rows than the page holds (the count,
   * known first, says how many) or, stopped while the page's rows are sorted, an error; the page
   * is then read through `sortHint`: one more statement. After an `after_id` what is left of the
   * list is not known, nor so a short page from a stopped walk: the walk is not bounded.
   * `perCovered`: where the walked index holds every column of the tickets the page's condition
   * tests (an address's look-up of its people goes by the entry's `user_id`), the entries per
   * match it may read (boundedWalks.perCovered); else null.
   */
  const walkedPage = async (walkHint: string, sortHint: string, sorted: number, count: number, perCovered: number | null = null): Promise<Ticket[]> => {
    if (keyset) return pageOf(walkHint, count);
    const rows = await nearerEnd<Ticket[] | null>(count, async (offset, limit, innerDir) => {
      const walk = JSON.stringify([...NARROWING_PARAMS.map((k) => p[k] ?? null), column, innerDir]);
      if (walkStopped(walk, offset + limit)) return null;
      const read = await page(walkHint, offset, limit, innerDir, false, walkBound(sorted, limit, innerDir, perCovered))
        .catch((err: unknown) => { if (sortStopped(err)) return null; throw err; });
      if (read && read.length >= limit) return read;
      stoppedWalk(walk, offset + limit);
      return null;
    });
    return rows ?? pageOf(sortHint, count);
  };
  /**
   * `after_id` on a link list (migrations 030, 082, 083): the rows after the anchor's in the
   * list's order, by the list's copy of the order's column and its `ticket_id` (a range of the
   * order's index, as on the tickets); none without `after_id`.
   */
  const listAfter = (): { sql: string; values?: Record<string, unknown> } => {
    if (!anchor) return { sql: '' };
    const id = column === 'id' ? 'ticket_id' : listColumnOf(column);
    const c = keysetCondition('a', `\`${id}\``, desc, anchor.value, anchor.id, 'ticket_id');
    return { sql: ` AND ${sqlText(c)}`, values: c.replacements };
  };
  /**
   * The page of one operator's or tag's tickets (`key`, and a status), `count` of them: in an
   * order their link list holds (listed or trashed: listedState; after_id too: listAfter), a range of their rows in that order, the
   * status tested on the index's entries; otherwise the optimiser's. `others` (taggedAmong):
   * filters besides the key and a status, tested on each entry as the walk passes it: a
   * condition on the list's own copies of the ticket's columns (its row, a fraction of the
   * ticket's), or `ticket`: the list's whole condition on the entry's ticket.
   */
  const linkListPage = (list: LinkList, key: number, count: number, others?: BoundCondition | 'ticket', through?: string): Promise<Ticket[]> => {
    // `through`: another index of the list than the order's (a range of its entries, sorted when out of order).
    const index = list.orders.get(column) && (through ?? list.orders.get(column));
    if (!index) return pageOf('', count);
    const statuses = statusesOf(p);
    const ofStatuses = statuses ? ' AND a.status_id IN (:statuses)' : '';
    const after = listAfter();
    // On the ticket, in a subquery of its own: the condition names the ticket's columns
    // unqualified, which the list's copies share (department_id). Without semi-joins the
    // subquery is a look-up of the entry's ticket by primary key, entry by entry in the list's
    // order (a semi-join may start from the tickets and sort them).
    const onTicket = others === 'ticket';
    const switches = onTicket ? NO_SEMIJOINS : '';
    const rest = onTicket ? ` AND a.ticket_id IN (SELECT \`Ticket\`.\`id\` FROM \`tickets\` AS \`Ticket\` WHERE ${pageWhere})`
      : others ? ` AND ${sqlText(others)}` : '';
    const restValues = onTicket ? { ...replacements, ...pageValues } : others?.replacements;
    // `column` is a key of the list's orders, never a value from the request.
    const by = (d: string) => (column === 'id' ? `a.ticket_id ${d}` : `a.\`${listColumnOf(column)}\` ${d}, a.ticket_id ${d}`);
    return nearerEnd(count, (offset, limit, innerDir) => select<Ticket>(
      `${switches}SELECT STRAIGHT_JOIN t.* FROM (SELECT a.ticket_id AS id FROM ${list.table} a FORCE INDEX (${index})
         WHERE a.${list.key} = :key AND a.listed = :listed${ofStatuses}${after.sql}${rest} ORDER BY ${by(innerDir)} LIMIT :pageOffset, :pageLimit) AS page
       JOIN tickets t ON t.id = page.id ORDER BY ${ord('t')}`,
      { ...restValues, ...after.values, key, statuses, listed: listedState(trashed), pageOffset: offset, pageLimit: limit },
    ));
  };

  /**
   * The page of several operators' or tags' listed or trashed tickets (and a status; after_id too): in an
   * order their link list holds, the first start + limit of each one's rows in that order (a
   * range of the list), merged (UNION: a ticket of two of them has the same values in both rows,
   * so it is there once), then the page of them. That reads start + limit entries per operator or
   * tag, never more than their tickets; the optimiser's page (another order) sorts all of them.
   */
  const linksListPage = (list: LinkList, keys: number[]): Promise<Ticket[]> => {
    const index = list.orders.get(column);
    if (!index) return page('');
    const statuses = statusesOf(p);
    const ofStatuses = statuses ? ' AND a.status_id IN (:statuses)' : '';
    const after = listAfter();
    // `column` is a key of the list's orders, never a value from the request.
    const value = column === 'id' ? 'a.ticket_id' : `a.\`${listColumnOf(column)}\``;
    const each = keys.map((_, i) => `(SELECT a.ticket_id AS id, ${value} AS v FROM ${list.table} a FORCE INDEX (${index})
         WHERE a.${list.key} = :key${i} AND a.listed = :listed${ofStatuses}${after.sql} ORDER BY ${value} ${dir}, a.ticket_id ${dir} LIMIT :reach)`);
    return select<Ticket>(
      `SELECT STRAIGHT_JOIN t.* FROM (SELECT u.id FROM (${each.join(' UNION ')}) AS u ORDER BY u.v ${dir}, u.id ${dir} LIMIT :pageOffset, :pageLimit) AS page
       JOIN tickets t ON t.id = page.id ORDER BY ${ord('t')}`,
      { ...Object.fromEntries(keys.map((k, i) => [`key${i}`, k])), ...after.values, statuses, listed: listedState(trashed), reach: q.offset + q.limit, pageOffset: q.offset, pageLimit: q.limit },
    );
  };

  /**
   * The page of several customers' or organisations' listed tickets in an order of their ranges
   * (id, `updated_at`, `subject`, a customer's the customer order too; and a status, after an id): each key's first entries of the order's index
   * (migrations 032, 085 and 090 for customers, 086 and 090 for organisations) in the list's direction up to
   * the page's reach, merged (UNION ALL: a ticket has one customer and one organisation), then the
   * page of them. That reads keys × reach entries; the optimiser's page reads all of their tickets
   * and sorts them (the benchmark's large organisation, 62,500 at 1M, one request at a time:
   * 22-28 ms in id order, 100-106 ms by `updated_at`, before its page merged its members').
   */
  const rangesPage = ({ key, ranges }: Ranged, keys: number[], count: number): Promise<Ticket[]> => nearerEnd(count, (offset, limit, innerDir) => {
    const statuses = statusesOf(p);
    const ofStatuses = statuses ? ' AND c.status_id IN (:statuses)' : '';
    // `column` is a key of `ranges`, never a value from the request.
    const after = anchor && keysetCondition('c', `\`${column}\``, desc, anchor.value, anchor.id);
    const by = column === 'id' ? ['id'] : [column, 'id'];
    const each = keys.map((_, i) => `(SELECT ${by.map((c) => `c.\`${c}\``).join(', ')} FROM tickets c FORCE INDEX (${ranges.get(column)})
         WHERE c.${key} = :k${i} AND c.deleted_at IS NULL AND c.merged_into_id IS NULL${ofStatuses}${after ? ` AND (${sqlText(after)})` : ''}
         ORDER BY ${by.map((c) => `c.\`${c}\` ${innerDir}`).join(', ')} LIMIT :reach)`);
    return select<Ticket>(
      `SELECT STRAIGHT_JOIN t.* FROM (SELECT u.id FROM (${each.join(' UNION ALL ')}) AS u ORDER BY ${by.map((c) => `u.\`${c}\` ${innerDir}`).join(', ')} LIMIT :pageOffset, :pageLimit) AS page
       JOIN tickets t ON t.id = page.id ORDER BY ${ord('t')}`,
      { ...Object.fromEntries(keys.map((k, i) => [`k${i}`, k])), ...after?.replacements, statuses, reach: offset + limit, pageOffset: offset, pageLimit: limit },
    );
  });
  /**
   * The page of the `count` listed tickets of `keys` of `by`, of `total` listed tickets:
   * rangesPage where it reads fewer entries than their tickets (an order of the ranges, not too
   * many keys). Otherwise a walk of the order's index where it is expected to read fewer entries
   * than their tickets, bounded by them (walkedPage), else their tickets read through the key's
   * index and sorted. Left to the optimiser, the benchmark's large organisation (63,000 tickets
   * at 1M) in `subject` order (a range of its own since migration 090) walked that order's index
   * past 90,000 tickets of subject families it has none of (243 ms). In the trash, the optimiser's.
   */
  const pageOfRanges = (by: Ranged, keys: number[], count: number, total: number): Promise<Ticket[]> => {
    if (trashed) return pageOf('', count);
    if (by.ranges.has(column) && keys.length <= MAX_MERGED_RANGES && keys.length * reachOf(count) < count) return rangesPage(by, keys, count);
    return walkedOrSorted(by, count, total);
  };
  /**
   * The page of the listed tickets of the organisations' people (and a status) in the customer
   * order (user_id, then id), from their people's rows of the customer order's counters
   * (migration 062: per customer, state and status; `day` holds the customer): in one statement,
   * their count and the customers the page falls in, with the tickets of the customers ahead of
   * each (a running sum of their counts in the list's order); then those customers' ranges of
   * their index (migration 032), in the index's order, from the first one's ticket the page starts
   * at. That reads a few counter rows per member (one per status, per slot until the fold) and the
   * page's entries (and, in its first customer, the ones before the page), whatever the page's
   * depth; a walk of the customer order's index passes every other customer's tickets between
   * theirs (the benchmark's organisation of 1,000 people at 1M, descending: 163,600 entries,
   * 175-195 ms; its tickets sorted, 54 ms). (It read `ticket_user_counts` before, whose rows since
   * migration 092 are per combination of every counted column: about one per ticket.)
   */
  const customerOrderPage = async (organisations: number[]): Promise<ListResult<Ticket>> => {
    const members = sqlCondition`col = ${CUSTOMER_ORDER_COL} AND state = 0 AND day IN (SELECT id FROM users WHERE organisation_id IN (${organisations}))`;
    const where = statuses ? sqlCondition`${members} AND status_id IN (${statuses})` : members;
    // `dir` is ASC or DESC, never a value from the request.
    const sums = sqlFragment`WITH r AS (SELECT day AS user_id, SUM(n) AS n, SUM(SUM(n)) OVER (ORDER BY day ${trusted(dir)} ROWS UNBOUNDED PRECEDING) AS run
        FROM ticket_day_counts WHERE ${where} GROUP BY day HAVING SUM(n) > 0)
      SELECT COALESCE(MAX(run), 0) AS matches,
        GROUP_CONCAT(IF(run > ${q.offset} AND run - n < ${q.offset + q.limit}, CONCAT(user_id, ':', run - n), NULL) ORDER BY run) AS covering FROM r`;
    const [r] = await select<{ matches: string | number | null; covering: string | null }>(sqlText(sums), sums.replacements);
    const count = Number(r?.matches ?? 0);
    const covering = (r?.covering ?? '').split(',').filter(Boolean).map((c) => c.split(':').map(Number));
    if (!covering.length) return { rows: await page('', 0, 0), count };
    pageWhere = `(${pageWhere}) AND \`Ticket\`.\`user_id\` IN (:orderCustomers)`;
    pageValues.orderCustomers = covering.map(([user]) => user);
    return { rows: await page(' FORCE INDEX (tickets_filter_user_id)', q.offset - covering[0][1], q.limit), count };
  };
  /**
   * The page of `count` listed tickets of keys of `by` in an order of no range of theirs: walked or
   * sorted (pageOfRanges). Every order's index holds the customer and their organisation
   * (migration 087), the wide ones and the subject's the status too (COVERED_SORTS): where it
   * holds all the page tests, the walk reads no ticket, and may go further (boundedWalks.perCovered).
   */
  const walkedOrSorted = (by: Ranged, count: number, total: number): Promise<Ticket[]> => {
    const keyed = ` FORCE INDEX (${by.ranges.get('id')})`;
    const expected = walkedEntries(reachOf(count), count, total);
    const covered = !statusesOf(p) || column === 'status_id' || COVERED_SORTS.includes(column);
    const perCovered = covered ? boundedWalks.perCovered.customers : null;
    return expected < (perCovered ?? 1) * count
      ? walkedPage(` FORCE INDEX (${sortIndex(column)})`, keyed, count, count, perCovered) : pageOf(keyed, count);
  };

  /**
   * One tag's listed tickets beside counted filters other than a status (oneTag). In one
   * statement: the count from migration 081's counters, the tag's tickets of the statuses asked
   * (what a walk of its list passes: the status is on the list's entries) and each other
   * filter's matches (ticket_list_counts). The page walks the tag's list in the list's order
   * (it holds every one) testing the other filters on each entry's ticket: about reach × tagged
   * / count entries, and never more than the tag's tickets, however the filters lie along the
   * order (a walk of the order's own index is bounded by every ticket: at 1M the subject order
   * passed 600,000 tickets before the first 50 of a tag of a tenth, all of one subject family).
   * When the narrowest filter matches fewer tickets than that walk reads, the page reads them
   * through its index and sorts them.
   */
  const taggedAmong = async (tag: number): Promise<ListResult<Ticket>> => {
    const counted = counterConditions(p);
    const status = counted.find(([name]) => name === 'status')?.[1] ?? trusted('1 = 1');
    const others = counted.filter(([name]) => name !== 'status');
    const each = others.map(([, c], i) => sqlFragment`SUM(IF(${c}, n, 0)) AS ${trusted(`m${i}`)}`);
    const sums = sqlFragment`SELECT c.matches, c.tagged, l.* FROM
      (SELECT SUM(IF(${allCounted(counted)}, n, 0)) AS matches, SUM(IF(${status}, n, 0)) AS tagged FROM ticket_tag_counts WHERE tag_id = ${tag} AND state = 0) c
      JOIN (SELECT ${joined([trusted('SUM(n) AS total'), ...each])} FROM ticket_list_counts WHERE state = 0) l`;
    const [r] = await select<Record<string, string | number | null>>(sqlText(sums), sums.replacements);
    const count = Number(r?.matches ?? 0);
    const tagged = Number(r?.tagged ?? 0);
    const narrowest = others.map(([name], i) => ({ name, matches: Number(r?.[`m${i}`] ?? 0) }))
      .reduce((a, b) => (a.matches <= b.matches ? a : b), { name: '', matches: Infinity });
    // What the tag's way reads: its list's entries up to the page.
    const viaTag = (reachOf(count) * tagged) / Math.max(count, 1);
    if (narrowest.matches < viaTag) return { rows: await pageOf(` FORCE INDEX (${FILTER_INDEXES[narrowest.name]})`, count), count };
    // The other filters on the list's copies of their columns (migration 083) when it has them
    // all: at 1M, `start=12,000` with a priority in created_at order 70 → 39 ms for the statement.
    const onList = others.every(([name]) => LIST_COPIED_FILTERS.includes(name));
    return { rows: await linkListPage(LINK_LISTS.tag, tag, count, onList ? allCounted(others) : 'ticket'), count };
  };

  if (within) return withinView(within.view as OperatorView, p, where, replacements, trashed, pageOf);

  const range = dateRange(p);
  if (range) {
    const { count, lo, hi, total } = await datedCount(range, p, where, replacements, trashed);
    const reach = reachOf(count);
    let hint = '';
    // The trash is a range of deleted_at: a sort of the trash's matches, no hint.
    if (!trashed && column === range.column) hint = ` FORCE INDEX (${sortIndex(column)})`; // the range, in its order
    else if (!trashed && column === 'id' && lo !== null && hi !== null) {
      // The range's tickets have ids in [lo, hi] (the day counters' bounds): walking the primary
      // key from there reads about reach × span / count rows (each tested on the row, in key
      // order), reading the range by its index and sorting it reads `count` entries. Tickets made
      // in order (ids follow created_at) make the span the range's own tickets: the walk reads
      // about the page, wherever the range lies (unbounded, it read every earlier ticket first).
      pageWhere = `(${pageWhere}) AND \`Ticket\`.\`id\` BETWEEN :pageLo AND :pageHi`;
      Object.assign(pageValues, { pageLo: lo, pageHi: hi });
      const span = hi - lo + 1;
      if (count * count >= ROW_PER_SORTED * reach * span) hint = ' FORCE INDEX (PRIMARY)';
      // Dates alone: read the range (exactly the matches) and sort them, a sort of at most
      // √(reach × span) entries; with counted filters, the optimiser may take a filter's index.
      else if (datesAlone(p)) hint = ` FORCE INDEX (${sortIndex(range.column)})`;
    } else if (!trashed && datesAlone(p)) {
      // Another order: walking its index tests the date on each row and reads about
      // reach × total / count of them; reading the range by its date's index and sorting it reads
      // `count` entries (at most √(reach × total) when the walk is not taken). The fewer.
      hint = ` FORCE INDEX (${sortIndex(count * count >= reach * total ? column : range.column)})`;
    }
    // No index forced (the dates with counted filters, the trash): the optimiser's plan, without
    // index merge intersections (as datedCount: a year, a department of 999,000 and a priority in
    // updated_at order intersected four indexes and sorted, 1.15 s at 1M; without, it walks the
    // order's list index, 20 ms, or with a filter of few tickets takes that filter's index).
    if (!hint) pageSwitches = NO_INTERSECTIONS;
    return { rows: await pageOf(hint, count), count };
  }

  const statuses = statusesOf(p);
  const operator = onePerson(p, 'assigned');
  if (operator !== null) {
    // One operator's tickets (and a status): the count from migration 029's counters, known
    // before the page (a page past the middle is read from the far end). Listed or in the trash
    // (migration 084), after_id too, the page is a range of the operator's rows of
    // `ticket_assignee_list` (migrations 030, 031 and 083: every order; the trash's own
    // `deleted_at` order is the optimiser's, a sort of the operator's trash) in the list's order,
    // the status tested on the index's entries.
    // Walking the order's own index instead reads about reach × total / count entries only when
    // assignments are independent of the order: at 1M with an operator's 20,000 tickets, the
    // subject order's walk read most of the index (1.2 s) and the updated_at order's passed the
    // newest tickets, all unassigned (90 ms); the sort read the operator's tickets (100-140 ms).
    const count = await countersSum(countersOf('ticket_assignee_counts', personKey(operator), statuses), trashed);
    return { rows: await linkListPage(LINK_LISTS.assigned, operator, count), count };
  }

  // One customer's page in the trash or an order of their ranges: the optimiser's or a range of their index (customerHint).
  const customerRanged = trashed || CUSTOMER_RANGES.has(column);
  const customer = onePerson(p, 'user');
  if (customer !== null) {
    // One customer's tickets (and a status): the count from migration 035's counters, known
    // before the page (a page past the middle is read from the far end); listed, in id,
    // `updated_at`, `subject` or customer order, the page is a range of the customer's own index (customerHint); in
    // another, walked or sorted (walkedOrSorted: the busy customer in `subject` order at 1M, 335
    // ms walked unbounded by the optimiser, 57 ms walked so, before migration 090).
    const { count, total } = await countersAndTotal(countersOf('ticket_user_counts', personKey(customer), statuses), trashed, !customerRanged);
    return { rows: await (customerRanged ? pageOf(customerHint(p, column), count) : walkedOrSorted(BY_CUSTOMER, count, total)), count };
  }

  const customers = withStatusOnly(p, 'user');
  if (customers) {
    // Several customers' tickets (and a status): the sum of their counters (a ticket has one
    // customer: none counted twice); listed, in id, `updated_at`, `subject` or customer order, up to MAX_MERGED_RANGES
    // of them, the page merges their own ranges (pageOfRanges).
    const { count, total } = await countersAndTotal(countersOf('ticket_user_counts', sqlCondition`user_id IN (${customers})`, statuses), trashed, !trashed);
    return { rows: await pageOfRanges(BY_CUSTOMER, customers, count, total), count };
  }

  const email = emailAmongCounted(p);
  if (email !== null) {
    // A customer's tickets by their address, primary or additional (and counted filters): as
    // `user`, of the persons `person_emails` holds it for (one per brand at most), known in the
    // count's statement; their counters' sum (migration 035, widened by 092), and one person's
    // page a range of their index (customerHint, the person's id beside the address's condition),
    // several persons' with a status at most a merge of their ranges. Left to the optimiser, the
    // count read each of the customer's index entries and the page sorted their tickets (the busy
    // customer at 1M: 40-53 ms against 19 for `user` one request at a time; with a priority 27 ms).
    const persons = personsOf(email);
    const counted = sqlCondition`user_id IN (${persons}) AND ${allCounted(counterConditions(p))}`;
    const sums = sqlFragment`SELECT (SELECT COALESCE(SUM(n), 0) FROM ticket_user_counts WHERE ${counted} AND state = ${trashed ? 1 : 0}) AS matches,
      (SELECT GROUP_CONCAT(e.user_id) FROM (${persons}) e) AS persons, ${totalOf(trashed)}`;
    const [r] = await select<{ matches: string | number | null; persons: string | null; total: string | number | null }>(sqlText(sums), sums.replacements);
    const count = Number(r?.matches ?? 0);
    const people = r?.persons ? r.persons.split(',').map(Number) : [];
    const total = Number(r?.total ?? 0);
    // The page's persons by id beside the address's condition: a range of the customer's index.
    // Where the page may walk an order's index (walkedOrSorted) the address's subquery is a
    // look-up per entry, not a semi-join, whose plan read the address's persons first and, for
    // each, the walked index whole.
    if (people.length) {
      pageWhere = `(${pageWhere}) AND \`Ticket\`.\`user_id\` IN (:emailPeople)`;
      pageValues.emailPeople = people;
      if (people.length > 1 || !customerRanged) pageSwitches = NO_SEMIJOINS;
    }
    // Beside other counted filters than a status: one person's range walked, testing them, or the optimiser's page.
    if (counterConditions(p).some(([name]) => name !== 'status')) return { rows: await pageOf(people.length === 1 ? customerHint({ ...p, user: people[0] }, column) : '', count), count };
    if (people.length !== 1) return { rows: await pageOfRanges(BY_CUSTOMER, people, count, total), count };
    if (!customerRanged) return { rows: await walkedOrSorted(BY_CUSTOMER, count, total), count };
    return { rows: await pageOf(customerHint({ ...p, user: people[0] }, column), count), count };
  }

  const organisations = withStatusOnly(p, 'organisation');
  if (organisations) {
    // Organisations' tickets (and a status): the count sums their counters (migration 091), not a
    // COUNT of their tickets; listed, in id, `updated_at` or `subject` order, the page merges
    // the organisations' ranges of migrations 086's and 090's indexes, whatever their number of people; in
    // the customer order it is positioned by the members' counters (customerOrderPage); in
    // another, walked or sorted (walkedOrSorted).
    if (!trashed && !keyset && column === CUSTOMER_ORDER) return customerOrderPage(organisations);
    const { count, total } = await countersAndTotal(countersOf('ticket_organisation_counts', sqlCondition`organisation_id IN (${organisations})`, statuses), trashed, !trashed);
    return { rows: await pageOfRanges(BY_ORGANISATION, organisations, count, total), count };
  }

  const linked = await oneLinked(p);
  if (linked) {
    // One option of a ticket field or one tag (and counted filters): the count from migration
    // 076's or 081's counters, known before the page (a page past the middle is read from the far
    // end). The page of one tag (and a status), listed or in the trash, is a range of its link
    // list (migrations 082, 083 and 084), as an operator's, and listed with other counted filters
    // a walk of that list (taggedAmong); otherwise (an option, a tag in the trash beside other
    // filters) the optimiser's, through the option's holders (migration 071) or the tag's links,
    // or the order's index. After an `after_id` too, from its ticket on.
    const tag = onePerson(p, 'tag');
    const among = trashed || tag !== null ? null : oneTag(p);
    if (among !== null) return taggedAmong(among);
    const count = await countersSum(linkedCounters(linked, p), trashed);
    return { rows: await (tag === null ? pageOf('', count) : linkListPage(LINK_LISTS.tag, tag, count)), count };
  }

  const ofPeople = linkOfPeople(p);
  if (ofPeople) {
    // One operator's or one tag's tickets of some customers or organisations (and a status, and
    // filters on the list's copies of their columns): a range of the link list's index of the
    // customer or the organisation (migrations 083, 094), the status on its entries, the other
    // filters on its rows. The count reads the range (their tickets of the operator or tag); the
    // page reads it in the list's order, in id order of one of them a range in order, else its
    // entries sorted. Before, the COUNT read all of their tickets and looked each up among the
    // links (at 1M, the large organisation with a tag of a tenth: 155 ms for 150 matches; the
    // busy customer with an operator, 53 ms for none).
    const { list, key, column, people } = ofPeople;
    const index = `${list.table}_${column}`;
    const statuses = statusesOf(p);
    // The other filters name the ticket's columns, which the list's copies share (department_id).
    const others = allCounted(counterConditions(p).filter(([name]) => name !== 'status'));
    const on = allOf([people, others]);
    // `list` and `index` are the code's own names (LINK_LISTS, linkOfPeople), never a request's.
    const [r] = await select<{ n: number | bigint }>(
      `SELECT COUNT(*) AS n FROM ${list.table} FORCE INDEX (${index})
       WHERE ${list.key} = :key AND listed = :listed${statuses ? ' AND status_id IN (:statuses)' : ''} AND ${sqlText(on)}`,
      { ...on.replacements, key, statuses, listed: listedState(trashed) },
    );
    const count = Number(r?.n ?? 0);
    return { rows: await linkListPage(list, key, count, on, index), count };
  }

  const several = (['assigned', 'tag'] as const).map((name) => ({ list: LINK_LISTS[name], keys: severalOf(p, name) }))
    .find((s): s is { list: LinkList; keys: number[] } => s.keys !== null);
  if (several) {
    // Several operators' or tags' listed or trashed tickets (and a status): the count is severalCount's (the
    // largest one's counters, the others' entries of their list), the page a merge of their lists.
    const [count, rows] = await Promise.all([severalCount(several.list, several.keys, statuses, trashed), linksListPage(several.list, several.keys)]);
    return { rows, count };
  }

  for (const name of ['organisation', 'user'] as const) {
    const keys = amongCounted(p, name);
    if (!keys) continue;
    // Organisations' or customers' tickets beside counted filters (a priority, a department...):
    // the sum of their rows of migration 091's or 092's counters that match the filters, known
    // before the page (a page past the middle is read from the far end); the page walks one
    // organisation's or customer's range in the list's order where an index holds it so, testing
    // the filters (customerHint). The COUNT of their index entries it replaces read all of them (at
    // 1M, with a priority: the large organisation's 63,049, 21.6 ms a request; the busy customer's 62,549, 21.6).
    const [table, key] = KEYED_COUNTS[name];
    const count = await countersSum({ table, where: sqlCondition`${trusted(key)} IN (${keys}) AND ${allCounted(counterConditions(p))}` }, trashed);
    return { rows: await pageOf(customerHint(p, column), count), count };
  }

  if (!byCounters) {
    // The count reads the same index as the page: with a customer's index the optimiser otherwise
    // intersects it with the status index, reading every ticket of the status (50 ms at 1M); with
    // an organisation's and a priority (before migration 091's counters), with the priority's,
    // `deleted_at`'s and `merged_into_id`'s (560 ms, 26 with the hint). The page walks the
    // customer's or organisation's range in the list's order where an index holds it so.
    const hint = customerHint(p);
    const [[{ n }], rows] = await Promise.all([
      select<{ n: number | bigint }>(`SELECT COUNT(*) AS n FROM \`tickets\` AS \`Ticket\`${hint} WHERE ${whereSql(where)}`, replacements),
      page(customerHint(p, column)),
    ]);
    return { rows, count: Number(n) };
  }
  const counted = counterConditions(p);
  const cond = allCounted(counted);
  // A deep page of the list, unfiltered or narrowed by a status and one other counted filter (or a
  // pair of them) at most: where it starts, in the same statement (deepPaging).
  // The counted filters given, as asked (the condition's bound names differ per request).
  const shareKey = JSON.stringify(counted.map(([name]) => [name, p[name]]));
  // A narrowed list this process has not counted yet may match few tickets: any page but the
  // first asks where it starts (an unused position costs the statement 1-3 ms, once per filter).
  const share = lastShares.get(shareKey) ?? (counted.length ? 0 : 1);
  const mayBeDeep = q.offset > 0 && q.offset / share >= deepPaging.start;
  const valueOrder = VALUE_ORDERS.includes(column);
  const timeOrder = TIME_ORDERS.includes(column);
  const customerOrder = column === CUSTOMER_ORDER;
  const markOrder = (MARKED_ORDERS as readonly string[]).includes(column);
  const days = trashed || keyset || !mayBeDeep ? null
    : column in POSITIONED ? daySource(p, filtered) : valueOrder ? valueDaySource(p, filtered, column)
      : markOrder ? markDaySource(p, filtered) : timeOrder || customerOrder ? orderDaySource(p, filtered, column) : null;
  // The id order and a value order (each value's tickets in id order) start at a day's id bound,
  // a time order's NULL block too (timeEdge).
  const fromBound = column === 'id' || valueOrder;
  const position = days && (markOrder ? markPositionSql(desc, days) : dayPositionSql(desc, fromBound || timeOrder, days));
  const posCol = timeOrder ? orderDayCol(column as (typeof ORDER_DAY_COLUMNS)[number])
    : customerOrder ? CUSTOMER_ORDER_COL : markOrder ? markCol(column as MarkedOrder) : DAY_COLUMNS.indexOf(POSITIONED[column] ?? 'created_at');
  // With two counted filters or more, each one's matches too (`m<i>`): the page reads the narrowest's index.
  const each = counted.length > 1 ? counted.map(([, c], i) => `, SUM(IF(${sqlText(c)}, n, 0)) AS m${i}`).join('') : '';
  const counts = `SELECT SUM(IF(${sqlText(cond)}, n, 0)) AS matches, SUM(n) AS total${each} FROM ticket_list_counts WHERE state = :state`;
  type Counted = {
    matches: string | null; total: string | null; day?: number | null; ahead?: string | number | null; bound?: number | null; val?: number | null;
    mark_val?: string | null; mark_id?: number | null;
  } & Record<`m${number}`, string | null>;
  const more = days?.by ? ', d.val' : markOrder ? ', d.mark_val, d.mark_id' : '';
  const [r] = await select<Counted>(
    position ? `WITH ${position.ctes} SELECT c.*, d.day, d.ahead, d.bound${more} FROM (${counts}) c LEFT JOIN (${position.select}) d ON 1 = 1` : counts,
    {
      ...cond.replacements, ...days?.filter?.replacements, state: trashed ? 1 : 0,
      ...(days ? { posCol, posOffset: q.offset, posStatuses: days.statuses } : {}),
    },
  );
  const count = Number(r?.matches ?? 0);
  const total = Number(r?.total ?? 0);
  const reach = reachOf(count);
  if (!trashed) recordShare(shareKey, count, total);
  const deep = walkedEntries(reach, count, total) >= deepPaging.start;
  const matchesOf = (i: number) => (counted.length === 1 ? count : Number(r?.[`m${i}`] ?? 0));
  const through = counted.map(([name], i) => ({ name, matches: matchesOf(i) }))
    .reduce<{ name: string; matches: number } | null>((a, b) => (a && a.matches <= b.matches ? a : b), null);
  // One department, the narrowest counted filter, in `updated_at` order: a range of migration
  // 097's index, the other counted filters tested on its entries. It reads the department's
  // entries up to the page (a positioned deep page's from its day's edge): never more than a walk
  // of the order's index passes, nor than the department's tickets read and sorted. (Several
  // departments, one and those below it, are several ranges: their matches sorted, as before.)
  const departmentRange = !trashed && column === 'updated_at' && through?.name === 'department' && [p.department].flat().length === 1
    ? ` FORCE INDEX (${DEPARTMENT_UPDATED_INDEX})` : null;
  // A value order's index holds no filter column: from the bound, the walk reads a row for each
  // entry, about limit × total / count of them for the page's matches past the day's; reading the
  // narrowest filter's matches and sorting them reads `through.matches` entries. A filter of few
  // tickets is read so, not positioned.
  const walkable = !valueOrder || !through || (deepPaging.rowWalk * q.limit * total) / Math.max(count, 1) <= through.matches;
  // `column` is one of the sortable columns (validated), never a value from the request.
  const c = `\`Ticket\`.\`${column}\``;
  // Where the page starts: from the day counters, or a time's, the customer order's or a string
  // order's own columns (migrations 061-063); null when it is not positioned.
  const bound = r?.bound == null ? null : Number(r.bound);
  const start = !position || r.day == null || !deep ? null
    : timeOrder ? timeEdge(c, Number(r.day), bound, desc)
      : customerOrder ? customerEdge(c, Number(r.day), desc)
      : markOrder ? markEdge(c, { val: r.mark_val ?? null, id: r.mark_id == null ? null : Number(r.mark_id) }, desc)
        : walkable && (!fromBound || bound !== null) ? dayEdge(c, Number(r.day), bound ?? 0, Number(r.val), desc, fromBound, valueOrder) : null;
  if (start) {
    pageWhere = `(${pageWhere}) AND ${start.where}`;
    Object.assign(pageValues, start.values);
    return { rows: await page(departmentRange ?? ` FORCE INDEX (${sortIndex(column)})`, q.offset - Number(r.ahead), q.limit, dir, start.byId), count };
  }
  if (departmentRange) return { rows: await pageOf(departmentRange, count), count };
  // Walking the order's index reads about reach × total / count entries; reading the narrowest
  // counted filter's own index reads its matches (the others tested on each), then sorts the
  // list's: the fewer. Left to itself the optimiser walked the order's index for a LIMIT wherever
  // it guessed the matches too many to sort (a thousandth of a million tickets, a department, in
  // updated_at order: 50,000 entries, 18 ms, against 1,000 through its index, 2 ms; with a status
  // beside it 200,000, 54 ms). The trash is a range of deleted_at: no index holds it in a list
  // order (a sort of the trash).
  // A walk past what the narrowest filter's matches are is stopped, and they are read (walkedPage).
  // A wide order's index and the subject's hold every counted filter's column (migrations 018,
  // 025 and 088: COVERED_SORTS): its walk tests them on the entries and reads no ticket but the
  // page's, so it may go further (at 1M, four counted filters' deep page, a priority's in
  // `subject` order: docs/performance.md, Bounded walks).
  const perCovered = COVERED_SORTS.includes(column) ? boundedWalks.perCovered.counted : null;
  const walk = !trashed && (!filtered || (perCovered ?? 1) * count * (through?.matches ?? count) >= reach * total);
  const narrowest = !trashed && through ? ` FORCE INDEX (${FILTER_INDEXES[through.name]})` : '';
  if (walk && filtered && through) return { rows: await walkedPage(` FORCE INDEX (${sortIndex(column)})`, narrowest, through.matches, count, perCovered), count };
  return { rows: await pageOf(walk ? ` FORCE INDEX (${sortIndex(column)})` : narrowest, count), count };
}
