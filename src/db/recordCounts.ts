import { select } from './select';

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
 * sum over at most a few rows per scope.
 */
export async function countRecords(kind: CountedKind, scopeId?: number, by: CountedValue = { filter: '', value: '' }): Promise<number> {
  const [r] = await select<{ n: string | number | null }>(
    `SELECT COALESCE(SUM(n), 0) AS n FROM record_counts WHERE kind = :kind${scopeId === undefined ? '' : ' AND scope_id = :scopeId'}
      AND filter_name = :filter AND filter_value = :value`,
    { kind, scopeId, filter: by.filter, value: by.value },
  );
  return Number(r?.n ?? 0);
}
