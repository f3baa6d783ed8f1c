import type { QueryInterface } from 'sequelize';
import {
  assigneeListTriggerSql, createAssigneeListTriggers as create030Triggers, dropAssigneeListTriggers as drop030Triggers, fillAssigneeListOf,
} from './030_ticket_assignee_list';
import { createTriggers, dropTriggers } from './triggers';

export const name = '031_ticket_assignee_orders';

/**
 * One operator's tickets in the other orders an agent works by: what is due first (`due_time`),
 * who has waited longest (`last_reply_time`), the most urgent (`priority_id`) and the oldest
 * (`created_at`). Migration 030 gave the operator's list by `updated_at` a range of
 * `ticket_assignee_list`; in these orders the page still sorted the operator's matches (an
 * operator's 20,000 tickets at 1M: 100-140 ms a request).
 *
 * Each order gets its copied column in `ticket_assignee_list` and an index (user_id, listed,
 * <column>, ticket_id, status_id), as 030's for `updated_at`: the page is a range of the
 * operator's rows in that order, a status tested on the index's entries
 * (src/ticket/tickets/listPage.ts ASSIGNEE_ORDERS). The triggers of 030 are replaced by the same
 * triggers copying every column (same names). Write cost: `created_at` never changes and
 * `priority_id` rarely; a reply moves `last_reply_time` with `updated_at`, in the row 030 already
 * rewrites, one more index entry per assignee.
 */

/** The copied columns beyond 030's, each an order of the operator's list (its index: `ticket_assignee_list_<column>`). */
export const ASSIGNEE_ORDER_COLUMNS = ['due_time', 'last_reply_time', 'priority_id', 'created_at'] as const;

const COPIED = ['status_id', 'updated_at', ...ASSIGNEE_ORDER_COLUMNS];

const TRIGGER_SQL = assigneeListTriggerSql(COPIED);

export const createAssigneeListTriggers = (q: QueryInterface): Promise<void> => createTriggers(q, TRIGGER_SQL);

export const dropAssigneeListTriggers = (q: QueryInterface): Promise<void> => dropTriggers(q, TRIGGER_SQL);

/** The rows from the assignments and their tickets (the migration, and the benchmark after its bulk load). */
export const fillAssigneeList = (q: QueryInterface): Promise<void> => fillAssigneeListOf(q, COPIED);

export async function up(q: QueryInterface): Promise<void> {
  await drop030Triggers(q);
  await q.sequelize.query(`ALTER TABLE ticket_assignee_list
    ADD COLUMN due_time INT UNSIGNED NULL,
    ADD COLUMN last_reply_time INT UNSIGNED NULL,
    ADD COLUMN priority_id INT UNSIGNED NOT NULL DEFAULT 0,
    ADD COLUMN created_at INT UNSIGNED NOT NULL DEFAULT 0,
    ${ASSIGNEE_ORDER_COLUMNS.map((c) => `ADD KEY ticket_assignee_list_${c} (user_id, listed, ${c}, ticket_id, status_id)`).join(',\n    ')}`);
  await createAssigneeListTriggers(q);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  await fillAssigneeList(q);
}

export async function down(q: QueryInterface): Promise<void> {
  await dropAssigneeListTriggers(q);
  await q.sequelize.query(`ALTER TABLE ticket_assignee_list
    ${ASSIGNEE_ORDER_COLUMNS.map((c) => `DROP KEY ticket_assignee_list_${c}`).join(', ')},
    ${ASSIGNEE_ORDER_COLUMNS.map((c) => `DROP COLUMN ${c}`).join(', ')}`);
  await create030Triggers(q);
}
