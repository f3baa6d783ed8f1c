import { type Transaction, type WhereOptions } from 'sequelize';
import type { ModelCtor } from 'sequelize-typescript';
import {
  Brand, Channel, CustomField, Department, Group, Organisation, SlaPlan, TicketFilter, TicketFilterCondition, TicketFilterGroup,
  TicketPriority, TicketStatus, TicketTag, User,
} from '../db/models';
import { setLinks, setRows } from '../db/links';
import { fieldLabel, invalid } from '../errors';
import { assertExist } from '../db/exists';
import { langParam, type Filter } from '../http/listQuery';
import { groupBy, loadLinked, loadMany } from '../db/load';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { pick, sent } from '../lib/serialize';
import { sqlCondition, sqlFragment, sqlText, trusted, type BoundCondition } from '../db/sql';
import { Joi, MAX_ID, characters, field, toFlag } from '../lib/validation';
import { serializeGroup } from '../user/people/presenter';
import { select } from '../db/select';
import { TICKET_ALIAS, filterConditionSql, listFiltersOf } from './tickets/conditions';
import { countersCondition, keyedCounters } from './tickets/listPage';
import { countWithinView, countedApart, onlyTheirs, operatorView } from './tickets/operatorVisibility';
import { departmentTrees } from './tickets/departmentsBelow';
import { ticketSettings } from './ticketSettings';
import { sharedWithGroupsOf } from './filterUse';
import { plainOptionFields } from '../customfields/values';

/**
 * Ticket filters (`/api/ticket/filter`): the spec's list, show (with `operator`) and delete, and
 * create and update beyond it.
 *
 * Who sees a filter: a filter with an owner (`user_id`) is private to that operator; a shared
 * one (`user_id` null) is seen by every operator when `all_groups` is 1, else by the members of
 * its operator `groups`. No groups means every operator, as for canned responses (SupportPal:
 * "leave blank to make visible to all operators"): a write leaving none stores `all_groups` 1.
 *
 * Conditions come in groups: `condition_group_type` 0 means every group must match, 1 any group;
 * inside a group, `type` 0 means every condition must match, 1 any. A condition is an item of the
 * ticket, an operator and a value, from the whitelist FILTER_ITEMS:
 *   conditions[0][type]=0
 *   conditions[0][rules][0][item]=status & [operator]=equals & [value]=2
 *   conditions[0][rules][1][item]=customfield & [field_id]=7 & [operator]=contains & [value]=VIP
 */

export const FILTER_FIELDS = ['id', 'name', 'user_id', 'all_groups', 'condition_group_type', 'created_at', 'updated_at'] as const;

/** What a condition's value is, and the operators that compare it. */
export type ValueKind = 'id' | 'text' | 'flag' | 'date' | 'hours' | 'customfield';

export const OPERATORS: Record<ValueKind, readonly string[]> = {
  id: ['equals', 'not_equals'],
  text: ['equals', 'not_equals', 'contains', 'not_contains', 'begins_with', 'ends_with'],
  flag: ['equals'],
  date: ['before', 'after'],
  hours: ['greater', 'less'],
  customfield: ['equals', 'not_equals', 'contains', 'not_contains'],
};

interface ItemSpec {
  kind: ValueKind;
  /** The records an id names, checked on write. */
  model?: ModelCtor;
  scope?: WhereOptions;
  /** Besides ids: -1 (no operator assigned). */
  allowNone?: boolean;
}

/** The condition items (SupportPal's catalogue, research §9); ids are checked against their records. */
export const FILTER_ITEMS: Record<string, ItemSpec> = {
  status: { kind: 'id', model: TicketStatus },
  priority: { kind: 'id', model: TicketPriority },
  tag: { kind: 'id', model: TicketTag },
  channel: { kind: 'id', model: Channel },
  department: { kind: 'id', model: Department },
  brand: { kind: 'id', model: Brand },
  sla_plan: { kind: 'id', model: SlaPlan },
  user: { kind: 'id', model: User, scope: { type: 'user' } },
  organisation: { kind: 'id', model: Organisation },
  assigned: { kind: 'id', model: User, scope: { type: 'operator' }, allowNone: true },
  watching: { kind: 'id', model: User, scope: { type: 'operator' } },
  number: { kind: 'text' },
  subject: { kind: 'text' },
  message: { kind: 'text' },
  user_email: { kind: 'text' },
  user_name: { kind: 'text' },
  cc: { kind: 'text' },
  locked: { kind: 'flag' },
  merged: { kind: 'flag' },
  internal: { kind: 'flag' },
  has_attachments: { kind: 'flag' },
  created_at: { kind: 'date' },
  updated_at: { kind: 'date' },
  last_reply_time: { kind: 'date' },
  due_time: { kind: 'date' },
  resolved_time: { kind: 'date' },
  hours_since_created: { kind: 'hours' },
  hours_since_updated: { kind: 'hours' },
  hours_since_last_reply: { kind: 'hours' },
  customfield: { kind: 'customfield' },
};

const MAX_GROUPS = 20;
const MAX_RULES = 50;
const TEXT_MAX = 255;

export interface ConditionInput {
  item: string;
  operator: string;
  value: string;
  field_id: number | null;
}

export interface ConditionGroupInput {
  type: 0 | 1;
  rules: ConditionInput[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isBlank = (v: unknown) => v === undefined || v === null || v === '';

/** `{0: a, 1: b}` (bracket form) or an array, as a list. */
function listOf(value: unknown, name: string): unknown[] {
  if (Array.isArray(value)) return value;
  if (isObject(value) && Object.keys(value).every((k) => /^\d{1,6}$/.test(k))) {
    return Object.keys(value).map(Number).sort((a, b) => a - b).map((k) => value[String(k)]);
  }
  throw new Error(`The ${name} must be an array.`);
}

function integer(raw: unknown): number | null {
  if (typeof raw === 'number') return Number.isSafeInteger(raw) ? raw : null;
  if (typeof raw === 'string' && /^\s*-?\d{1,15}\s*$/.test(raw)) return Number(raw);
  return null;
}

/** One condition, checked against the whitelist; the value normalised to its stored text. */
function conditionOf(raw: unknown, at: string): ConditionInput {
  const name = (k: string) => fieldLabel(`${at}.${k}`);
  if (!isObject(raw)) throw new Error(`The ${fieldLabel(at)} must have an item, an operator and a value.`);
  const item = typeof raw.item === 'string' ? raw.item.trim() : raw.item;
  if (isBlank(item)) throw new Error(`The ${name('item')} field is required.`);
  const spec = typeof item === 'string' ? FILTER_ITEMS[item] : undefined;
  if (!spec) throw new Error(`The selected ${name('item')} is invalid.`);
  const operator = typeof raw.operator === 'string' ? raw.operator.trim().toLowerCase() : raw.operator;
  if (isBlank(operator)) throw new Error(`The ${name('operator')} field is required.`);
  if (!OPERATORS[spec.kind].includes(operator as string)) {
    throw new Error(`The selected ${name('operator')} is invalid: ${item} takes ${OPERATORS[spec.kind].join(', ')}.`);
  }
  const value = raw.value;
  if (isBlank(value)) throw new Error(`The ${name('value')} field is required.`);
  const n = integer(value);
  let stored: string;
  switch (spec.kind) {
    case 'id':
      if (n === null || !((n >= 1 && n <= MAX_ID) || (spec.allowNone && n === -1))) throw new Error(`The selected ${name('value')} is invalid.`);
      stored = String(n);
      break;
    case 'flag': {
      const flag = toFlag(typeof value === 'string' ? value.trim() : value);
      if (flag === null) throw new Error(`The ${name('value')} field must be true or false.`);
      stored = String(flag);
      break;
    }
    case 'date':
      if (n === null || n < 0 || n > MAX_ID) throw new Error(`The ${name('value')} must be a UNIX timestamp.`);
      stored = String(n);
      break;
    case 'hours':
      if (n === null || n < 0 || n > 1_000_000) throw new Error(`The ${name('value')} must be a whole number of hours.`);
      stored = String(n);
      break;
    default:
      if (typeof value !== 'string' && typeof value !== 'number') throw new Error(`The ${name('value')} must be a string.`);
      stored = String(value).trim();
      if (!stored) throw new Error(`The ${name('value')} field is required.`);
      if (characters(stored) > TEXT_MAX) throw new Error(`The ${name('value')} may not be greater than ${TEXT_MAX} characters.`);
  }
  let fieldId: number | null = null;
  if (spec.kind === 'customfield') {
    fieldId = integer(raw.field_id);
    if (isBlank(raw.field_id)) throw new Error(`The ${name('field_id')} field is required when item is customfield.`);
    if (fieldId === null || fieldId < 1 || fieldId > MAX_ID) throw new Error(`The selected ${name('field_id')} is invalid.`);
  }
  return { item: item as string, operator: operator as string, value: stored, field_id: fieldId };
}

/** `conditions[g][type]`, `conditions[g][rules][n][item|operator|value|field_id]`. An empty value: none. */
const conditionsInput = () => Joi.any().custom((value) => {
  if (isBlank(value)) return [];
  const groups = listOf(value, 'conditions');
  if (groups.length > MAX_GROUPS) throw new Error(`The conditions may not have more than ${MAX_GROUPS} groups.`);
  return groups.map((group, g): ConditionGroupInput => {
    const at = `conditions.${g}`;
    if (!isObject(group)) throw new Error(`The ${at} must be a group with rules (${at.replace(/\.(\d+)/, '[$1]')}[rules][0][item]=status).`);
    const type = isBlank(group.type) ? 0 : integer(group.type);
    if (type !== 0 && type !== 1) throw new Error(`The selected ${at}.type is invalid.`);
    if (isBlank(group.rules)) throw new Error(`The ${at}.rules field is required.`);
    const rules = listOf(group.rules, `${at}.rules`);
    if (!rules.length) throw new Error(`The ${at}.rules field is required.`);
    if (rules.length > MAX_RULES) throw new Error(`The ${at}.rules may not have more than ${MAX_RULES} items.`);
    return { type, rules: rules.map((rule, n) => conditionOf(rule, `${at}.rules.${n}`)) };
  });
});

/**
 * The ids the conditions name exist (one query per kind of record named). The rows are share-locked:
 * a deletion of one of them then either commits first (and the read sees it gone) or waits for
 * this filter, whose conditions its own check then sees (filterUse.ts): a filter never keeps an
 * id that is gone.
 */
async function assertConditionTargets(groups: ConditionGroupInput[], transaction: Transaction): Promise<void> {
  const checks = new Map<string, Array<{ id: number; at: string }>>();
  groups.forEach((group, g) => group.rules.forEach((rule, n) => {
    const spec = FILTER_ITEMS[rule.item];
    const at = `conditions.${g}.rules.${n}`;
    if (spec.kind === 'customfield') checks.set('customfield', [...(checks.get('customfield') ?? []), { id: rule.field_id!, at: `${at}.field_id` }]);
    else if (spec.model && rule.value !== '-1') checks.set(rule.item, [...(checks.get(rule.item) ?? []), { id: Number(rule.value), at: `${at}.value` }]);
  }));
  for (const [item, refs] of checks) {
    const model = item === 'customfield' ? CustomField : FILTER_ITEMS[item].model!;
    const scope = item === 'customfield' ? { kind: 'ticket' } : FILTER_ITEMS[item].scope;
    const ids = [...new Set(refs.map((r) => r.id))];
    const found = new Set((await (model as any).findAll({ attributes: ['id'], where: { ...scope, id: ids }, transaction, lock: transaction.LOCK.SHARE })).map((r: { id: number }) => r.id));
    const missing = refs.find((r) => !found.has(r.id));
    if (missing) throw invalid(missing.at);
  }
}

const CONDITION_COLUMNS = ['group_no', 'group_type', 'position', 'item', 'operator', 'value', 'field_id'];

async function replaceConditions(filterId: number, groups: ConditionGroupInput[], transaction: Transaction, fresh = false) {
  await assertConditionTargets(groups, transaction);
  const rows = groups.flatMap((group, g) => group.rules.map((rule, n) => ({ group_no: g, group_type: group.type, position: n, ...rule })));
  await setRows(TicketFilterCondition, { filter_id: filterId }, CONDITION_COLUMNS, rows, transaction, { fresh });
}

/**
 * The `all_groups` a write stores: as sent (0 by default) while the filter has `groups`, 1 when it
 * has none (every operator, not none: a filter no operator could see).
 */
const allGroupsOf = (sent: number | undefined, groups: number) => (groups ? sent ?? 0 : 1);

async function replaceGroups(filterId: number, ids: number[], transaction: Transaction, fresh = false) {
  await assertExist(Group, 'groups', ids, transaction, { type: 'operator' });
  await setLinks(TicketFilterGroup, { filter_id: filterId }, 'group_id', ids, transaction, { fresh });
}

/** The filters an operator sees (a subquery: owner, all groups, or one of the operator's groups). */
export const visibleTo = (operatorId: number): BoundCondition => sqlCondition`user_id = ${operatorId} OR (user_id IS NULL AND (all_groups = 1 OR id IN (${sharedWithGroupsOf(operatorId)})))`;

/**
 * The filters the `operator` of the list or show sees; an id that is no operator is refused (`The
 * selected operator is invalid.`, as the ticket list's `filter_operator`), not taken for an
 * operator who sees nothing.
 */
async function seenByOperator(operatorId: number): Promise<BoundCondition> {
  await assertExist(User, 'operator', operatorId, undefined, { type: 'operator' });
  return visibleTo(operatorId);
}

/** `operator`: only the filters that operator sees. */
const operatorFilter: Filter = { schema: field.id(), where: seenByOperator };

/**
 * How many tickets each filter matches for an operator, as SupportPal's sidebar counts them: the
 * filter's conditions, over the tickets the operator sees that are not in the trash, not merged
 * into another and not resolved (status other than the `default_resolved_status` setting). Four
 * statements for any number of filters: the setting, the filters' conditions, what the operator
 * sees (operatorVisibility.ts), and one SELECT with a subquery per filter (a COUNT, or a sum of
 * the list's counters).
 */
export async function countTicketsMatchingMany(filters: TicketFilter[], operatorId: number): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  if (!filters.length) return counts;
  const [settings, rows, view, optionFields] = await Promise.all([
    ticketSettings(),
    TicketFilterCondition.findAll({ where: { filter_id: filters.map((f) => f.id) } }),
    operatorView(operatorId),
    plainOptionFields('ticket'),
  ]);
  const at = Math.floor(Date.now() / 1000);
  const resolved = settings.defaultResolvedStatus;
  const notResolved = resolved === null ? sqlCondition`1 = 1` : sqlCondition`status_id <> ${resolved}`;
  const listed = sqlCondition`deleted_at IS NULL AND merged_into_id IS NULL AND ${notResolved}`;
  const byFilter = groupBy(rows, (r) => r.filter_id);
  const trees = await departmentTrees(rows);
  const countTickets = (f: TicketFilter, seen: BoundCondition | null) => sqlCondition`SELECT COUNT(*) FROM tickets AS ${trusted(TICKET_ALIAS)}
    WHERE ${listed} AND ${seen ?? sqlCondition`1 = 1`} AND ${filterConditionSql(f, byFilter.get(f.id) ?? [], at, trees)}`;
  const parts = await Promise.all(filters.map(async (f) => {
    // Conditions that are the list's counted filters: a sum of the list's counters (a filter of
    // a status at 1M counted every open ticket of it, 90 ms); for an operator who sees part of
    // the tickets, the counters of their departments and a count of their own and assigned
    // tickets elsewhere, while those are few (the set's share of the operator's view).
    const listFilters = listFiltersOf(f, byFilter.get(f.id) ?? [], optionFields);
    const seesAll = view === null || (listFilters !== null && onlyTheirs(view, listFilters));
    const counted = listFilters && (await countersCondition(listFilters));
    const sum = (where: BoundCondition) => sqlCondition`SELECT COALESCE(SUM(n), 0) FROM ticket_list_counts WHERE state = 0 AND ${notResolved} AND ${where}`;
    if (counted && seesAll) return sum(counted);
    // One operator's or customer's tickets ("my tickets", and a status) or one option's (and
    // counted filters): their own counters.
    const keyed = listFilters ? await keyedCounters(listFilters) : null;
    if (keyed && seesAll) return sqlCondition`SELECT COALESCE(SUM(n), 0) FROM ${trusted(keyed.table)} WHERE state = 0 AND ${notResolved} AND ${keyed.where}`;
    // Counters by department (the list's, or an option's: migration 076) within the operator's view.
    const byDepartment = counted ? { table: 'ticket_list_counts' as const, where: counted }
      : keyed?.table === 'ticket_option_counts' ? { table: keyed.table, where: keyed.where } : null;
    if (byDepartment && view && countedApart(view)) {
      const inView = { table: byDepartment.table, where: sqlFragment`state = 0 AND ${notResolved} AND ${byDepartment.where}` };
      return countWithinView(view, inView, (outside) => countTickets(f, outside));
    }
    return countTickets(f, view && !seesAll ? view.condition : null);
  }));
  const columns = parts.map((p, i) => `${sqlText(p)} AS c${i}`).join(', ');
  const [result] = await select(`SELECT ${columns}`, Object.assign({}, ...parts.map((p) => p.replacements)));
  filters.forEach((f, i) => counts.set(f.id, Number(result[`c${i}`])));
  return counts;
}

/** How many tickets one filter matches for an operator (see countTicketsMatchingMany). */
export async function countTicketsMatching(filter: TicketFilter, operatorId: number): Promise<number | null> {
  return (await countTicketsMatchingMany([filter], operatorId)).get(filter.id) ?? null;
}

/** A condition as responses show it: ids, flags, dates and hours as integers, text as text. */
function serializeCondition(c: TicketFilterCondition): Record<string, any> {
  const kind = FILTER_ITEMS[c.item]?.kind;
  const value = kind === 'text' || kind === 'customfield' || kind === undefined ? c.value : Number(c.value);
  return { item: c.item, ...(kind === 'customfield' ? { field_id: c.field_id } : {}), operator: c.operator, value };
}

/** The conditions of a filter in their groups. */
export function conditionGroups(rows: TicketFilterCondition[]): Array<{ type: number; rules: Array<Record<string, any>> }> {
  const groups: Array<{ type: number; rules: Array<Record<string, any>> }> = [];
  let last: number | null = null;
  for (const row of [...rows].sort((a, b) => a.group_no - b.group_no || a.position - b.position)) {
    if (row.group_no !== last) groups.push({ type: row.group_type, rules: [] });
    last = row.group_no;
    groups[groups.length - 1].rules.push(serializeCondition(row));
  }
  return groups;
}

interface Related {
  counts: Map<number, number | null>;
  groups?: Map<number, Group[]>;
  conditions?: Map<number, TicketFilterCondition[]>;
}

const optionalRef = () => Joi.number().integer().min(0).max(MAX_ID).allow(null, '');

const bodyFields = {
  user_id: optionalRef(),
  groups: field.idArray().allow('', null),
  conditions: conditionsInput(),
};

export const filterResource: ResourceDef<TicketFilter, Related> = {
  path: '/filter',
  model: TicketFilter,
  label: 'filter',
  sortable: ['name', 'user_id', 'created_at', 'updated_at'],
  filters: { operator: operatorFilter },
  showQuery: Joi.object({ lang: langParam(), operator: field.id() }),
  showScope: (query) => (query.operator === undefined ? undefined : seenByOperator(query.operator)),
  createSchema: Joi.object({
    ...bodyFields,
    name: field.string().required(),
    all_groups: field.flag(),
    condition_group_type: Joi.number().integer().valid(0, 1).default(0),
  }),
  updateSchema: Joi.object({
    ...bodyFields,
    name: field.string(),
    all_groups: field.flag(),
    condition_group_type: Joi.number().integer().valid(0, 1),
  }),

  async create(input, { transaction }) {
    const owner = input.user_id ? input.user_id : null;
    await assertExist(User, 'user_id', owner, transaction, { type: 'operator' });
    const groups: number[] = input.groups ?? [];
    const filter = await TicketFilter.create({
      ...sent(input, ['name', 'condition_group_type']), user_id: owner, all_groups: allGroupsOf(input.all_groups, groups.length),
    }, { transaction });
    await replaceGroups(filter.id, groups, transaction, true);
    await replaceConditions(filter.id, input.conditions ?? [], transaction, true);
    return filter;
  },

  async update(filter, input, { transaction }) {
    const values: Record<string, any> = sent(input, ['name', 'condition_group_type', 'all_groups']);
    if (input.user_id !== undefined) {
      values.user_id = input.user_id ? input.user_id : null;
      await assertExist(User, 'user_id', values.user_id, transaction, { type: 'operator' });
    }
    if (input.groups !== undefined) values.all_groups = allGroupsOf(input.all_groups, input.groups?.length ?? 0);
    else if (input.all_groups === 0) values.all_groups = allGroupsOf(0, await TicketFilterGroup.count({ where: { filter_id: filter.id }, transaction }));
    await filter.update(values, { transaction });
    if (input.groups !== undefined) await replaceGroups(filter.id, input.groups ?? [], transaction);
    if (input.conditions !== undefined) await replaceConditions(filter.id, input.conditions, transaction);
  },

  async load(filters, ctx) {
    const ids = filters.map((f) => f.id);
    const operatorId: number | undefined = ctx.query.operator;
    const counts: Map<number, number | null> = operatorId === undefined ? new Map() : await countTicketsMatchingMany(filters, operatorId);
    if (ctx.view === 'list') return { counts };
    const [groups, conditions] = await Promise.all([
      loadLinked(TicketFilterGroup, 'filter_id', 'group_id', ids, Group),
      loadMany(TicketFilterCondition, 'filter_id', ids, { order: [['filter_id', 'ASC'], ['group_no', 'ASC'], ['position', 'ASC']] }),
    ]);
    return { counts, groups, conditions };
  },

  serialize(filter, rel, ctx) {
    const out: Record<string, any> = { ...pick(filter, FILTER_FIELDS), ticket_count: rel.counts.get(filter.id) ?? null };
    if (ctx.view === 'list') return out;
    out.groups = (rel.groups?.get(filter.id) ?? []).map((g) => ({ ...serializeGroup(g), pivot: { filter_id: filter.id, group_id: g.id } }));
    out.conditions = conditionGroups(rel.conditions?.get(filter.id) ?? []);
    return out;
  },
};

export const filterRouter = resourceRouter(filterResource);

