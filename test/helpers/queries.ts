import { QueryTypes } from 'sequelize';
import { capture, explainOf, type Statement } from '../../bench/capture';
import { countQueries, sequelize } from '../../src/db/sequelize';
import { bumpAccessVersions } from '../../src/auth/accessCache';
import { bumpDefinitionsVersion } from '../../src/db/definitions';
import { ENTRY_TTL_MS } from '../../src/db/versionedCache';
import { bumpConfigVersion } from '../../src/ticket/configCache';
import type { TestApi } from './app';

/** Drops the statements that are not a list's work: authentication records a token's use at most once a minute. */
export const listQueries = (queries: string[]) => queries.filter((q) => !/UPDATE\s+`?api_tokens`?/i.test(q));

/**
 * Makes every per-process cache entry (tokens, ban answers, the configuration a ticket embeds)
 * stale, so that the next request loads them all at once. An entry lives ENTRY_TTL_MS from its
 * load: on a loaded machine one loaded long before a measured request may expire during it and
 * cost a read that is not the request's work. Freshly loaded by a warm-up just before, none can.
 */
export async function freshCaches(): Promise<void> {
  await bumpAccessVersions();
  await bumpConfigVersion();
  await bumpDefinitionsVersion();
}

/**
 * The statements transactions send while `work` runs (backquotes left out), in waves: statements
 * sent before any statement was answered are one wave, one round trip (the driver pipelines them).
 * bench/capture.ts records them, as it does for the benchmark's floor.
 */
export async function transactionWaves<T>(work: () => PromiseLike<T>): Promise<{ result: T; waves: string[][] }> {
  const { result, statements } = await capture(async () => work());
  const waves = new Map<number, string[]>();
  for (const { sql, conn, wave } of statements) {
    if (conn !== null) waves.set(wave, [...(waves.get(wave) ?? []), sql.replace(/`/g, '')]);
  }
  return { result, waves: [...waves.values()] };
}

let refreshedAt = 0;

/**
 * Counts the statements of `request` warm: the same request made just before loads what it
 * caches, and every entry is at most half its lifetime old (freshCaches, at most every
 * ENTRY_TTL_MS / 2), so none can expire before or during the counted request: what is counted is
 * the request's own work.
 */
export async function countWarm<T>(request: () => PromiseLike<T>): Promise<{ result: T; queries: string[] }> {
  if (Date.now() - refreshedAt > ENTRY_TTL_MS / 2) {
    await freshCaches();
    refreshedAt = Date.now();
  }
  await request();
  return countQueries(async () => request());
}

/** The SQL statements of one list request (GET `path` with `query`), warm, and its response. */
export async function measureList(api: TestApi, path: string, query: Record<string, unknown>) {
  const { result, queries } = await countWarm(() => api.get(path, query));
  return { res: result, queries: listQueries(queries) };
}

/**
 * The plan of the page a builder list ran (`loadPage`, src/db/load.ts) among `statements`: the
 * rows of its EXPLAIN that read `table` for the page. Of a deferred join, those of its inner
 * SELECT; its wrapper is checked here to read that page's rows by primary key and nothing else.
 */
export async function builderPagePlan(statements: Statement[], table: string): Promise<Array<Record<string, any>>> {
  const page = statements.find((st) => st.sql.includes(`FROM \`${table}\``) && /ORDER BY[^;]*LIMIT/.test(st.sql));
  expect(page).toBeDefined();
  const rows = await sequelize().query<Record<string, any>>(explainOf(page!.sql), { replacements: page!.params, type: QueryTypes.SELECT });
  const inner = rows.filter((r) => r.select_type === 'DERIVED');
  if (!inner.length) return rows;
  expect(rows.filter((r) => r.select_type !== 'DERIVED').map((r) => [String(r.table).startsWith('<derived') ? 'page' : 'rows', r.type, r.key]))
    .toEqual([['page', 'ALL', null], ['rows', 'eq_ref', 'PRIMARY']]);
  return inner;
}
