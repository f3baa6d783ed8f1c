import type { Transaction } from 'sequelize';
import type { ModelCtor } from 'sequelize-typescript';
import { Joi } from '../lib/validation';

/** Field shapes shared by the ticket configuration resources. */

/** `#rrggbb` (or `#rgb`), kept as sent; empty is not given (the default on create, unchanged on update). */
export const colourField = () => Joi.string().trim().empty('').pattern(/^#(?:[0-9a-fA-F]{3}){1,2}$/);

/** A display position. */
export const orderField = () => Joi.number().integer().min(0).max(2147483647);

/** The position after the last record: a record created without `order` goes at the end. */
export async function nextOrder(model: ModelCtor, transaction: Transaction): Promise<number> {
  const max = await (model as any).max('order', { transaction });
  return (Number.isFinite(Number(max)) ? Number(max) : 0) + 1;
}
