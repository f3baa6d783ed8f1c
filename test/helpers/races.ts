import { QueryTypes, type Transaction } from 'sequelize';
import { sequelize } from '../../src/db/sequelize';
import { waitFor } from './smtp';

/** How many statements of this database holding `text` (a LIKE pattern's inside) are running. */
export async function runningStatements(text: string): Promise<number> {
  const [row] = await sequelize().query<{ n: number }>(
    "SELECT COUNT(*) AS n FROM information_schema.processlist WHERE db = DATABASE() AND info LIKE ? AND info NOT LIKE '%processlist%'",
    { type: QueryTypes.SELECT, replacements: [`%${text}%`] },
  );
  return Number(row.n);
}

/**
 * A race run the same way every time: `first` runs in a transaction left open; then `second`
 * starts, and is waited for until one of its statements holding `waitsAt` is running (blocked on
 * the first's locks); then the first commits. Resolves with what `second` resolves with.
 */
export async function raceAfterHeld<T>(first: (t: Transaction) => Promise<unknown>, second: () => Promise<T>, waitsAt: string, what: string): Promise<T> {
  const held = await sequelize().transaction();
  let pending: Promise<T> | undefined;
  try {
    await first(held);
    pending = second();
    pending.catch(() => undefined); // awaited below; not an unhandled rejection if the wait fails first
    await waitFor(async () => (await runningStatements(waitsAt)) > 0, 10000, what);
    await held.commit();
  } finally {
    if (!(held as unknown as { finished?: string }).finished) await held.rollback();
  }
  return pending;
}

/**
 * `work` done in a transaction left open, as a long one is (a user's delete with thousands of
 * tickets): what it wrote is invisible to others, and its locks held, until `commit`.
 */
export async function leftOpen(work: (t: Transaction) => Promise<unknown>): Promise<{ commit(): Promise<void> }> {
  const t = await sequelize().transaction();
  try {
    await work(t);
  } catch (err) {
    await t.rollback();
    throw err;
  }
  return { commit: () => t.commit() };
}
