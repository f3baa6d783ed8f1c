import type { QueryInterface } from 'sequelize';
import { createTriggers, dropTriggers, type TriggerSql } from './triggers';

export const name = '073_unowned_custom_field_values';

/**
 * What no record owns any more:
 * - custom field values whose ticket, user or organisation is gone. Until a person's delete took
 *   their tickets' values with it (deleteCustomFieldValues in deleteTicketsOf), it left them
 *   behind; no list shows them (no ticket has their id), but they held grams (070), option ids
 *   (071) and room. Their delete here takes those too (the values' triggers).
 * - migration 072's counters of a field that is gone: its option ids are taken away before the
 *   field's delete cascades (071's `custom_fields_value_options_delete`), which brings its
 *   counters to 0, and its rows stayed, at 0. A trigger after the field's delete now removes
 *   them, and the migration removes those left before.
 *
 * Down drops the trigger; the values removed are not put back (no record owned them).
 */

const OWNERS: Record<string, string> = { ticket: 'tickets', user: 'users', organisation: 'organisations' };

const TRIGGER_SQL: TriggerSql = {
  // After the delete: 071's trigger has then taken the field's option ids away, and 072's
  // triggers, counting that, no longer write its rows.
  custom_fields_option_counts_delete: 'AFTER DELETE ON custom_fields FOR EACH ROW DELETE FROM ticket_option_counts WHERE field_id = OLD.id',
};

/** The values of `kind`'s fields whose owner is not a row of `table`. */
export const UNOWNED_SQL = (kind: string, table: string) => `DELETE v FROM custom_field_values v
  JOIN custom_fields f ON f.id = v.field_id AND f.kind = '${kind}'
  WHERE NOT EXISTS (SELECT 1 FROM ${table} o WHERE o.id = v.owner_id)`;

export async function up(q: QueryInterface): Promise<void> {
  for (const [kind, table] of Object.entries(OWNERS)) await q.sequelize.query(UNOWNED_SQL(kind, table));
  await q.sequelize.query('DELETE c FROM ticket_option_counts c WHERE NOT EXISTS (SELECT 1 FROM custom_fields f WHERE f.id = c.field_id)');
  await createTriggers(q, TRIGGER_SQL);
}

export async function down(q: QueryInterface): Promise<void> {
  await dropTriggers(q, TRIGGER_SQL);
}
