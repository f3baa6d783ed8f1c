import { Op, type Transaction } from 'sequelize';
import type { ModelCtor } from 'sequelize-typescript';
import { ValidationError } from '../errors';

/**
 * A name that must be unique among the model's rows, as the column's collation compares them (case-
 * and accent-insensitively): `The name has already been taken.` A unique key on the column holds
 * the rule when two requests race; the loser gets the same message (db/uniqueKeys.ts).
 */
export async function assertNameFree(model: ModelCtor, name: string, exceptId: number | null, transaction?: Transaction): Promise<void> {
  const taken = await (model as any).findOne({ attributes: ['id'], where: { name, ...(exceptId ? { id: { [Op.ne]: exceptId } } : {}) }, transaction });
  if (taken) throw new ValidationError('The name has already been taken.');
}
