import { select } from './select';
import { sqlCondition, sqlFragment, sqlText, trusted, type BoundCondition } from './sql';

/**
 * The kinds of record whose number migrations 056 and 057 keep, per scope: people by type and
 * organisations (scope: the brand, 0 none), ticket attachments (0: all of them), feedback (its
 * rating), webhook deliveries (the webhook); the mail log's entries (migration 059, 0) and the
 * incoming mail log's (migration 060, 0). Migration 066 keeps some of them by a filter's value
 * too: people by `active`, `email_verified`, `country` and `language_code`, deliveries by
 * `status` and `event`, the mail log by `type`, the incoming mail log by `decision`. Migration
 * 067 counts article comments (0), by `status` too; migration 077 each article's (kind
 * `article_comment`, scope the article), by `status` too; migration 079 IP bans (0), by `type` too.
 */
export type CountedKind = 'user' | 'operator' | 'organisation' | 'attachment' | 'feedback' | 'delivery' | 'mail' | 'incoming' | 'comment' | 'article_comment' | 'ipban';

/** A filter whose values are counted apart, and the value (as the list's filter compares it: the row's collation does). */
export interface CountedValue { filter: string; value: string }

/**
 * The number of records of a kind, of one scope when given, of one filter's value when given: a
 * sum over at most a few rows per scope, as an expression to place in a statement (one that
 * subtracts other counts from it reads them all in one snapshot).
 */
export function recordCountSum(kind: CountedKind, scopeId?: number, by: CountedValue = { filter: '', value: '' }): BoundCondition {
  const scope = scopeId === undefined ? trusted('') : sqlFragment` AND scope_id = ${scopeId}`;
  return sqlCondition`SELECT COALESCE(SUM(n), 0) FROM record_counts WHERE kind = ${kind}${scope}
      AND filter_name = ${by.filter} AND filter_value = ${by.value}`;
}

/** recordCountSum's number, read on its own. */
export async function countRecords(kind: CountedKind, scopeId?: number, by?: CountedValue): Promise<number> {
  const sum = recordCountSum(kind, scopeId, by);
  const [r] = await select<{ n: string | number | null }>(`SELECT ${sqlText(sum)} AS n`, sum.replacements);
  return Number(r?.n ?? 0);
}
