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

/**
 * A many-to-many relation for a page of owners, in two queries: the link rows, then the linked
 * records. Returns, per owner id, the linked records in the order of their ids.
 */
export async function loadLinked<L extends Model, T extends Model>(
  link: ModelCtor<L>, ownerKey: string, targetKey: string, ownerIds: number[], target: ModelCtor<T>, options: FindOptions = {},
): Promise<Map<number, T[]>> {
  const links = await loadMany(link, ownerKey, ownerIds, { order: [[ownerKey, 'ASC'], [targetKey, 'ASC']] });
  const targets = await loadById(target, [...links.values()].flat().map((l) => l.get(targetKey) as number), options);
  const out = new Map<number, T[]>();
  for (const [ownerId, rows] of links) {
    out.set(ownerId, rows.map((l) => targets.get(l.get(targetKey) as number)).filter((t): t is T => t !== undefined));
  }
  return out;
}
