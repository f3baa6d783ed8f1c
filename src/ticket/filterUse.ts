import type { Transaction } from 'sequelize';
import { TicketFilter, TicketFilterCondition } from '../db/models';
import { sqlFragment, type BoundCondition } from '../db/sql';
import { ValidationError } from '../errors';

/**
 * Refuses to delete a record that a saved ticket filter's condition names (`item` equals or not its
 * id; a `customfield` condition names its ticket field by `field_id`): the filter would keep an id
 * its own update refuses (every id a condition names must exist), so a client could not send it
 * back as it is, and dropping the condition instead would widen the filter. The conditions are few
 * (a help desk's filters), so the lookup reads them all; the share lock keeps a condition naming
 * the record from being written until the delete commits.
 */
export async function assertNotInFilters(item: 'status' | 'priority' | 'tag' | 'department' | 'sla_plan' | 'customfield', id: number, label: string, transaction: Transaction): Promise<void> {
  const where = item === 'customfield' ? { item, field_id: id } : { item, value: String(id) };
  const named = await TicketFilterCondition.findOne({ attributes: ['id'], where, transaction, lock: transaction.LOCK.SHARE });
  if (named) throw new ValidationError(`The ${label} cannot be deleted because ticket filters use it: change their conditions first.`);
}

/**
 * An operator's private filters go with the operator (as the foreign key would take them), deleted
 * through the model so that the processes that keep saved filters (db/definitions.ts) stop using
 * them after the commit; a cascade would leave them kept until their entries expire.
 */
export async function deletePrivateFiltersOf(operatorId: number, transaction: Transaction): Promise<void> {
  await TicketFilter.destroy({ where: { user_id: operatorId }, transaction });
}

/** The ids of the filters shared with one of the operator's groups (a subquery). */
export const sharedWithGroupsOf = (operatorId: number): BoundCondition => sqlFragment`SELECT tfg.filter_id FROM ticket_filter_groups tfg
  JOIN user_groups ug ON ug.group_id = tfg.group_id WHERE ug.user_id = ${operatorId}`;
