import { Op, type Transaction, type WhereOptions } from 'sequelize';
import type { ModelCtor } from 'sequelize-typescript';
import { invalid } from '../errors';

/**
 * Checks that ids name existing records (one query), else a 422 in the spec's words:
 * `The selected <field> is invalid.`, or `The selected <field>.<n> is invalid.` for the n-th of a list.
 */
export async function assertExist(model: ModelCtor, field: string, ids: number | number[] | null | undefined, transaction?: Transaction, scope?: WhereOptions): Promise<void> {
  if (ids === null || ids === undefined) return;
  const list = Array.isArray(ids) ? ids : [ids];
  if (!list.length) return;
  const found = await (model as any).findAll({
    attributes: ['id'], where: scope ? { [Op.and]: [scope, { id: { [Op.in]: list } }] } : { id: { [Op.in]: list } }, transaction,
  });
  const have = new Set(found.map((r: { id: number }) => r.id));
  const missing = list.findIndex((id) => !have.has(id));
  if (missing >= 0) throw invalid(Array.isArray(ids) ? `${field}.${missing}` : field);
}
