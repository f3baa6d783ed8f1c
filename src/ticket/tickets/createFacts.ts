import type { Transaction } from 'sequelize';
import { select } from '../../db/select';
import { onceInTransaction } from '../../db/transaction';
import { sqlCondition, sqlText } from '../../db/sql';
import type { ChannelName } from '../common';
import { inDepartment } from '../priorityScope';

/**
 * What opening a ticket must know of the configuration before it writes, read in ONE statement
 * (in the transaction): the brand (given, else the default one), the department (its number format
 * and default operator) and whether it is assigned to the brand, the department address (given and
 * of the department and brand, else the first of them), the status, the priority (given and offered
 * in the department, else the first offered) and the channel's id; with the department's
 * notification settings, which the ticket's notifications then need not read back. Each is null when not found: the
 * caller turns that into the same 422 as one statement per check did, in the same order.
 */
export interface CreateFacts {
  brandId: number | null;
  department: {
    id: number; ticket_number_format: string | null; default_assignedto: number | null;
    notify_email_ticket: number; notify_frontend_ticket: number; email_templates: string | null;
  } | null;
  departmentInBrand: boolean;
  departmentEmailId: number | null;
  statusId: number | null;
  priorityId: number | null;
  channelId: number | null;
}

export interface CreateFactsQuery {
  brandId?: number;
  departmentId: number;
  departmentEmailId?: number | null;
  statusId: number | null;
  priorityId?: number;
  channel: ChannelName;
}

export async function createFacts(q: CreateFactsQuery, transaction: Transaction): Promise<CreateFacts> {
  const brand = q.brandId !== undefined
    ? sqlCondition`SELECT id FROM brands WHERE id = ${q.brandId}`
    // The default brand: the first enabled one, else the first (defaultBrandId's rule).
    : sqlCondition`SELECT COALESCE((SELECT id FROM brands WHERE enabled = 1 ORDER BY id LIMIT 1), (SELECT id FROM brands ORDER BY id LIMIT 1))`;
  const email = q.departmentEmailId
    ? sqlCondition`SELECT id FROM department_emails WHERE id = ${q.departmentEmailId} AND department_id = d.id AND brand_id = b.bid`
    : sqlCondition`SELECT id FROM department_emails WHERE department_id = d.id AND brand_id = b.bid ORDER BY id LIMIT 1`;
  const offered = inDepartment(q.departmentId);
  const priority = q.priorityId !== undefined
    ? sqlCondition`SELECT id FROM ticket_priorities WHERE id = ${q.priorityId} AND ${offered}`
    : sqlCondition`SELECT id FROM ticket_priorities WHERE ${offered} ORDER BY \`order\`, id LIMIT 1`;
  const status = sqlCondition`SELECT id FROM ticket_statuses WHERE id = ${q.statusId ?? 0}`;
  const channel = sqlCondition`SELECT id FROM channels WHERE name = ${q.channel} LIMIT 1`;
  const sql = sqlCondition`SELECT b.bid AS brand_id, d.id AS department_id, d.ticket_number_format, d.default_assignedto,
      d.notify_email_ticket, d.notify_frontend_ticket, d.email_templates,
      EXISTS (SELECT 1 FROM department_brands WHERE department_id = d.id AND brand_id = b.bid) AS in_brand,
      ${email} AS department_email_id, ${status} AS status_id, ${priority} AS priority_id, ${channel} AS channel_id
    FROM (SELECT ${brand} AS bid) b LEFT JOIN departments d ON d.id = ${q.departmentId}`;
  // The same facts for every mail of an imported batch (one department address): read once per transaction.
  const [row] = await onceInTransaction(transaction, `ticket.createFacts:${JSON.stringify(q)}`, () => select<Record<string, number | string | null>>(sqlText(sql).slice(1, -1), sql.replacements, { transaction }));
  const id = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return {
    brandId: id(row.brand_id),
    department: row.department_id === null ? null : {
      id: Number(row.department_id), ticket_number_format: (row.ticket_number_format as string | null) ?? null, default_assignedto: id(row.default_assignedto),
      notify_email_ticket: Number(row.notify_email_ticket), notify_frontend_ticket: Number(row.notify_frontend_ticket),
      email_templates: (row.email_templates as string | null) ?? null,
    },
    departmentInBrand: Number(row.in_brand) === 1,
    departmentEmailId: id(row.department_email_id),
    statusId: id(row.status_id),
    priorityId: id(row.priority_id),
    channelId: id(row.channel_id),
  };
}
