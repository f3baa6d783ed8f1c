import { select } from './select';

/** The kinds of record whose number migration 056 keeps per brand: people by type, organisations. */
export type CountedKind = 'user' | 'operator' | 'organisation';

/** The number of records of a kind, of one brand when given: a sum over at most a few rows per brand. */
export async function countRecords(kind: CountedKind, brandId?: number): Promise<number> {
  const [r] = await select<{ n: string | number | null }>(
    `SELECT COALESCE(SUM(n), 0) AS n FROM record_counts WHERE kind = :kind${brandId === undefined ? '' : ' AND brand_id = :brandId'}`,
    { kind, brandId },
  );
  return Number(r?.n ?? 0);
}
