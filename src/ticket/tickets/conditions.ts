import type { TicketFilter, TicketFilterCondition } from '../../db/models';
import { allOf, anyOf, sqlCondition, trusted, type BoundCondition } from '../../db/sql';
import { optionHolders } from '../../db/searchGrams';
import { canonicalEmail } from '../../lib/validation';

/**
 * Ticket conditions as SQL over `tickets` with bound values: the conditions of saved ticket
 * filters (the list's `filter` parameter and the filters' `ticket_count`) and who sees a ticket.
 * Conditions on other tables are subqueries; every statement using them reads `tickets AS Ticket`
 * (the alias Sequelize gives the model), which correlated subqueries name.
 */

export const TICKET_ALIAS = '`Ticket`';

const TRUE = (): BoundCondition => sqlCondition`1 = 1`;

/** LIKE wildcards in a value matched literally. */
const escapeLike = (v: string) => v.replace(/[\\%_]/g, (c) => `\\${c}`);

/** An option id as the API writes it in a value (migration 071's parts): no sign, no zero in front. */
const OPTION_ID = /^[1-9][0-9]{0,9}$/;

const POSITIVE: Record<string, string> = { not_equals: 'equals', not_contains: 'contains' };

/** A text comparison of a column (a name written in the code) with a value. */
function textMatch(column: string, operator: string, value: string): BoundCondition {
  const c = trusted(column);
  switch (operator) {
    case 'equals': return sqlCondition`${c} = ${value}`;
    case 'not_equals': return sqlCondition`NOT (${c} <=> ${value})`;
    case 'contains': return sqlCondition`${c} LIKE ${`%${escapeLike(value)}%`}`;
    case 'not_contains': return sqlCondition`(${c} IS NULL OR ${c} NOT LIKE ${`%${escapeLike(value)}%`})`;
    case 'begins_with': return sqlCondition`${c} LIKE ${`${escapeLike(value)}%`}`;
    case 'ends_with': return sqlCondition`${c} LIKE ${`%${escapeLike(value)}`}`;
    default: throw new Error(`Unknown text operator ${operator}`);
  }
}

/**
 * A text condition on rows of another table that belong to the ticket (`membership` turns a
 * condition on those rows into a condition on tickets). A negative operator is the ticket having
 * no such row: "no message contains x", not "some message does not contain x".
 */
function throughRows(operator: string, value: string, column: string, membership: (match: BoundCondition) => BoundCondition): BoundCondition {
  const positive = POSITIVE[operator];
  const match = membership(textMatch(column, positive ?? operator, value));
  return positive ? sqlCondition`NOT ${match}` : match;
}

/**
 * Tickets no operator is assigned to, and tickets with at least one: `tickets.assigned`, kept from
 * `ticket_assignees` by triggers (migration 025). The same column in the list's counters.
 */
export const unassigned = (): BoundCondition => sqlCondition`assigned = 0`;
export const assignedToAnyone = (): BoundCondition => sqlCondition`assigned = 1`;

/**
 * A statement selecting the departments `roots` and every one below them (their ids, as `id`):
 * a search's `department:` name (search/compile.ts), and the search engine's `department:` filter
 * inside its own statement (search/listed.ts). `roots`: ids, or a subquery that selects them.
 */
export const departmentTree = (roots: number[] | BoundCondition): BoundCondition => sqlCondition`WITH RECURSIVE tree AS (
    SELECT id FROM departments WHERE id IN (${roots})
    UNION SELECT d.id FROM departments d JOIN tree ON d.parent_id = tree.id
  ) SELECT id FROM tree`;

/** A department's id and the ids of those below it, by department (departmentsBelow.ts, departmentTrees). */
export type DepartmentTrees = ReadonlyMap<number, readonly number[]>;

/**
 * The SQL of one stored condition. A department's condition holds the ids `trees` gives for it
 * (departmentTrees of the same conditions: the optimiser sizes a list of ids by the department's
 * index, a recursive subquery it cannot size).
 */
export function conditionSql(c: Pick<TicketFilterCondition, 'item' | 'operator' | 'value' | 'field_id'>, at: number, trees: DepartmentTrees): BoundCondition {
  const v = c.value ?? '';
  const n = Number(v);
  const not = c.operator === 'not_equals';
  const id = (column: string, nullable = false) => {
    const col = trusted(column);
    if (!not) return sqlCondition`${col} = ${n}`;
    return nullable ? sqlCondition`(${col} IS NULL OR ${col} <> ${n})` : sqlCondition`${col} <> ${n}`;
  };
  const member = (inner: BoundCondition) => (not ? sqlCondition`id NOT IN ${inner}` : sqlCondition`id IN ${inner}`);
  switch (c.item) {
    case 'status': return id('status_id');
    case 'priority': return id('priority_id');
    case 'channel': return id('channel_id');
    // A department with those below it, as the list's `department` and the search's `department:`.
    case 'department': {
      const within = sqlCondition`department_id IN (${[...trees.get(n)!]})`;
      return not ? sqlCondition`NOT ${within}` : within;
    }
    case 'brand': return id('brand_id');
    case 'user': return id('user_id');
    case 'sla_plan': return id('sla_plan_id', true);
    case 'tag': return member(sqlCondition`SELECT ticket_id FROM ticket_tag_links WHERE tag_id = ${n}`);
    case 'watching': return member(sqlCondition`SELECT ticket_id FROM ticket_watchers WHERE user_id = ${n}`);
    case 'assigned':
      if (n === -1) return not ? assignedToAnyone() : unassigned();
      return member(sqlCondition`SELECT ticket_id FROM ticket_assignees WHERE user_id = ${n}`);
    // The customer's organisation, kept on the ticket (migration 086).
    case 'organisation': return id('organisation_id', true);
    case 'number': return textMatch('number', c.operator, v);
    case 'subject': return textMatch('subject', c.operator, v);
    case 'cc': {
      // cc is a JSON array of addresses: an address is `"<address>"` in its text.
      const quoted = { equals: `"${v}"`, not_equals: `"${v}"`, begins_with: `"${v}`, ends_with: `${v}"` }[c.operator] ?? v;
      const op = c.operator === 'equals' || c.operator === 'begins_with' || c.operator === 'ends_with' ? 'contains'
        : c.operator === 'not_equals' ? 'not_contains' : c.operator;
      return textMatch('cc', op, quoted);
    }
    case 'message':
      return throughRows(c.operator, v, 'text', (m) => sqlCondition`id IN (SELECT ticket_id FROM ticket_messages WHERE is_draft = 0 AND ${m})`);
    case 'user_email':
      // Addresses are stored lower-cased (NFC, punycode domain) and compared exactly (binary
      // collation): the value, stored as written, is put in that form for every operator (the
      // list's `user_email` lower-cases its value too), not the column, whose index a function
      // would keep unused.
      return throughRows(c.operator, canonicalEmail(v), 'email', (m) => sqlCondition`(user_id IN (SELECT id FROM users WHERE ${m}) OR user_id IN (SELECT user_id FROM user_emails WHERE ${m}))`);
    case 'user_name':
      return throughRows(c.operator, v, "CONCAT_WS(' ', firstname, lastname)", (m) => sqlCondition`user_id IN (SELECT id FROM users WHERE ${m})`);
    case 'locked': return sqlCondition`locked = ${n}`;
    case 'merged': return sqlCondition`merged = ${n}`;
    case 'internal': return sqlCondition`internal = ${n}`;
    case 'has_attachments':
      return n === 1 ? sqlCondition`id IN (SELECT ticket_id FROM ticket_attachments)` : sqlCondition`id NOT IN (SELECT ticket_id FROM ticket_attachments)`;
    case 'created_at':
    case 'updated_at':
    case 'last_reply_time':
    case 'due_time':
    case 'resolved_time': {
      const col = trusted(c.item);
      // Strictly before or after the moment, as the search's `created<` and `created>` (NULL: neither).
      return c.operator === 'before' ? sqlCondition`${col} < ${n}` : sqlCondition`${col} > ${n}`;
    }
    case 'hours_since_created':
    case 'hours_since_updated':
    case 'hours_since_last_reply': {
      const col = trusted({ hours_since_created: 'created_at', hours_since_updated: 'updated_at', hours_since_last_reply: 'last_reply_time' }[c.item]);
      const threshold = at - n * 3600;
      // More hours since the moment: the moment is before the threshold.
      return c.operator === 'greater' ? sqlCondition`${col} < ${threshold}` : sqlCondition`${col} > ${threshold}`;
    }
    case 'customfield': {
      const field = c.field_id ?? 0;
      // The values of an encrypted field are ciphertext: no condition on them matches.
      const unsealed = sqlCondition`field_id IN (SELECT id FROM custom_fields WHERE encrypted = 0)`;
      const values = (m: BoundCondition) => sqlCondition`id IN (SELECT owner_id FROM custom_field_values WHERE field_id = ${field} AND ${m} AND ${unsealed})`;
      if (c.operator === 'equals' || c.operator === 'not_equals') {
        // Option types hold comma-separated option ids: a value equals an id when it is one of
        // them. Every value that is a list of ids as the API writes them is in migration 071's
        // index of ids (a value of one id too, whatever the field's type), so an id is a range of
        // that index (FIND_IN_SET read every value of the field); any other text equals as a
        // whole (a text value `a,b` does not equal `a`).
        const eq = OPTION_ID.test(v) ? sqlCondition`id IN (${optionHolders(field, [Number(v)])} AND ${unsealed})` : values(sqlCondition`value = ${v}`);
        return c.operator === 'equals' ? eq : sqlCondition`NOT ${eq}`;
      }
      return throughRows(c.operator, v, 'value', values);
    }
    default:
      // An item this code does not know matches nothing rather than everything.
      return sqlCondition`1 = 0`;
  }
}

/** A filter's conditions by group, each group's in their order. */
function groupsOf(rows: TicketFilterCondition[]): Map<number, TicketFilterCondition[]> {
  const groups = new Map<number, TicketFilterCondition[]>();
  for (const r of [...rows].sort((a, b) => a.group_no - b.group_no || a.position - b.position)) {
    groups.set(r.group_no, [...(groups.get(r.group_no) ?? []), r]);
  }
  return groups;
}

/**
 * A filter's conditions: rules of a group joined by the group's type (0 all, 1 any), groups by
 * the filter's `condition_group_type` (0 all, 1 any). No condition: every ticket.
 */
export function filterConditionSql(filter: Pick<TicketFilter, 'condition_group_type'>, rows: TicketFilterCondition[], at: number, trees: DepartmentTrees): BoundCondition {
  const groups = groupsOf(rows);
  if (!groups.size) return TRUE();
  const parts = [...groups.values()].map((rules) => {
    const sql = rules.map((r) => conditionSql(r, at, trees));
    return rules[0].group_type === 1 ? anyOf(sql) : sqlCondition`${allOf(sql)}`;
  });
  return filter.condition_group_type === 1 ? anyOf(parts) : sqlCondition`${allOf(parts)}`;
}

/** The items whose `equals` condition is a filter of the ticket list by the same name and value. */
const LIST_FILTER_ITEMS = new Set(['status', 'priority', 'department', 'brand', 'channel', 'user', 'tag', 'assigned', 'internal', 'locked']);

/** A saved filter's conditions as the ticket list's filters (listFiltersOf): ids and flags by item, and `customfield`. */
export type SavedListFilters = Record<string, number | Record<number, number>>;

/**
 * The ticket list's filters that match what a saved filter's conditions match, or null: every
 * condition must hold (the groups joined by "all", or one group; each group's rules by "all", or
 * one rule), each is `equals` of an item the list filters by (an id; `assigned` -1 for the
 * unassigned; `internal` and `locked` 0 or 1), no item twice. No condition: no filter (the
 * filter matches every ticket, as filterConditionSql's). A `customfield` condition of one of
 * `optionFields` (ticket option fields, not encrypted) equal to an option id is the list's
 * `customfield` naming that option: both are the range of migration 071's index (one such
 * condition: the list's counters hold one option).
 */
export function listFiltersOf(filter: Pick<TicketFilter, 'condition_group_type'>, rows: TicketFilterCondition[], optionFields: ReadonlySet<number>): SavedListFilters | null {
  const groups = groupsOf(rows);
  if (groups.size > 1 && filter.condition_group_type === 1) return null;
  if ([...groups.values()].some((rules) => rules.length > 1 && rules[0].group_type === 1)) return null;
  const filters: SavedListFilters = {};
  for (const c of rows) {
    if (c.operator !== 'equals' || Object.hasOwn(filters, c.item)) return null;
    if (c.item === 'customfield') {
      if (!optionFields.has(c.field_id ?? 0) || !OPTION_ID.test(c.value ?? '')) return null;
      filters.customfield = { [c.field_id!]: Number(c.value) };
      continue;
    }
    const n = Number(c.value);
    if (!LIST_FILTER_ITEMS.has(c.item) || !Number.isInteger(n)) return null;
    const valid = c.item === 'internal' || c.item === 'locked' ? n === 0 || n === 1 : n > 0 || (c.item === 'assigned' && n === -1);
    if (!valid) return null;
    filters[c.item] = n;
  }
  return filters;
}
