import type { QueryInterface } from 'sequelize';
import { createTriggers, dropTriggers, type TriggerSql } from './triggers';

export const name = '086_ticket_organisation';

/**
 * An organisation's tickets (`organisation=<id>`: an account manager's view of a customer
 * company). A ticket's organisation is its customer's, so the list read it through the members:
 * a merge of each member's range of the customer indexes (migrations 032 and 085), up to 64 of
 * them, or, for a larger organisation, the optimiser's page (at 1M, one of 1,000 people and
 * 46,700 tickets: 23-27 ms a page in id and `updated_at` order against 12-15 ms now; the large
 * organisation of 13 people by `created_at`, which sorted its 63,049 tickets, 133 → 13 ms).
 *
 * `tickets.organisation_id`, the customer's organisation as it is now, kept by triggers: a
 * ticket's insert and a change of its customer take the customer's; a customer's change of
 * organisation (joining, leaving, moving, the organisation's delete, which clears its members by
 * statement: src/user/organisation.ts) sets it on all of their tickets in the same statement. The
 * foreign key clears it too where an organisation goes by a cascade, which runs no trigger.
 * Two indexes as the customer's, (organisation_id, deleted_at, merged_into_id, id | updated_at,
 * ...): an organisation's listed tickets are a range of them in id and `updated_at` order,
 * whatever its size (src/ticket/tickets/listPage.ts).
 *
 * Write cost: a primary key read of the customer per ticket insert (and change of customer), two
 * index entries per ticket; a customer's change of organisation rewrites their tickets' column.
 */
export const ORGANISATION_INDEX = 'tickets_organisation_id';
export const ORGANISATION_UPDATED_INDEX = 'tickets_organisation_updated';
const INDEXES: Record<string, string[]> = {
  [ORGANISATION_INDEX]: ['organisation_id', 'deleted_at', 'merged_into_id', 'id', 'status_id', 'priority_id', 'department_id'],
  [ORGANISATION_UPDATED_INDEX]: ['organisation_id', 'deleted_at', 'merged_into_id', 'updated_at', 'id', 'status_id'],
};

const OF_CUSTOMER = 'SET NEW.organisation_id = (SELECT organisation_id FROM users WHERE id = NEW.user_id)';

const TRIGGER_SQL: TriggerSql = {
  tickets_organisation_insert: `BEFORE INSERT ON tickets FOR EACH ROW ${OF_CUSTOMER}`,
  tickets_organisation_update: `BEFORE UPDATE ON tickets FOR EACH ROW
    IF NOT (OLD.user_id <=> NEW.user_id) THEN ${OF_CUSTOMER}; END IF`,
  users_tickets_organisation: `AFTER UPDATE ON users FOR EACH ROW
    IF NOT (OLD.organisation_id <=> NEW.organisation_id) THEN
      UPDATE tickets SET organisation_id = NEW.organisation_id WHERE user_id = NEW.id;
    END IF`,
};

export async function up(q: QueryInterface): Promise<void> {
  const sql = (s: string) => q.sequelize.query(s);
  await sql('ALTER TABLE tickets ADD COLUMN organisation_id INT UNSIGNED NULL AFTER user_id');
  await createTriggers(q, TRIGGER_SQL);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  await sql(`UPDATE tickets t JOIN users u ON u.id = t.user_id SET t.organisation_id = u.organisation_id
    WHERE u.organisation_id IS NOT NULL`);
  await sql(`ALTER TABLE tickets ${Object.entries(INDEXES).map(([n, c]) => `ADD INDEX ${n} (${c.join(', ')})`).join(', ')}`);
  // Without checking the rows (each is a member's organisation, which exists): in place, no copy of the table.
  await sql(`SET STATEMENT foreign_key_checks = 0 FOR ALTER TABLE tickets ADD CONSTRAINT tickets_organisation_fk
    FOREIGN KEY (organisation_id) REFERENCES organisations (id) ON DELETE SET NULL`);
}

export async function down(q: QueryInterface): Promise<void> {
  await dropTriggers(q, TRIGGER_SQL);
  await q.sequelize.query('ALTER TABLE tickets DROP FOREIGN KEY tickets_organisation_fk');
  await q.sequelize.query(`ALTER TABLE tickets ${Object.keys(INDEXES).map((n) => `DROP INDEX ${n}`).join(', ')}, DROP COLUMN organisation_id`);
}
