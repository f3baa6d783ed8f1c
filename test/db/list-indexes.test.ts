/**
 * Every list the resource builder serves reads a page of a table that grows (with the tickets,
 * the mail, the people, the attacks) through an index, whatever column it is sorted by and
 * whichever one of its filters narrows it: each sortable column and each filter's column leads
 * an index (after the list's scope: a webhook's deliveries, the people of a type), so the page is
 * a range, or the filter's matches sorted when they are fewer than the order's walk would read
 * (docs/performance.md: a sort bounded by √(reach × total)). The ticket list has its own plans
 * (test/ticket/ticket-list-plans.test.ts); the tables of configuration, which an operator writes
 * by hand and which stay small, are named below with why.
 */
import { allRoutes } from '../../src/http/routes';
import type { ResourceDef } from '../../src/http/resource';
import type { Filter } from '../../src/http/listQuery';
import { capture } from '../../bench/capture';
import { execute, select } from '../../src/db/select';
import { useApi } from '../helpers/app';
import { expectList } from '../helpers/envelope';
import { builderPagePlan } from '../helpers/queries';

const api = useApi();

/** Tables an operator writes by hand, a few to a few hundred rows: a sort of them is a page's work. */
const CONFIGURATION = new Set([
  'brands', 'languages', 'spam_rules', 'ip_whitelist', 'webhooks', 'departments', 'department_emails', 'sla_plans', 'ticket_filters',
  'custom_fields', 'custom_field_options', 'roles', 'permissions', 'groups', 'selfservice_types', 'selfservice_tags',
  'selfservice_categories', 'article_attachments',
  // The mail catcher keeps the newest MAIL_CATCHER_KEEP mails.
  'caught_mails',
]);

/** The column a filter compares with one value, when it is a plain equality (others read other tables). */
async function columnOf(filter: Filter): Promise<string | undefined> {
  for (const sample of [1, 'x', [1]]) {
    try {
      const where = await filter.where(sample);
      if (where && typeof where === 'object' && !Array.isArray(where) && Object.keys(where).length === 1) return Object.keys(where)[0];
    } catch { /* not this sample's type */ }
  }
  return undefined;
}

/** A list parameter the list cannot do without (the messages of one ticket): its pages are one record's. */
const requiresParam = (def: ResourceDef<any, any>) => [...Object.values(def.filters ?? {}).map((f) => f.schema), ...Object.values(def.listParams ?? {})]
  .some((schema) => (schema.describe().flags as { presence?: string } | undefined)?.presence === 'required');

it("leads an index with each sortable column and each filter's column of every list of a growing table, after the list's scope", async () => {
  const indexes = await select<{ t: string; cols: string }>(
    `SELECT TABLE_NAME AS t, GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX) AS cols FROM information_schema.STATISTICS
      WHERE TABLE_SCHEMA = DATABASE() GROUP BY TABLE_NAME, INDEX_NAME`, {});
  const defs = new Set(allRoutes().filter((r) => r.action === 'list' && r.resource).map((r) => r.resource as ResourceDef<any, any>));
  const checked: string[] = [];
  const missing: string[] = [];
  const listedTables = new Set<string>();
  for (const def of defs) {
    const table = String((def.model as any).getTableName());
    listedTables.add(table);
    if (def.listPage || CONFIGURATION.has(table) || requiresParam(def)) continue;
    const prefix = [...Object.keys(def.scope ?? {}), ...(def.parent ? [def.parent.column] : [])];
    const led = (column: string) => [[...prefix, column], [column]].some((want) => indexes.some((i) => i.t === table
      && want.every((c, n) => i.cols.split(',')[n] === c)));
    for (const column of def.sortable ?? []) if (!led(column)) missing.push(`${def.path} (${table}): order ${column}`);
    for (const [name, filter] of Object.entries(def.filters ?? {})) {
      const column = await columnOf(filter);
      if (column && !led(column)) missing.push(`${def.path} (${table}): filter ${name} (${column})`);
    }
    checked.push(table);
  }
  expect(missing).toEqual([]);
  // The check reaches the lists that grow, and names no table that is not listed.
  expect(checked).toEqual(expect.arrayContaining(['ip_bans', 'users', 'organisations', 'webhook_deliveries', 'outbox', 'incoming_mails', 'ticket_feedback', 'article_comments', 'articles']));
  expect([...CONFIGURATION].filter((t) => !listedTables.has(t))).toEqual([]);
});

it("reads a deep page in another order than the id from that order's index (a deferred join), not a sort of the table", async () => {
  // Enough bans that reading every column of the skipped ones costs the optimiser more than a sort of them all.
  const BANS = 20_000;
  await execute(`INSERT INTO ip_bans (ip, reason, type, expiry, created_at, updated_at)
    SELECT CONCAT('10.77.', seq DIV 256, '.', seq MOD 256), 'deferred page', IF(seq MOD 10 = 0, 1, 0), IF(seq MOD 10 = 0, NULL, 1800000000 + (seq * 7919) MOD 100000),
      1700000000 + (seq * 31) MOD 900000, 1700000000 + (seq * 37) MOD 900000
    FROM seq_1_to_${BANS}`, {}, undefined);
  try {
    await select('ANALYZE TABLE ip_bans', {});
    const bans = await select<Record<string, any>>('SELECT * FROM ip_bans', {});
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ order_column: 'updated_at', order_direction: 'desc' }, 'ip_bans_updated_at'],
      [{ order_column: 'created_at', order_direction: 'asc' }, 'ip_bans_created_at'],
      [{ order_column: 'expiry', order_direction: 'asc' }, 'ip_bans_expiry'],
      [{ order_column: 'expiry', order_direction: 'desc', type: 0 }, 'ip_bans_type_expiry'],
    ];
    for (const [query, key] of cases) {
      const q = { ...query, start: 2001, limit: 20 };
      const { statements, result } = await capture(() => api.get('/api/core/ipban', q));
      const plan = await builderPagePlan(statements, 'ip_bans');
      expect({ q, plan: plan.map((r) => ({ key: r.key, filesort: /filesort/.test(r.Extra ?? '') })) }).toEqual({ q, plan: [{ key, filesort: false }] });
      // The page asked: in that order (NULLs first ascending, as MariaDB sorts them), ties by id, from the 2001st.
      const column = String(query.order_column);
      const sign = query.order_direction === 'asc' ? 1 : -1;
      const val = (b: Record<string, any>) => (b[column] === null ? -Infinity : Number(b[column]));
      const want = bans.filter((b) => query.type === undefined || b.type === query.type)
        .sort((a, b) => sign * (val(a) - val(b) || a.id - b.id)).slice(2000, 2020).map((b) => b.id);
      expect({ q, ids: expectList(result).map((b: any) => b.id) }).toEqual({ q, ids: want });
    }
  } finally {
    await execute("DELETE FROM ip_bans WHERE reason = 'deferred page'", {}, undefined);
  }
});

it("reads a deep page of people in a name or date order from an index that holds their type, not each skipped person's row (migration 080)", async () => {
  const PEOPLE = 1_500;
  const tag = `deep${Date.now().toString(36)}`;
  await execute(`INSERT INTO users (type, brand_id, firstname, lastname, email, created_at, updated_at)
    SELECT 'user', 1, IF(seq MOD 50 = 0, NULL, CONCAT(ELT(1 + seq MOD 5, 'ann', 'Ann', 'Émile', 'o''brien', 'de la '), (seq * 7) MOD 997)),
      CONCAT(ELT(1 + seq MOD 4, 'Lee', 'lée', 'Van der ', 'Ö'), (seq * 13) MOD 991), CONCAT(:tag, seq, '@example.com'),
      1700000000 + (seq * 31) MOD 9000, 1700000000 + (seq * 37) MOD 9000
    FROM seq_1_to_${PEOPLE}`, { tag }, undefined);
  try {
    await select('ANALYZE TABLE users', {});
    for (const column of ['firstname', 'lastname', 'created_at', 'updated_at']) {
      for (const order_direction of ['asc', 'desc']) {
        const q = { order_column: column, order_direction, start: 1001, limit: 10 };
        const { statements, result } = await capture(() => api.get('/api/user/user', q));
        const plan = await builderPagePlan(statements, 'users');
        expect({ q, plan: plan.map((r) => ({ key: r.key, covering: /Using index/.test(r.Extra ?? ''), filesort: /filesort/.test(r.Extra ?? '') })) })
          .toEqual({ q, plan: [{ key: `users_type_${column}`, covering: true, filesort: false }] });
        // The page asked, as a plain sorted SELECT of every person reads it (the names' collation decides their order).
        const dir = order_direction === 'asc' ? 'ASC' : 'DESC';
        const want = (await select<{ id: number }>(`SELECT id FROM users IGNORE INDEX (users_type_${column})
          WHERE type = 'user' ORDER BY ${column} ${dir}, id ${dir} LIMIT 1000, 10`, {})).map((p) => p.id);
        expect({ q, ids: expectList(result).map((p: any) => p.id) }).toEqual({ q, ids: want });
      }
    }
  } finally {
    await execute('DELETE FROM users WHERE email LIKE :like', { like: `${tag}%` }, undefined);
  }
});
