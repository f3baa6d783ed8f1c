import type { Transaction, WhereOptions } from 'sequelize';
import type { ModelCtor } from 'sequelize-typescript';

/**
 * The position after the last record (of `where`: a kind, a brand): a record created without
 * `order` goes at the end, after those already there (0 would put it before every record at 1 and up).
 */
export async function nextOrder(model: ModelCtor, transaction: Transaction, where?: WhereOptions): Promise<number> {
  const max = await (model as any).max('order', { where, transaction });
  return (Number.isFinite(Number(max)) ? Number(max) : 0) + 1;
}
