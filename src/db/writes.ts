import type { Transaction } from 'sequelize';

/**
 * How many statements that write (INSERT, UPDATE, DELETE, REPLACE) each transaction has run,
 * counted by the `afterQuery` hook of db/sequelize.ts; a savepoint's count also to the
 * transactions it is part of. An update that runs none changed nothing: Sequelize saves no row
 * whose values are those stored, and the reads and locks (`SELECT ... FOR UPDATE`) are not writes.
 * A statement is counted whether or not it changed a row (a list replaced by the same list is
 * counted): the count errs on the side of a change.
 */
const counts = new WeakMap<Transaction, number>();
const WRITE = /^\s*(?:INSERT|UPDATE|DELETE|REPLACE)\b/i;

type Nested = Transaction & { parent?: Transaction };

export function countWrite(options: { transaction?: Transaction | null }, query: { sql?: unknown }): void {
  if (!options.transaction || typeof query.sql !== 'string' || !WRITE.test(query.sql)) return;
  for (let t: Nested | undefined = options.transaction; t; t = t.parent as Nested | undefined) counts.set(t, (counts.get(t) ?? 0) + 1);
}

/** The writes `t` has run so far: compare two readings to know whether work in between wrote anything. */
export const writeCount = (t: Transaction): number => counts.get(t) ?? 0;
