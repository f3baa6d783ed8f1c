import { execute, type SelectValues } from './select';

/**
 * Runs `sql`, a DELETE that ends `LIMIT ${batch}`, until it deletes fewer rows than that, each
 * statement on its own (no transaction): the housekeeping prunes, short statements that each lock
 * a stretch of an index, never one that holds a whole backlog. Returns how many rows were deleted.
 */
export async function deleteInBatches(sql: string, values: SelectValues, batch: number): Promise<number> {
  let deleted = 0;
  for (;;) {
    const n = await execute(`${sql} LIMIT ${batch}`, values, undefined);
    deleted += n;
    if (n < batch) return deleted;
  }
}
