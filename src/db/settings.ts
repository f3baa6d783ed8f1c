import type { Transaction } from 'sequelize';
import { Setting } from './models';

/**
 * The settings object of one scope: every value a string. Inside a transaction, pass it: a second
 * connection taken from the pool while the transaction holds one can wait for ever when every
 * connection is held by a transaction waiting on this one's locks.
 */
export async function readSettings(scope: string, transaction?: Transaction): Promise<Record<string, string>> {
  const rows = await Setting.findAll({ where: { scope }, order: [['name', 'ASC']], transaction });
  return Object.fromEntries(rows.map((r) => [r.name, r.value]));
}
