import { Op, type Order, type WhereOptions } from 'sequelize';
import type { ObjectSchema, Schema } from 'joi';
import { isBound, type BoundCondition } from '../db/sql';
import { Joi, LOCALE, field, validate } from '../lib/validation';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 1000;

/** A condition a filter adds: a Sequelize where, or SQL with bound values (a subquery). */
export type Condition = WhereOptions | BoundCondition;

/** A list filter: the schema of its query parameter and the condition it adds. */
export interface Filter {
  schema: Schema;
  /**
   * Returns a condition, or null for "matches nothing". Conditions on other tables are subqueries
   * (`sqlCondition`), never id lists loaded into Node: a filter stays one query at any size.
   */
  where(value: any): Condition | null | Promise<Condition | null>;
}

/** Column equals the value (exact match). */
export const equals = (column: string, schema: Schema = field.string()): Filter => ({ schema, where: (v) => ({ [column]: v }) });
/** A 0/1 column. */
export const flagFilter = (column: string): Filter => ({ schema: field.flag(), where: (v) => ({ [column]: v }) });
/** The `mixed` type: one id or a comma list. */
export const idsFilter = (column: string): Filter => ({ schema: Joi.ids(), where: (v: number[]) => ({ [column]: { [Op.in]: v } }) });

/** DATES: the columns a list with `dates` narrows by, each with `<column>_min` and `<column>_max`. */
const DATE_COLUMNS = ['created_at', 'updated_at'] as const;
export const DATE_PARAMS: readonly string[] = DATE_COLUMNS.flatMap((c) => [`${c}_min`, `${c}_max`]);

/** The parameters that may narrow a list: its filters, DATES when it has them, and its own parameters (read by its scope). */
export const narrowingParams = (spec: ListSpec): string[] => [...Object.keys(spec.filters), ...(spec.dates ? DATE_PARAMS : []), ...Object.keys(spec.params ?? {})];

export interface ListSpec {
  sortable: readonly string[];
  filters: Record<string, Filter>;
  dates: boolean;
  /** Query parameters a list reads besides its filters (e.g. `include_trashed`). */
  params?: Record<string, Schema>;
  /** Takes `after_id` (keyset paging, beyond the spec): the page after that record in the list's order. */
  keyset?: boolean;
}

export interface ListQuery {
  offset: number;
  limit: number;
  order: Order;
  where: WhereOptions;
  /** Bound values of the subquery conditions in `where`: pass them with the query. */
  replacements: Record<string, unknown>;
  /** Every validated query parameter (a resource's read context sees them). */
  params: Record<string, any>;
  /** False when a filter can match no record: the query need not run. */
  possible: boolean;
  lang?: string;
}

/** `lang`, on every read: translated fields in this locale (`fr`, `pt_BR`); anything else is `The lang format is invalid.` */
export const langParam = () => Joi.string().pattern(LOCALE, 'locale').description('Present translated fields in this locale.');

/** PAGING and ordering: `order_column` is `id` or one of `sortable`, `order_direction` `asc` or `desc`. */
export function pagingParams(sortable: readonly string[]) {
  return {
    start: Joi.number().integer().min(1).default(1).description('PAGING: the first record to return, counting from 1.'),
    // Above the maximum is clamped, not refused: real clients ask for `limit=1000000000`.
    limit: Joi.number().unsafe().integer().min(1).default(DEFAULT_LIMIT).description(`PAGING: how many records to return (at most ${MAX_LIMIT}; more is clamped).`),
    order_column: Joi.string().valid(...new Set(['id', ...sortable])).default('id').description('The column to order by.'),
    order_direction: Joi.string().lowercase().valid('asc', 'desc').default('asc'),
  };
}

const schemaCache = new WeakMap<ListSpec, ObjectSchema>();

/** The query string a list validates: PAGING, ordering, `lang`, DATES, filters and params (route records carry it). */
export function listSchema(spec: ListSpec): ObjectSchema {
  let schema = schemaCache.get(spec);
  if (!schema) {
    const keys: Record<string, any> = {
      ...pagingParams(spec.sortable),
      lang: langParam(),
    };
    if (spec.keyset) keys.after_id = field.id().description('The page after this record, in the list\'s order (keyset paging; beyond the spec).');
    if (spec.dates) {
      for (const k of DATE_COLUMNS) {
        keys[`${k}_min`] = field.timestamp().description(`DATES: records with ${k} at or after this UNIX time.`);
        keys[`${k}_max`] = field.timestamp().description(`DATES: records with ${k} at or before this UNIX time.`);
      }
    }
    for (const [name, f] of Object.entries(spec.filters)) keys[name] = f.schema;
    Object.assign(keys, spec.params);
    schema = Joi.object(keys);
    schemaCache.set(spec, schema);
  }
  return schema;
}

/**
 * The query without its empty parameters: `search=` or `limit=` is a parameter not given, not a
 * required one missing (form builders and the n8n node send every field of their form). A value
 * of spaces alone (`search=%20%20`) is empty too: no parameter means anything by spaces alone.
 */
function givenParameters(query: unknown): unknown {
  if (!query || typeof query !== 'object' || Array.isArray(query)) return query;
  return Object.fromEntries(Object.entries(query).filter(([, v]) => typeof v !== 'string' || v.trim() !== ''));
}

/** A query string checked against its schema, its empty parameters not given (as every list reads them). */
export function validateQuery<T = Record<string, any>>(schema: ObjectSchema, query: unknown): T {
  return validate<T>(schema, givenParameters(query));
}

/**
 * PAGING (`start` is 1-based), DATES (min = since, max = before; both inclusive), the resource's
 * filters, and `order_column` checked against its list of sortable columns (never interpolated).
 */
export async function parseListQuery(spec: ListSpec, query: unknown): Promise<ListQuery> {
  const q = validateQuery<Record<string, any>>(listSchema(spec), query);
  const and: WhereOptions[] = [];
  const replacements: Record<string, unknown> = {};
  let possible = true;
  if (spec.dates) {
    for (const col of DATE_COLUMNS) {
      if (q[`${col}_min`] !== undefined) and.push({ [col]: { [Op.gte]: q[`${col}_min`] } });
      if (q[`${col}_max`] !== undefined) and.push({ [col]: { [Op.lte]: q[`${col}_max`] } });
    }
  }
  for (const [name, f] of Object.entries(spec.filters)) {
    if (q[name] === undefined || q[name] === null) continue;
    const w = await f.where(q[name]);
    if (w === null) possible = false;
    else if (isBound(w)) {
      and.push(w.literal as WhereOptions);
      Object.assign(replacements, w.replacements);
    } else and.push(w);
  }
  const dir = q.order_direction === 'desc' ? 'DESC' : 'ASC';
  const order: Order = q.order_column === 'id' ? [['id', dir]] : [[q.order_column, dir], ['id', dir]];
  return {
    offset: q.start - 1, limit: Math.min(q.limit, MAX_LIMIT), order, where: and.length ? { [Op.and]: and } : {}, replacements, possible,
    lang: q.lang, params: q,
  };
}
