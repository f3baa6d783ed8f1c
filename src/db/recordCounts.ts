import { select } from './select';

/**
 * The kinds of record whose number migrations 056 and 057 keep, per scope: people by type and
 * organisations (scope: the brand, 0 none), ticket attachments (0: all of them), feedback (its
 * rating), webhook deliveries (the webhook); the mail log's entries (migration 059, 0) and the
 * incoming mail log's (migration 060, 0).
 */
export type CountedKind = 'user' | 'operator' | 'organisation' | 'attachment' | 'feedback' | 'delivery' | 'mail' | 'incoming';

/** The number of records of a kind, of one scope when given: a sum over at most a few rows per scope. */
export async function countRecords(kind: CountedKind, scopeId?: number): Promise<number> {
  const [r] = await select<{ n: string | number | null }>(
    `SELECT COALESCE(SUM(n), 0) AS n FROM record_counts WHERE kind = :kind${scopeId === undefined ? '' : ' AND scope_id = :scopeId'}`,
    { kind, scopeId },
  );
  return Number(r?.n ?? 0);
}
