import { Op, type Order, type WhereOptions } from 'sequelize';
import type { ObjectSchema, Schema } from 'joi';
import { Joi, field, validate } from './validation';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 1000;

/** A list filter: the schema of its query parameter and the condition it adds. */
export interface Filter {
  schema: Schema;
  /** Returns a where condition, or null for "matches nothing". May look up ids first. */
  where(value: any): WhereOptions | null | Promise<WhereOptions | null>;
}

/** Column equals the value (exact match). */
export const equals = (column: string, schema: Schema = field.string()): Filter => ({ schema, where: (v) => ({ [column]: v }) });
/** A 0/1 column. */
export const flagFilter = (column: string): Filter => ({ schema: field.flag(), where: (v) => ({ [column]: v }) });
/** The `mixed` type: one id or a comma list. */
export const idsFilter = (column: string): Filter => ({ schema: Joi.ids(), where: (v: number[]) => ({ [column]: { [Op.in]: v } }) });

/** Escapes LIKE wildcards so a search term is matched literally. */
export const likeContains = (value: string) => `%${value.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export interface ListSpec {
  sortable: readonly string[];
  filters: Record<string, Filter>;
  dates: boolean;
}

export interface ListQuery {
  offset: number;
  limit: number;
  order: Order;
  where: WhereOptions;
  /** False when a filter can match no record: the query need not run. */
  possible: boolean;
  lang?: string;
}

export const LOCALE = /^[a-z]{2,3}(?:[_-][A-Za-z]{2,4})?$/;

const schemaCache = new WeakMap<ListSpec, ObjectSchema>();

function listSchema(spec: ListSpec): ObjectSchema {
  let schema = schemaCache.get(spec);
  if (!schema) {
    const keys: Record<string, any> = {
      start: Joi.number().integer().min(1).default(1),
      limit: Joi.number().integer().min(1).max(MAX_LIMIT).default(DEFAULT_LIMIT),
      order_column: Joi.string().valid(...new Set(['id', ...spec.sortable])).default('id'),
      order_direction: Joi.string().lowercase().valid('asc', 'desc').default('asc'),
      lang: Joi.string().pattern(LOCALE, 'locale'),
    };
    if (spec.dates) for (const k of ['created_at_min', 'created_at_max', 'updated_at_min', 'updated_at_max']) keys[k] = field.timestamp();
    for (const [name, f] of Object.entries(spec.filters)) keys[name] = f.schema;
    schema = Joi.object(keys);
    schemaCache.set(spec, schema);
  }
  return schema;
}

/**
 * PAGING (`start` is 1-based), DATES (min = since, max = before; both inclusive), the resource's
 * filters, and `order_column` checked against its list of sortable columns (never interpolated).
 */
export async function parseListQuery(spec: ListSpec, query: unknown): Promise<ListQuery> {
  const q = validate<Record<string, any>>(listSchema(spec), query);
  const and: WhereOptions[] = [];
  let possible = true;
  if (spec.dates) {
    for (const col of ['created_at', 'updated_at']) {
      if (q[`${col}_min`] !== undefined) and.push({ [col]: { [Op.gte]: q[`${col}_min`] } });
      if (q[`${col}_max`] !== undefined) and.push({ [col]: { [Op.lte]: q[`${col}_max`] } });
    }
  }
  for (const [name, f] of Object.entries(spec.filters)) {
    if (q[name] === undefined || q[name] === null) continue;
    const w = await f.where(q[name]);
    if (w === null) possible = false;
    else and.push(w);
  }
  const dir = q.order_direction === 'desc' ? 'DESC' : 'ASC';
  const order: Order = q.order_column === 'id' ? [['id', dir]] : [[q.order_column, dir], ['id', dir]];
  return { offset: q.start - 1, limit: q.limit, order, where: and.length ? { [Op.and]: and } : {}, possible, lang: q.lang };
}
