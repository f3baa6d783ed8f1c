import type { Transaction } from 'sequelize';
import type { Model, ModelCtor } from 'sequelize-typescript';

type Value = string | number | boolean | null | undefined;
type Row = Record<string, Value>;

export interface SetRowsOptions {
  /**
   * The owner was created in this transaction: it has no rows, so neither the read nor the DELETE
   * runs (their gap locks would make concurrent creates deadlock).
   */
  fresh?: boolean;
  /** The rows' order is part of the value (the API lists them in id order): the same rows in another order are a change. */
  ordered?: boolean;
}

// A column's value as the driver returns it and as a request gives it (a flag as 1 or true, an
// id as 5 or '5') compare alike; null stays apart from ''.
const canonical = (v: Value) => (v === null || v === undefined ? null : typeof v === 'boolean' ? Number(v) : String(v));
const keyOf = (row: Row, columns: readonly string[]) => JSON.stringify(columns.map((c) => canonical(row[c])));

/**
 * Sets the rows an owner has in a table of its own (a user's phones, a department's groups, a
 * filter's conditions) to exactly `rows` (each holds `columns`; the owner's columns are added).
 * The owner's stored rows are read first, with a lock (what a concurrent update committed counts):
 * when they hold the same values nothing is written, so an update that sends a list unchanged
 * changes nothing (no `*.updated` event, no new `updated_at`: db/writes.ts counts writes);
 * otherwise they are deleted and `rows` inserted.
 *
 * Returns the stored rows' values before, or undefined when nothing was written.
 */
export async function setRows<R extends Row>(
  model: ModelCtor<Model>, owner: Row, columns: readonly string[], rows: R[], transaction: Transaction, options: SetRowsOptions = {},
): Promise<Row[] | undefined> {
  const stored = options.fresh ? [] : await model.findAll({
    attributes: [...columns], where: owner, transaction, lock: transaction.LOCK.UPDATE, raw: true,
    ...(options.ordered ? { order: [['id', 'ASC']] } : {}),
  }) as unknown as Row[];
  const before = stored.map((r) => keyOf(r, columns));
  const after = rows.map((r) => keyOf(r, columns));
  if (!options.ordered) { before.sort(); after.sort(); }
  if (before.length === after.length && before.every((k, i) => k === after[i])) return undefined;
  if (stored.length) await model.destroy({ where: owner, transaction });
  if (rows.length) await model.bulkCreate(rows.map((r) => ({ ...r, ...owner })), { transaction });
  return stored;
}

/**
 * `setRows` for a table that links an owner to one value per row (ids, names): `values` are
 * taken once each, in their order. Returns the values stored before, or undefined when unchanged.
 */
export async function setLinks<V extends string | number>(
  model: ModelCtor<Model>, owner: Row, column: string, values: readonly V[], transaction: Transaction, options: SetRowsOptions = {},
): Promise<V[] | undefined> {
  const before = await setRows(model, owner, [column], [...new Set(values)].map((v) => ({ [column]: v })), transaction, options);
  return before?.map((r) => r[column] as V);
}
