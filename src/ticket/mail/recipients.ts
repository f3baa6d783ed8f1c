import { Op, type Transaction } from 'sequelize';
import { Brand, DepartmentEmail, TicketAssignee, TicketWatcher, User } from '../../db/models';
import { select } from '../../db/select';
import { onceInTransaction } from '../../db/transaction';
import { splitSubaddress } from './replyAddress';

/**
 * Who a ticket's notifications go to. Operator sets are decided when the event happens (in its
 * transaction), one mail job per operator; whether each is still active is checked again when
 * the mail is sent.
 */

/**
 * The active operators of a department: linked to it directly (operator_departments) or through
 * one of its operator groups (department_groups → user_groups). One statement.
 */
export function departmentOperatorIds(departmentId: number, transaction?: Transaction): Promise<number[]> {
  // In a transaction, read once (the tickets of a batch of imported mails share their department).
  return transaction
    ? onceInTransaction(transaction, `department.operators:${departmentId}`, () => readDepartmentOperatorIds(departmentId, transaction))
    : readDepartmentOperatorIds(departmentId);
}

async function readDepartmentOperatorIds(departmentId: number, transaction?: Transaction): Promise<number[]> {
  const rows = await select<{ id: number }>(
    `SELECT u.id FROM users u
      WHERE u.type = 'operator' AND u.active = 1 AND (
        u.id IN (SELECT od.user_id FROM operator_departments od WHERE od.department_id = :departmentId)
        OR u.id IN (SELECT ug.user_id FROM user_groups ug JOIN department_groups dg ON dg.group_id = ug.group_id WHERE dg.department_id = :departmentId)
      )
      ORDER BY u.id`,
    { departmentId }, { transaction },
  );
  return rows.map((r) => Number(r.id));
}

export async function assignedIds(ticketId: number, transaction?: Transaction): Promise<number[]> {
  return (await TicketAssignee.findAll({ attributes: ['user_id'], where: { ticket_id: ticketId }, order: [['user_id', 'ASC']], transaction })).map((a) => a.user_id);
}

export async function watcherIds(ticketId: number, transaction?: Transaction): Promise<number[]> {
  return (await TicketWatcher.findAll({ attributes: ['user_id'], where: { ticket_id: ticketId }, order: [['user_id', 'ASC']], transaction })).map((w) => w.user_id);
}

/**
 * The ids that are active operators, each once, in order, without `except`. In a transaction the
 * same ids are read once (the tickets of a batch of imported mails notify the same operators).
 */
export async function activeOperators(ids: number[], except: number | null, transaction?: Transaction): Promise<number[]> {
  const wanted = [...new Set(ids)].filter((id) => id !== except);
  if (!wanted.length) return [];
  const read = async () => new Set((await User.findAll({
    attributes: ['id'], where: { id: { [Op.in]: wanted }, type: 'operator', active: 1 }, transaction,
  })).map((u) => u.id));
  const found = transaction ? await onceInTransaction(transaction, `operators.active:${[...wanted].sort((a, b) => a - b).join(',')}`, read) : await read();
  return wanted.filter((id) => found.has(id));
}

/**
 * Addresses without the help desk's own: a department address (or a sub-address of one, which
 * its mailbox receives too) and a brand's default address, which the mail of a ticket without a
 * department address and the verification mails go out from. A mail to one would come back in as
 * a ticket message, or land in our own outbox's mailbox (a loop). Compared lower-cased, each
 * address kept once.
 */
export async function withoutOwnAddresses(addresses: string[], transaction?: Transaction): Promise<string[]> {
  const unique = [...new Set(addresses.map((a) => a.trim().toLowerCase()).filter(Boolean))];
  if (!unique.length) return [];
  const bases = [...new Set(unique.map((a) => splitSubaddress(a).base))];
  const [departments, brands] = await Promise.all([
    DepartmentEmail.findAll({ attributes: ['address'], where: { address: { [Op.in]: bases } }, transaction }),
    Brand.findAll({ attributes: ['id', 'default_email'], where: { default_email: { [Op.in]: unique } }, transaction }),
  ]);
  const own = new Set(departments.map((e) => e.address.toLowerCase()));
  const brandOwn = new Set(brands.map((b) => b.default_email!.toLowerCase()));
  return unique.filter((a) => !own.has(splitSubaddress(a).base) && !brandOwn.has(a));
}
