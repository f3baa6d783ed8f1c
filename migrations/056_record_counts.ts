import type { QueryInterface } from 'sequelize';
import { createTriggers, dropTriggers, type TriggerSql } from './triggers';
import { COUNT_SLOTS } from './018_ticket_list_indexes';

export const name = '056_record_counts';

/**
 * The `count` of the user, operator and organisation lists without reading every record: the
 * unfiltered user list COUNTed every user's entry of an index (62,000 users: 12 ms, and it grows
 * with the customers, as a help desk's customers do).
 *
 * `record_counts`: per kind (`user`, `operator`: the person's type; `organisation`), brand (0:
 * none, as an operator has) and slot (id MOD 8: parallel creates do not queue on one row's lock),
 * the number of records. The list unfiltered, or narrowed by its brand alone, sums them
 * (src/db/recordCounts.ts); any other filter counts its matches. Kept by triggers in the
 * statement that writes the record (whatever writes it): a create, a change of type or brand (from
 * the old row to the new), a delete. No foreign key deletes or re-brands these rows behind the
 * triggers' back (a brand's delete is refused while it has people or organisations).
 */

const SLOT = (row: string) => `${row}.id MOD ${COUNT_SLOTS}`;
const BRAND = (row: string) => `IFNULL(${row}.brand_id, 0)`;

/** A record's kind in its table (a person's type; an organisation's name for itself). */
const TABLES = { users: (row: string) => `${row}.type`, organisations: () => "'organisation'" } as const;

/** One more (or, `-1`, one less) record of the row's kind and brand: an upsert, so a removal never misses its row. */
const change = (table: keyof typeof TABLES, row: 'NEW' | 'OLD', n: 1 | -1) => `INSERT INTO record_counts (kind, brand_id, slot, n)
  VALUES (${TABLES[table](row)}, ${BRAND(row)}, ${SLOT(row)}, ${n}) ON DUPLICATE KEY UPDATE n = n ${n > 0 ? '+' : '-'} 1`;

function triggersOf(table: keyof typeof TABLES): TriggerSql {
  const moved = `NOT (${TABLES[table]('OLD')} <=> ${TABLES[table]('NEW')} AND OLD.brand_id <=> NEW.brand_id)`;
  return {
    [`${table}_record_counts_insert`]: `AFTER INSERT ON ${table} FOR EACH ROW ${change(table, 'NEW', 1)}`,
    [`${table}_record_counts_update`]: `AFTER UPDATE ON ${table} FOR EACH ROW
    IF ${moved} THEN ${change(table, 'OLD', -1)}; ${change(table, 'NEW', 1)}; END IF`,
    [`${table}_record_counts_delete`]: `AFTER DELETE ON ${table} FOR EACH ROW ${change(table, 'OLD', -1)}`,
  };
}

/** This migration's triggers (057 writes them again for `scope_id`). */
export const RECORD_COUNT_TRIGGERS: TriggerSql = { ...triggersOf('users'), ...triggersOf('organisations') };

/** The counts from the records themselves. */
export async function fillRecordCounts(q: QueryInterface): Promise<void> {
  await q.sequelize.query('DELETE FROM record_counts');
  for (const [table, kind] of Object.entries(TABLES)) {
    await q.sequelize.query(`INSERT INTO record_counts (kind, brand_id, slot, n)
      SELECT ${kind(table)}, ${BRAND(table)}, ${SLOT(table)}, COUNT(*) FROM ${table} GROUP BY 1, 2, 3`);
  }
}

export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`CREATE TABLE record_counts (
    kind VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    brand_id INT UNSIGNED NOT NULL,
    slot TINYINT UNSIGNED NOT NULL,
    n BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (kind, brand_id, slot)
  ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  await createTriggers(q, RECORD_COUNT_TRIGGERS);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  await fillRecordCounts(q);
}

export async function down(q: QueryInterface): Promise<void> {
  await dropTriggers(q, RECORD_COUNT_TRIGGERS);
  await q.dropTable('record_counts');
}
