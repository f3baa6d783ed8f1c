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

/** The table of counters by `counted` columns of the ticket. */
export const tableSql = (counted: readonly string[]) => `CREATE TABLE ticket_option_counts (
    field_id INT UNSIGNED NOT NULL,
    option_id BIGINT UNSIGNED NOT NULL,
    state TINYINT UNSIGNED NOT NULL,
    ${counted.map((c) => `${c} INT UNSIGNED NOT NULL,`).join('\n    ')}
    slot TINYINT UNSIGNED NOT NULL,
    n BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (field_id, option_id, state, ${counted.join(', ')}, slot)
  ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`;

const ofTicketField = (field: string) => `EXISTS (SELECT 1 FROM custom_fields f WHERE f.id = ${field} AND f.kind = 'ticket')`;

/**
 * The option ids of ticket `t`'s values of ticket fields: its rows of 071's table, by the index of
 * their owner. (Cut again from the values, as 071 cuts them, a ticket's status change cost 1.3 ms
 * more: a join of the sequence re-plans its range for each value.)
 */
const optionsOf = (t: 'NEW' | 'OLD') => `SELECT o.field_id, o.option_id FROM custom_field_value_options o
  WHERE o.owner_id = ${t}.id AND ${ofTicketField('o.field_id')}`;

/** 071's rows by their owner (the key leads with the field): a ticket's options, for its triggers. */
const OWNER_INDEX = 'CREATE INDEX custom_field_value_options_owner ON custom_field_value_options (owner_id)';

/**
 * The triggers that keep the counters of `counted` columns (this migration's, or 076's longer
 * list): name → definition after CREATE TRIGGER <name>.
 */
export function triggerSql(counted: readonly string[]): TriggerSql {
  /** Counts the options `o` (field_id, option_id) of ticket `t` (a row of tickets) by `by` (1 or -1). */
  const countOptions = (o: string, t: string, by: 1 | -1) => `INSERT INTO ticket_option_counts (field_id, option_id, state, ${counted.join(', ')}, slot, n)
  SELECT o.field_id, o.option_id, ${STATE(t)}, ${counted.map((c) => `${t}.${c}`).join(', ')}, ${t}.id MOD ${COUNT_SLOTS}, ${by} FROM ${o}
  ON DUPLICATE KEY UPDATE n = n + VALUES(n)`;
  const changed = [`${STATE('OLD')} <> ${STATE('NEW')}`, 'NOT (OLD.merged_into_id <=> NEW.merged_into_id)', ...counted.map((c) => `OLD.${c} <> NEW.${c}`)];
  return {
    value_option_counts_insert: `AFTER INSERT ON custom_field_value_options FOR EACH ROW
    ${countOptions(`(SELECT NEW.field_id AS field_id, NEW.option_id AS option_id) o JOIN tickets t
      ON t.id = NEW.owner_id AND t.merged_into_id IS NULL AND ${ofTicketField('NEW.field_id')}`, 't', 1)}`,
    value_option_counts_delete: `AFTER DELETE ON custom_field_value_options FOR EACH ROW
    ${countOptions(`(SELECT OLD.field_id AS field_id, OLD.option_id AS option_id) o JOIN tickets t
      ON t.id = OLD.owner_id AND t.merged_into_id IS NULL AND ${ofTicketField('OLD.field_id')}`, 't', -1)}`,
    tickets_option_counts_update: `AFTER UPDATE ON tickets FOR EACH ROW
    IF ${changed.join(' OR ')} THEN
      IF OLD.merged_into_id IS NULL THEN ${countOptions(`(${optionsOf('OLD')}) o`, 'OLD', -1)}; END IF;
      IF NEW.merged_into_id IS NULL THEN ${countOptions(`(${optionsOf('NEW')}) o`, 'NEW', 1)}; END IF;
    END IF`,
    tickets_option_counts_delete: `AFTER DELETE ON tickets FOR EACH ROW
    IF OLD.merged_into_id IS NULL THEN ${countOptions(`(${optionsOf('OLD')}) o`, 'OLD', -1)}; END IF`,
  };
}

/** The counts of `counted` columns from the option ids and the tickets themselves (the migrations; tests compare them). */
export const countsSql = (counted: readonly string[]) => `SELECT o.field_id, o.option_id, ${STATE('t')} AS state,
  ${counted.map((c) => `t.${c}`).join(', ')}, t.id MOD ${COUNT_SLOTS} AS slot, COUNT(*) AS n
  FROM custom_field_value_options o JOIN custom_fields f ON f.id = o.field_id AND f.kind = 'ticket'
  JOIN tickets t ON t.id = o.owner_id AND t.merged_into_id IS NULL
  GROUP BY ${Array.from({ length: counted.length + 4 }, (_, i) => i + 1).join(', ')}`;

/** Fills the counters of `counted` columns (after the triggers: nothing else writes while migrations run). */
export const fillSql = (counted: readonly string[]) => `INSERT INTO ticket_option_counts (field_id, option_id, state, ${counted.join(', ')}, slot, n)
  ${countsSql(counted)}`;

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
