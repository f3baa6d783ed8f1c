import type { QueryInterface } from 'sequelize';
import * as m015 from './015_ticket_counter';

export const name = '018_ticket_list_indexes';

/**
 * Indexes and counts of the ticket list at a million tickets (docs/performance.md).
 *
 * Every list reads tickets neither trashed nor merged: `deleted_at IS NULL AND merged_into_id IS
 * NULL`, two equalities on NULL, so an index that starts with (deleted_at, merged_into_id) holds
 * the listed tickets in the order of the columns that follow.
 *
 * - `tickets_list_<column>`: one per sortable column, (deleted_at, merged_into_id, column, id): a
 *   page in any order is a walk of its index, no filesort. The id order and the four time orders a
 *   help desk lists by also hold the columns the equality filters test (status, priority,
 *   department, brand, channel, internal, locked, user): a filtered page walks the index and tests
 *   the filters on its entries (index condition pushdown), reading only the rows it returns, and a
 *   deep page skips index entries, not rows (the page's ids come from the index alone).
 * - `tickets_filter_<column>`: (column, deleted_at, merged_into_id) for the equality filters: a
 *   rare value reads its own tickets (in id order), and the foreign keys use them.
 * - `ticket_list_counts`: the number of listed and of trashed tickets per combination of status,
 *   priority, department, brand, channel, internal and locked, kept by triggers in the statement
 *   that writes a ticket (whatever writes it, like migration 015's total): the `count` of a list
 *   filtered by any of these is a sum over a few rows instead of a COUNT over every match. Spread
 *   over slots by ticket id, so parallel creates alike do not queue on one row's lock. They
 *   replace migration 015's total (its sum).
 */

/** Columns the equality filters of the list test, in the wide list indexes and the counts. */
export const COUNTED = ['status_id', 'priority_id', 'department_id', 'brand_id', 'channel_id', 'internal', 'locked'] as const;
const WIDE_EXTRA = [...COUNTED, 'user_id'];
/** Sort columns whose index also holds the filtered columns. */
export const WIDE_SORTS = ['id', 'created_at', 'updated_at', 'last_reply_time', 'due_time'] as const;
const NARROW_SORTS = ['number', 'subject', 'resolved_time', 'status_id', 'priority_id', 'department_id', 'brand_id', 'channel_id', 'user_id'] as const;
export const FILTER_COLUMNS = ['status_id', 'priority_id', 'department_id', 'brand_id', 'channel_id', 'user_id'] as const;
export const COUNT_SLOTS = 8;

/** The list indexes by name: their columns. */
export function listIndexes(): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const s of WIDE_SORTS) out[`tickets_list_${s}`] = ['deleted_at', 'merged_into_id', ...(s === 'id' ? [] : [s]), 'id', ...WIDE_EXTRA];
  for (const s of NARROW_SORTS) out[`tickets_list_${s}`] = ['deleted_at', 'merged_into_id', s, 'id'];
  for (const c of FILTER_COLUMNS) out[`tickets_filter_${c}`] = [c, 'deleted_at', 'merged_into_id'];
  return out;
}

/** Single-column indexes the list indexes replace (each column leads one of them or follows the NULL prefix). */
const REPLACED = [
  'tickets_subject', 'tickets_due_time', 'tickets_resolved_time', 'tickets_last_reply_time', 'tickets_created_at', 'tickets_updated_at',
  'tickets_department_id', 'tickets_brand_id', 'tickets_channel_id', 'tickets_user_id', 'tickets_priority_id', 'tickets_status_id',
];

/**
 * Counters of tickets per combination of `counted` columns: the list's own (`ticket_list_counts`,
 * this migration's), or per value of a column of the ticket as well (`key`: migration 091's per
 * organisation), where tickets without a value are not counted.
 */
export interface TicketCounts { table: string; key?: string }

export const LIST_COUNTS: TicketCounts = { table: 'ticket_list_counts' };

/**
 * The three triggers on tickets that keep the counters of `counted` columns (this migration's
 * COUNTED, or a later migration's longer list): name → definition after CREATE TRIGGER <name>
 * (`tickets_<table without ticket_>_insert`...).
 */
export function listCountTriggerSql(counted: readonly string[], { table, key }: TicketCounts = LIST_COUNTS): Record<string, string> {
  const columns = [...(key ? [key] : []), 'state', ...counted, 'slot'];
  const STATE = (row: 'NEW' | 'OLD') => `IF(${row}.deleted_at IS NULL, 0, 1)`;
  const SLOT = (row: 'NEW' | 'OLD') => `${row}.id MOD ${COUNT_SLOTS}`;
  const values = (row: 'NEW' | 'OLD') => [...(key ? [`${row}.${key}`] : []), STATE(row), ...counted.map((c) => `${row}.${c}`), SLOT(row)];
  const add = (row: 'NEW' | 'OLD') => `INSERT INTO ${table} (${columns.join(', ')}, n)
  VALUES (${values(row).join(', ')}, 1) ON DUPLICATE KEY UPDATE n = n + 1`;
  const remove = (row: 'NEW' | 'OLD') => `UPDATE ${table} SET n = n - 1
  WHERE ${columns.map((c, i) => `${c} = ${values(row)[i]}`).join(' AND ')}`;
  // A ticket counts when it is not merged (and has a key).
  const counts = (row: 'NEW' | 'OLD') => `${row}.merged_into_id IS NULL${key ? ` AND ${row}.${key} IS NOT NULL` : ''}`;
  const changed = [
    ...(key ? [`NOT (OLD.${key} <=> NEW.${key})`] : []),
    `${STATE('OLD')} <> ${STATE('NEW')}`, 'NOT (OLD.merged_into_id <=> NEW.merged_into_id)', ...counted.map((c) => `OLD.${c} <> NEW.${c}`),
  ].join(' OR ');
  const name = `tickets_${table.replace(/^ticket_/, '')}`;
  return {
    [`${name}_insert`]: `AFTER INSERT ON tickets FOR EACH ROW
    IF ${counts('NEW')} THEN ${add('NEW')}; END IF`,
    [`${name}_update`]: `AFTER UPDATE ON tickets FOR EACH ROW
    IF ${changed} THEN
      IF ${counts('OLD')} THEN ${remove('OLD')}; END IF;
      IF ${counts('NEW')} THEN ${add('NEW')}; END IF;
    END IF`,
    [`${name}_delete`]: `AFTER DELETE ON tickets FOR EACH ROW
    IF ${counts('OLD')} THEN ${remove('OLD')}; END IF`,
  };
}

/** The counts of `counted` columns from the tickets themselves. */
export async function fillCountsOf(q: QueryInterface, counted: readonly string[], { table, key }: TicketCounts = LIST_COUNTS): Promise<void> {
  const keyed = key ? [key] : [];
  const groups = keyed.length + counted.length + 2;
  await q.sequelize.query(`DELETE FROM ${table}`);
  await q.sequelize.query(`INSERT INTO ${table} (${[...keyed, 'state', ...counted, 'slot'].join(', ')}, n)
    SELECT ${[...keyed, 'IF(deleted_at IS NULL, 0, 1)', ...counted, `id MOD ${COUNT_SLOTS}`].join(', ')}, COUNT(*) FROM tickets
    WHERE merged_into_id IS NULL${key ? ` AND ${key} IS NOT NULL` : ''} GROUP BY ${Array.from({ length: groups }, (_, i) => i + 1).join(', ')}`);
}

export async function up(q: QueryInterface): Promise<void> {
  const sql = (s: string) => q.sequelize.query(s);
  const adds = Object.entries(listIndexes()).map(([n, c]) => `ADD INDEX ${n} (${c.join(', ')})`);
  // One ALTER: the new indexes (which also serve the foreign keys) before the ones they replace go.
  await sql(`ALTER TABLE tickets ${adds.join(', ')}`);
  await sql(`ALTER TABLE tickets ${REPLACED.map((n) => `DROP INDEX ${n}`).join(', ')}`);

  await sql(`CREATE TABLE ticket_list_counts (
    state TINYINT UNSIGNED NOT NULL,
    ${COUNTED.map((c) => `${c} INT UNSIGNED NOT NULL`).join(',\n    ')},
    slot TINYINT UNSIGNED NOT NULL,
    n BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (state, ${COUNTED.join(', ')}, slot)
  ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  await createListCountTriggers(q);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  await fillListCounts(q);
  // Migration 015's total is the sum of these counts: its table and triggers go.
  await m015.down(q);
}

const TRIGGERS = Object.keys(listCountTriggerSql(COUNTED));

/** The triggers that keep the counts (the benchmark drops them for its bulk load, then fills the counts). */
export async function createListCountTriggers(q: QueryInterface): Promise<void> {
  for (const [name, sql] of Object.entries(listCountTriggerSql(COUNTED))) await q.sequelize.query(`CREATE TRIGGER ${name} ${sql}`);
}

export async function dropListCountTriggers(q: QueryInterface): Promise<void> {
  for (const t of TRIGGERS) await q.sequelize.query(`DROP TRIGGER IF EXISTS ${t}`);
}

/** The counts from the tickets themselves (the migration, and the benchmark after its bulk load). */
export const fillListCounts = (q: QueryInterface) => fillCountsOf(q, COUNTED);

export async function down(q: QueryInterface): Promise<void> {
  await m015.up(q);
  await dropListCountTriggers(q);
  await q.dropTable('ticket_list_counts');
  const restore = REPLACED.map((n) => `ADD INDEX ${n} (${n.replace(/^tickets_/, '')})`);
  await q.sequelize.query(`ALTER TABLE tickets ${restore.join(', ')}`);
  await q.sequelize.query(`ALTER TABLE tickets ${Object.keys(listIndexes()).map((n) => `DROP INDEX ${n}`).join(', ')}`);
}
