import { countQueries } from '../../src/db/sequelize';
import type { TestApi } from './app';

/** Drops the statements that are not a list's work: authentication records a token's use at most once a minute. */
export const listQueries = (queries: string[]) => queries.filter((q) => !/UPDATE\s+`?api_tokens`?/i.test(q));

/** The SQL statements of one list request (GET `path` with `query`), and its response. */
export async function measureList(api: TestApi, path: string, query: Record<string, unknown>) {
  const { result, queries } = await countQueries(async () => api.get(path, query));
  return { res: result, queries: listQueries(queries) };
}
