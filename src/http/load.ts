import { Op, type FindOptions, type Transaction } from 'sequelize';
import type { Model, ModelCtor } from 'sequelize-typescript';

/** Groups rows by a key. */
export function groupBy<T, K>(rows: T[], key: (row: T) => K): Map<K, T[]> {
  const map = new Map<K, T[]>();
  for (const row of rows) {
    const k = key(row);
    const list = map.get(k);
    if (list) list.push(row);
    else map.set(k, [row]);
  }
  return map;
}

/**
 * The rows of `model` whose `column` is one of `ids`, grouped by that column: one query for a
 * whole page of records (the way every embedded relation is loaded, never one query per record).
 */
export async function loadMany<M extends Model>(model: ModelCtor<M>, column: string, ids: number[], options: FindOptions & { transaction?: Transaction } = {}): Promise<Map<number, M[]>> {
  const unique = [...new Set(ids.filter((id) => id !== null && id !== undefined))];
  if (!unique.length) return new Map();
  const rows = (await (model as any).findAll({ ...options, where: { ...(options.where as object), [column]: { [Op.in]: unique } }, order: options.order ?? [['id' in (model as any).getAttributes() ? 'id' : column, 'ASC']] })) as M[];
  // Rows are model instances, or plain objects with `raw: true`.
  return groupBy(rows, (r) => (typeof r.get === 'function' ? r.get(column) : (r as any)[column]) as number);
}

/** Records by id, in one query. */
export async function loadById<M extends Model>(model: ModelCtor<M>, ids: Array<number | null | undefined>, options: FindOptions = {}): Promise<Map<number, M>> {
  const unique = [...new Set(ids.filter((id): id is number => id !== null && id !== undefined))];
  if (!unique.length) return new Map();
  const rows = (await (model as any).findAll({ ...options, where: { ...(options.where as object), id: { [Op.in]: unique } } })) as M[];
  return new Map(rows.map((r) => [r.get('id') as number, r]));
}
