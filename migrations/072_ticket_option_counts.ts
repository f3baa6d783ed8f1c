import type { QueryInterface } from 'sequelize';
import { createTriggers, dropTriggers, type TriggerSql } from './triggers';
import { COUNT_SLOTS } from './018_ticket_list_indexes';

export const name = '072_ticket_option_counts';

/**
 * The ticket list's `customfield` filter of one option (alone, or with `status`): its page reads
 * migration 071's index, but its count read every ticket holding the option (an option of half
 * the tickets: 500,000 index entries and as many tickets at 1M), since trashed and merged tickets
 * hold options too.
 *
 * `ticket_option_counts`: per ticket field, option, state (listed, trashed), status and slot
 * (ticket id MOD 8: parallel creates do not queue on one row's lock), the number of tickets
 * holding the option, merged ones not counted, as migration 035 counts a customer's; the list sums
 * them (src/ticket/tickets/listPage.ts). Kept by triggers:
 * - on `custom_field_value_options` (a value's option ids, written by 071's triggers): an id
 *   added to or taken from a ticket field's value counts for or against its ticket's state,
 *   status and slot;
 * - on `tickets`: a change of state, status or merge moves each of the ticket's option ids (its
 *   rows of 071's table, by an index of their owner this migration adds) from the old row to the
 *   new; a delete takes them away. A ticket's values are written after the ticket and deleted
 *   after it (deleteTicketsOf), when there is no ticket to count against.
 */

const STATE = (row: string) => `IF(${row}.deleted_at IS NULL, 0, 1)`;

/** Columns of the ticket these counters keep (this migration's; 076 keeps every counted filter's). */
const COUNTED = ['status_id'] as const;

/**
 * Counters of the tickets linked to a record (an option of a ticket field: this migration's; a tag:
 * migration 081's), per the record's key, state, `counted` columns of the ticket and slot, kept by
 * triggers on the link rows and on tickets.
 */
export interface LinkedCounts {
  /** The counters' table. */
  table: string;
  /** The record's key: columns of the link rows and of the counters, with their types. */
  keys: ReadonlyArray<readonly [string, string]>;
  /** The link rows, and their column of the ticket. */
  links: string;
  owner: string;
  /** Which link rows count (`r`: a link row's name), if not all. */
  linkWhere?: (r: string) => string;
  /** The triggers' names: <links>_counts_insert and _delete, tickets_<tickets>_counts_update and _delete. */
  names: { links: string; tickets: string };
  /**
   * When a ticket's delete takes its counts: AFTER it (the link rows outlive it: deleted after it
   * by the code) or BEFORE it (InnoDB's cascade takes the link rows with it and runs no trigger).
   */
  ticketDelete: 'AFTER' | 'BEFORE';
}

export const OPTION_COUNTS: LinkedCounts = {
  table: 'ticket_option_counts', keys: [['field_id', 'INT UNSIGNED'], ['option_id', 'BIGINT UNSIGNED']],
  links: 'custom_field_value_options', owner: 'owner_id', linkWhere: (r) => ofTicketField(`${r}.field_id`),
  names: { links: 'value_option', tickets: 'option' }, ticketDelete: 'AFTER',
};

const keyNames = (c: Pick<LinkedCounts, 'keys'>) => c.keys.map(([k]) => k);

/** The table of counters by `counted` columns of the ticket. */
export const linkedTableSql = (c: Pick<LinkedCounts, 'table' | 'keys'>, counted: readonly string[]) => `CREATE TABLE ${c.table} (
    ${c.keys.map(([k, type]) => `${k} ${type} NOT NULL,`).join('\n    ')}
    state TINYINT UNSIGNED NOT NULL,
    ${counted.map((col) => `${col} INT UNSIGNED NOT NULL,`).join('\n    ')}
    slot TINYINT UNSIGNED NOT NULL,
    n BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (${keyNames(c).join(', ')}, state, ${counted.join(', ')}, slot)
  ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`;

export const tableSql = (counted: readonly string[]) => linkedTableSql(OPTION_COUNTS, counted);

const ofTicketField = (field: string) => `EXISTS (SELECT 1 FROM custom_fields f WHERE f.id = ${field} AND f.kind = 'ticket')`;

/**
 * The links of ticket `t` that count: for options, its rows of 071's table, by the index of their
 * owner. (Cut again from the values, as 071 cuts them, a ticket's status change cost 1.3 ms more:
 * a join of the sequence re-plans its range for each value.)
 */
const linksOf = (c: LinkedCounts, t: 'NEW' | 'OLD') => `SELECT ${keyNames(c).map((k) => `o.${k}`).join(', ')} FROM ${c.links} o
  WHERE o.${c.owner} = ${t}.id${c.linkWhere ? ` AND ${c.linkWhere('o')}` : ''}`;

/** 071's rows by their owner (the key leads with the field): a ticket's options, for its triggers. */
const OWNER_INDEX = 'CREATE INDEX custom_field_value_options_owner ON custom_field_value_options (owner_id)';

/** Counts the links `o` (their key columns) of ticket `t` (a row of tickets) by `by` (1 or -1). */
export const countLinks = (c: LinkedCounts, counted: readonly string[], o: string, t: string, by: 1 | -1) => `INSERT INTO ${c.table} (${keyNames(c).join(', ')}, state, ${counted.join(', ')}, slot, n)
  SELECT ${keyNames(c).map((k) => `o.${k}`).join(', ')}, ${STATE(t)}, ${counted.map((col) => `${t}.${col}`).join(', ')}, ${t}.id MOD ${COUNT_SLOTS}, ${by} FROM ${o}
  ON DUPLICATE KEY UPDATE n = n + VALUES(n)`;

/** A link row (NEW or OLD) joined to its ticket when that is counted (not merged): the source countLinks reads. */
export const linkRow = (c: LinkedCounts, row: 'NEW' | 'OLD') => `(SELECT ${keyNames(c).map((k) => `${row}.${k} AS ${k}`).join(', ')}) o JOIN tickets t
      ON t.id = ${row}.${c.owner} AND t.merged_into_id IS NULL${c.linkWhere ? ` AND ${c.linkWhere(row)}` : ''}`;

/**
 * The triggers that keep the counters of `counted` columns (this migration's, or 076's longer
 * list): name → definition after CREATE TRIGGER <name>.
 */
export function linkedTriggerSql(c: LinkedCounts, counted: readonly string[]): TriggerSql {
  const changed = [`${STATE('OLD')} <> ${STATE('NEW')}`, 'NOT (OLD.merged_into_id <=> NEW.merged_into_id)', ...counted.map((col) => `OLD.${col} <> NEW.${col}`)];
  return {
    [`${c.names.links}_counts_insert`]: `AFTER INSERT ON ${c.links} FOR EACH ROW
    ${countLinks(c, counted, linkRow(c, 'NEW'), 't', 1)}`,
    [`${c.names.links}_counts_delete`]: `AFTER DELETE ON ${c.links} FOR EACH ROW
    ${countLinks(c, counted, linkRow(c, 'OLD'), 't', -1)}`,
    [`tickets_${c.names.tickets}_counts_update`]: `AFTER UPDATE ON tickets FOR EACH ROW
    IF ${changed.join(' OR ')} THEN
      IF OLD.merged_into_id IS NULL THEN ${countLinks(c, counted, `(${linksOf(c, 'OLD')}) o`, 'OLD', -1)}; END IF;
      IF NEW.merged_into_id IS NULL THEN ${countLinks(c, counted, `(${linksOf(c, 'NEW')}) o`, 'NEW', 1)}; END IF;
    END IF`,
    [`tickets_${c.names.tickets}_counts_delete`]: `${c.ticketDelete} DELETE ON tickets FOR EACH ROW
    IF OLD.merged_into_id IS NULL THEN ${countLinks(c, counted, `(${linksOf(c, 'OLD')}) o`, 'OLD', -1)}; END IF`,
  };
}

export const triggerSql = (counted: readonly string[]): TriggerSql => linkedTriggerSql(OPTION_COUNTS, counted);

/** The counts of `counted` columns from the links and the tickets themselves (the migrations; tests compare them). */
export const linkedCountsSql = (c: LinkedCounts, counted: readonly string[]) => `SELECT ${keyNames(c).map((k) => `o.${k}`).join(', ')}, ${STATE('t')} AS state,
  ${counted.map((col) => `t.${col}`).join(', ')}, t.id MOD ${COUNT_SLOTS} AS slot, COUNT(*) AS n
  FROM ${c.links} o JOIN tickets t ON t.id = o.${c.owner} AND t.merged_into_id IS NULL${c.linkWhere ? `
  WHERE ${c.linkWhere('o')}` : ''}
  GROUP BY ${Array.from({ length: c.keys.length + counted.length + 2 }, (_, i) => i + 1).join(', ')}`;

export const countsSql = (counted: readonly string[]) => linkedCountsSql(OPTION_COUNTS, counted);

/** Fills the counters of `counted` columns (after the triggers: nothing else writes while migrations run). */
export const linkedFillSql = (c: LinkedCounts, counted: readonly string[]) => `INSERT INTO ${c.table} (${keyNames(c).join(', ')}, state, ${counted.join(', ')}, slot, n)
  ${linkedCountsSql(c, counted)}`;

export const fillSql = (counted: readonly string[]) => linkedFillSql(OPTION_COUNTS, counted);

const TRIGGER_SQL = triggerSql(COUNTED);

export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(OWNER_INDEX);
  await q.sequelize.query(tableSql(COUNTED));
  await createTriggers(q, TRIGGER_SQL);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  await q.sequelize.query(fillSql(COUNTED));
}

export async function down(q: QueryInterface): Promise<void> {
  await dropTriggers(q, TRIGGER_SQL);
  await q.dropTable('ticket_option_counts');
  await q.sequelize.query('DROP INDEX custom_field_value_options_owner ON custom_field_value_options');
}
