import type { Transaction } from 'sequelize';
import { sequelize } from './sequelize';

/** InnoDB deadlock (1213) and lock wait timeout (1205): the whole transaction can run again. */
const RETRYABLE = new Set([1213, 1205]);

/** Work that runs first in every transaction attempt (the claim of an Idempotency-Key, http/idempotency.ts). */
export type TransactionStartHook = (t: Transaction) => Promise<void>;
const startHooks: TransactionStartHook[] = [];
export const onTransactionStart = (hook: TransactionStartHook): void => {
  if (!startHooks.includes(hook)) startHooks.push(hook);
};

const isRetryable = (err: any) => RETRYABLE.has(err?.parent?.errno ?? err?.original?.errno ?? err?.errno);

/**
 * Runs `work` in a transaction, and again (up to `attempts` times, after a short random pause)
 * when InnoDB picks it as a deadlock victim: concurrent writes then all succeed instead of some
 * ending in a 500. `work` must not have effects outside the transaction (the outbox's publish runs
 * after commit, so only the attempt that commits publishes).
 */
export async function transaction<T>(work: (t: Transaction) => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await sequelize().transaction(async (t) => {
        for (const hook of startHooks) await hook(t);
        return work(t);
      });
    } catch (err) {
      if (attempt >= attempts || !isRetryable(err)) throw err;
      await new Promise((r) => setTimeout(r, 10 + Math.random() * 40 * attempt));
    }
  }
}
