import type { QueryInterface } from 'sequelize';
import { createTriggers, dropTriggers, type TriggerSql } from './triggers';
import { COUNT_SLOTS } from './018_ticket_list_indexes';
import { TRIGGER_SQL as SCOPED_COUNT_TRIGGERS } from './057_record_counts_scoped';
import { TRIGGER_SQL as MAIL_LOG_TRIGGERS } from './059_mail_log_counts';
import { TRIGGER_SQL as INCOMING_MAIL_TRIGGERS } from './060_incoming_mail_log';

export const name = '066_record_counts_by_value';

/**
 * The `count` of a list narrowed by one filter of few values without reading its matches: the
 * user list by `active`, `email_verified`, `country` or `language_code` (most people match one
 * value; most of a help desk's customers share a language or two), the operator list by
 * `active`, a webhook's deliveries by `status` or `event`, the mail log by `type` and the
 * incoming mail log by `decision` (most of the log matches some of these, and the logs grow with
 * every mail and event, never pruned). Each COUNTed its matches' index entries on every page.
 *
 * `record_counts` (migrations 056, 057) gains `filter_name` and `filter_value`: beside a record's
 * row of its kind and scope (both '', as before), one row per counted filter, of the value the
 * record has (as the list's filter compares it: the column's collation, so a value the filter
 * matches is the value its row is kept under). The list narrowed by one of them, and by its scope
 * (a brand, a webhook) or not, sums them (src/db/recordCounts.ts). Kept by the same triggers,
 * written again: a record moves between rows of a filter when its value changes (a delivery's
 * status as it is attempted, a person deactivated), and an event's delete, which cascades to its
 * deliveries, takes each filter's rows off too. The mail log's `status` is not counted: it is
 * the outbox entry's and its delivery record's together (src/core/mail.ts), no one column.
 */

const SLOT = (row: string) => `${row}.id MOD ${COUNT_SLOTS}`;

/** A table whose records are counted in `record_counts`, by kind, scope and the filters of `by` (migration 067 counts one more). */
export interface Counted {
  table: string;
  /** The triggers' names' stem, when another Counted of the table has the table's (migration 077). */
  name?: string;
  kind: (row: string) => string;
  scope: (row: string) => string;
  /** Whether the row is counted at all (the outbox: the mail queue's entries only). */
  when?: (row: string) => string;
  /** The counted filters: the list's filter name and the value of the row it compares. */
  by: Record<string, (row: string) => string>;
}

const COUNTED: Counted[] = [
  {
    table: 'users', kind: (r) => `${r}.type`, scope: (r) => `IFNULL(${r}.brand_id, 0)`,
    by: {
      active: (r) => `${r}.active`,
      email_verified: (r) => `${r}.email_verified`,
      // None is '' (a filter's value never is: two letters).
      country: (r) => `IFNULL(${r}.country, '')`,
      language_code: (r) => `IFNULL(${r}.language_code, '')`,
    },
  },
  {
    table: 'webhook_deliveries', kind: () => "'delivery'", scope: (r) => `${r}.webhook_id`,
    by: { status: (r) => `${r}.status`, event: (r) => `${r}.event_name` },
  },
  { table: 'outbox', kind: () => "'mail'", scope: () => '0', when: (r) => `${r}.queue = 'mail'`, by: { type: (r) => `${r}.name` } },
  { table: 'incoming_mails', kind: () => "'incoming'", scope: () => '0', by: { decision: (r) => `${r}.decision` } },
];

/** A row of the counters a record is counted in: the kind and scope alone ('' and ''), or one filter's value. */
export interface Dimension { filter: string; value: (row: string) => string }
export const dimensionsOf = (c: Counted): Dimension[] => [
  { filter: '', value: () => "''" },
  ...Object.entries(c.by).map(([filter, value]) => ({ filter, value })),
];

/** The row of the counters that `row` is counted in under the dimension, and its change (`-1`: one less). */
const rowOf = (c: Counted, d: Dimension, row: 'NEW' | 'OLD', n: 1 | -1) =>
  `(${c.kind(row)}, ${c.scope(row)}, '${d.filter}', ${d.value(row)}, ${SLOT(row)}, ${n})`;

/**
 * The changes of `rows` (rowOf) in one statement: an upsert, so a removal never misses its row
 * (a user's five rows so: 3,000 inserts 5-15 % faster than five statements, alternating rounds).
 */
const upsert = (rows: string[]) => `INSERT INTO record_counts (kind, scope_id, filter_name, filter_value, slot, n)
    VALUES ${rows.join(',\n      ')} ON DUPLICATE KEY UPDATE n = n + VALUES(n)`;

/** `sql`, where the record (`row`) is counted at all. */
const where = (c: Counted, row: 'NEW' | 'OLD', sql: string) => (c.when ? `IF ${c.when(row)} THEN ${sql}; END IF` : sql);

/** Whether an update leaves the row where it was counted under the dimension. */
function stays(c: Counted, d: Dimension): string {
  const keys = [c.kind, c.scope, ...(d.filter ? [d.value] : []), ...(c.when ? [c.when] : [])];
  return keys.map((k) => `(${k('OLD')}) <=> (${k('NEW')})`).join(' AND ');
}

export function triggersOf(c: Counted): TriggerSql {
  const dims = dimensionsOf(c);
  const all = (row: 'NEW' | 'OLD', n: 1 | -1) => where(c, row, upsert(dims.map((d) => rowOf(c, d, row, n))));
  // An update moves the record between a dimension's rows only where its key changes.
  const move = (d: Dimension) => (c.when
    ? `${where(c, 'OLD', upsert([rowOf(c, d, 'OLD', -1)]))}; ${where(c, 'NEW', upsert([rowOf(c, d, 'NEW', 1)]))}`
    : upsert([rowOf(c, d, 'OLD', -1), rowOf(c, d, 'NEW', 1)]));
  const stem = c.name ?? c.table;
  return {
    [`${stem}_record_counts_insert`]: `AFTER INSERT ON ${c.table} FOR EACH ROW ${all('NEW', 1)}`,
    [`${stem}_record_counts_update`]: `AFTER UPDATE ON ${c.table} FOR EACH ROW BEGIN
    ${dims.map((d) => `IF NOT (${stays(c, d)}) THEN ${move(d)}; END IF;`).join('\n    ')}
  END`,
    [`${stem}_record_counts_delete`]: `AFTER DELETE ON ${c.table} FOR EACH ROW ${all('OLD', -1)}`,
  };
}

/** The counts of the records of `c`, per dimension (`where` narrows them: the rows a cascade is about to delete), added to the counters' (`sign` -1: taken off). */
export function countsOf(c: Counted, d: Dimension, where: string, sign: 1 | -1): string {
  const t = c.table;
  return `INSERT INTO record_counts (kind, scope_id, filter_name, filter_value, slot, n)
    SELECT ${c.kind(t)}, ${c.scope(t)}, '${d.filter}', ${d.value(t)}, ${SLOT(t)}, ${sign > 0 ? '' : '-'}COUNT(*) FROM ${t}
    WHERE ${c.when ? `${c.when(t)} AND ` : ''}${where} GROUP BY 1, 2, 3, 4, 5
    ON DUPLICATE KEY UPDATE n = n + VALUES(n)`;
}

/**
 * The statements of a BEFORE DELETE trigger whose delete cascades to records of `c` (InnoDB's
 * cascades run no trigger): those `where` selects leave every row they are counted in first.
 */
export const takeOff = (c: Counted, where: string): string => dimensionsOf(c).map((d) => `${countsOf(c, d, where, -1)};`).join('\n    ');

const DELIVERIES = COUNTED.find((c) => c.table === 'webhook_deliveries')!;

/** An event's delete cascades to its deliveries. */
const CASCADES: TriggerSql = {
  events_record_counts_cascade: `BEFORE DELETE ON events FOR EACH ROW BEGIN
    ${takeOff(DELIVERIES, 'webhook_deliveries.event_id = OLD.id')}
  END`,
};

const TRIGGER_SQL: TriggerSql = { ...Object.assign({}, ...COUNTED.map(triggersOf)), ...CASCADES };

/** The triggers this migration writes again, as they were (for `down`). */
const BEFORE: TriggerSql = Object.fromEntries(
  Object.entries({ ...SCOPED_COUNT_TRIGGERS, ...MAIL_LOG_TRIGGERS, ...INCOMING_MAIL_TRIGGERS }).filter(([n]) => n in TRIGGER_SQL),
);

export async function up(q: QueryInterface): Promise<void> {
  await dropTriggers(q, { ...BEFORE, ...TRIGGER_SQL });
  await q.sequelize.query(`ALTER TABLE record_counts
    ADD COLUMN filter_name VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '' AFTER scope_id,
    ADD COLUMN filter_value VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NOT NULL DEFAULT '' AFTER filter_name,
    DROP PRIMARY KEY, ADD PRIMARY KEY (kind, scope_id, filter_name, filter_value, slot)`);
  await createTriggers(q, TRIGGER_SQL);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  for (const c of COUNTED) {
    for (const d of dimensionsOf(c).slice(1)) await q.sequelize.query(countsOf(c, d, '1 = 1', 1));
  }
}

export async function down(q: QueryInterface): Promise<void> {
  await dropTriggers(q, TRIGGER_SQL);
  await q.sequelize.query("DELETE FROM record_counts WHERE filter_name <> ''");
  await q.sequelize.query(`ALTER TABLE record_counts DROP PRIMARY KEY, DROP COLUMN filter_value, DROP COLUMN filter_name,
    ADD PRIMARY KEY (kind, scope_id, slot)`);
  await createTriggers(q, BEFORE);
}
