import { Op, type Transaction } from 'sequelize';
import { Brand, DepartmentEmail, TicketAssignee, TicketWatcher, User, type Ticket } from '../../db/models';
import { select } from '../../db/select';
import { onceInTransaction } from '../../db/transaction';
import { MANAGER } from '../../user/organisationMembership';
import { jsonList, ownAddresses } from '../common';
import { systemEmail } from '../../mail/compose';
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
 * The people a ticket's user-facing mails copy besides its CC list: the managers and the owner of
 * its user's organisation who asked for it (`organisation_notifications`), active users of the
 * ticket's brand, never the ticket's user (their own tickets' mails reach them as the user). Read
 * when the mail is decided and again when it is sent. One statement.
 */
export async function organisationCopies(ticket: Pick<Ticket, 'user_id' | 'brand_id'>, transaction?: Transaction): Promise<Array<{ id: number; email: string }>> {
  const rows = await select<{ id: number; email: string }>(
    `SELECT m.id, m.email FROM users u
      JOIN organisations o ON o.id = u.organisation_id
      JOIN users m ON m.organisation_id = o.id
      WHERE u.id = :userId AND u.type = 'user'
        AND m.id <> u.id AND m.type = 'user' AND m.active = 1 AND m.organisation_notifications = 1 AND m.brand_id = :brandId
        AND (m.organisation_access_level = :manager OR m.id = o.owner_id)
      ORDER BY m.id`,
    { userId: ticket.user_id, brandId: ticket.brand_id, manager: MANAGER }, { transaction },
  );
  return rows.map((r) => ({ id: Number(r.id), email: r.email }));
}

/**
 * Whom the mails that copy a ticket's CC list copy: its CC addresses, then the organisation's
 * managers of organisationCopies, each once (one already on the list by one of their addresses
 * is not added again).
 */
export async function copiedAddresses(ticket: Pick<Ticket, 'user_id' | 'brand_id' | 'cc'>, transaction?: Transaction): Promise<string[]> {
  const cc = jsonList(ticket.cc);
  const managers = await organisationCopies(ticket, transaction);
  if (!managers.length) return cc;
  const listed = new Set(cc.map((a) => a.trim().toLowerCase()));
  const addresses = await ownAddresses(managers, transaction);
  return [...cc, ...managers.filter((m) => !addresses.get(m.id)!.some((a) => listed.has(a))).map((m) => m.email)];
}

/**
 * Addresses without the help desk's own: a department address (or a sub-address of one, which
 * its mailbox receives too), a brand's default address and the core `default_email`, which the
 * mail of a ticket without a department address and the verification mails go out from
 * (fromAddress). A mail to one would come back in as a ticket message, or land in our own
 * outbox's mailbox (a loop). Compared lower-cased, each address kept once.
 */
export async function withoutOwnAddresses(addresses: string[], transaction?: Transaction): Promise<string[]> {
  const unique = [...new Set(addresses.map((a) => a.trim().toLowerCase()).filter(Boolean))];
  if (!unique.length) return [];
  const bases = [...new Set(unique.map((a) => splitSubaddress(a).base))];
  const [departments, brands, system] = await Promise.all([
    DepartmentEmail.findAll({ attributes: ['address'], where: { address: { [Op.in]: bases } }, transaction }),
    Brand.findAll({ attributes: ['id', 'default_email'], where: { default_email: { [Op.in]: unique } }, transaction }),
    systemEmail(transaction),
  ]);
  const own = new Set(departments.map((e) => e.address.toLowerCase()));
  const brandOwn = new Set([...brands.map((b) => b.default_email!.toLowerCase()), ...(system ? [system] : [])]);
  return unique.filter((a) => !own.has(splitSubaddress(a).base) && !brandOwn.has(a));
}
