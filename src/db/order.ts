import { fn, col, type Transaction, type WhereOptions } from 'sequelize';
import type { ModelCtor } from 'sequelize-typescript';

/**
 * The position after the last record (of `where`: a kind, a brand): a record created without
 * `order` goes at the end, after those already there (0 would put it before every record at 1 and up).
 * A locking read: creates of the same kind at once read one after the other, each after the
 * last one's commit, so each goes after the one before (a plain read gave six parallel creates
 * the same `order`, found by a black-box audit). These are configuration tables of a few rows.
 */
export async function nextOrder(model: ModelCtor, transaction: Transaction, where?: WhereOptions): Promise<number> {
  const row = await (model as any).findOne({ attributes: [[fn('MAX', col('order')), 'max']], where, transaction, lock: transaction.LOCK.UPDATE, raw: true });
  const max = Number(row?.max);
  return (Number.isFinite(max) ? max : 0) + 1;
}
