import { Transaction } from 'sequelize';
import { sequelize } from './sequelize';
import { errnoOf, isLockConflict } from './errors';

/** Work that runs first in every transaction attempt (the claim of an Idempotency-Key, http/idempotency.ts). */
export type TransactionStartHook = (t: Transaction) => Promise<void>;
const startHooks: TransactionStartHook[] = [];
export const onTransactionStart = (hook: TransactionStartHook): void => {
  if (!startHooks.includes(hook)) startHooks.push(hook);
};

type Nested = Transaction & { parent?: Transaction; finished?: 'commit' | 'rollback' };

/** `t` and the transactions it is a savepoint of, innermost first. */
const chainOf = (t: Transaction): Nested[] => {
  const chain: Nested[] = [];
  for (let at: Nested | undefined = t; at; at = at.parent as Nested | undefined) chain.push(at);
  return chain;
};

/** The transaction whose COMMIT makes work done in `t` durable (`t` itself when it is no savepoint). */
export const outermost = (t: Transaction): Transaction => chainOf(t).pop()!;

/**
 * Runs `hook` once the work done in `t` is durable: after the outermost transaction's COMMIT, and
 * never when `t` or a savepoint between it and the outermost was rolled back. (Sequelize runs a
 * savepoint's own `afterCommit` hooks when the savepoint is released, before the outer COMMIT and
 * even when the outer transaction then rolls back: a job published there can run before its data
 * is visible, or for data that never was.) Every after-commit side effect goes through here.
 */
export function afterOutermostCommit(t: Transaction, hook: () => void | Promise<unknown>): void {
  // The commit awaits a hook that returns a promise (a cache version bump the next request must see).
  outermost(t).afterCommit(async () => {
    if (rolledBack(t)) return;
    await hook();
  });
}

/** Whether `t` or a savepoint between it and the outermost transaction was rolled back (its work is gone). */
export const rolledBack = (t: Transaction): boolean => chainOf(t).some((x) => x.finished === 'rollback');

/**
 * A foreign key naming a row that is gone (1452): the row was deleted after this transaction's
 * checks read it (a department deleted while a ticket is created in it). Run once more, the checks
 * see it gone and answer what a later request gets (`The selected department is invalid.`), not
 * the foreign key's generic message; a second time is a statement that names no row at all.
 */
const ER_NO_REFERENCED_ROW = 1452;

/** A lock conflict (./errors.ts: a deadlock, a lock wait timeout, a snapshot behind a lock) runs the whole transaction again. */
const isRetryable = (err: any, attempt: number) => isLockConflict(err) || (attempt === 1 && errnoOf(err) === ER_NO_REFERENCED_ROW);

/**
 * Runs `work` in a transaction, and again (up to `attempts` times, after a short random pause)
 * when InnoDB picks it as a deadlock victim: concurrent writes then all succeed instead of some
 * ending in a 500 (and when its snapshot is behind a row it locked: SnapshotBehindLock; once
 * when a row it names was deleted meanwhile). `work` must not have
 * effects outside the transaction (the outbox's publish runs after commit, so only the attempt
 * that commits publishes).
 */
export async function transaction<T>(work: (t: Transaction) => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await sequelize().transaction(async (t) => {
        for (const hook of startHooks) await hook(t);
        return work(t);
      });
    } catch (err) {
      if (attempt >= attempts || !isRetryable(err, attempt)) throw err;
      await new Promise((r) => setTimeout(r, 10 + Math.random() * 40 * attempt));
    }
  }
}

const memos = new WeakMap<Transaction, Map<string, Promise<unknown>>>();

/**
 * A read of rows the transaction does not write (configuration: settings, webhooks, spam rules),
 * run once per outermost transaction and shared by its savepoints: under REPEATABLE READ a
 * repeated plain read returns the same rows anyway, so this only saves the statements (a batch of
 * imported mails reads them once, not once per mail). A failed read is not kept.
 */
export function onceInTransaction<T>(t: Transaction, key: string, read: () => Promise<T>): Promise<T> {
  const top = outermost(t);
  let memo = memos.get(top);
  if (!memo) memos.set(top, (memo = new Map()));
  const kept = memo.get(key) as Promise<T> | undefined;
  if (kept) return kept;
  const reading = read();
  memo.set(key, reading);
  reading.catch(() => memo!.delete(key));
  return reading;
}

/**
 * Reads done together on the primary with what other transactions have written and not committed
 * yet (a dirty read, READ UNCOMMITTED): how the event feed and the export tell that a transaction
 * still open holds something in a page's span (core/event.ts, export/changes.ts). Reads only.
 */
export function readUncommitted<T>(work: (t: Transaction) => Promise<T>): Promise<T> {
  return sequelize().transaction({ isolationLevel: Transaction.ISOLATION_LEVELS.READ_UNCOMMITTED }, work);
}
