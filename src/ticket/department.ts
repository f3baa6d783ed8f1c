import { Op } from 'sequelize';
import { Department, DepartmentBrand, DepartmentEmail, DepartmentGroup, Group, OperatorDepartment, User } from '../db/models';
import { ValidationError } from '../http/errors';
import { flagFilter, type Filter } from '../http/listQuery';
import { loadLinked, loadMany } from '../http/load';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { pick } from '../http/serialize';
import { field } from '../http/validation';
import { formattedName, serializeGroup } from '../user/present';

/** The email templates a department names, in the spec's order (-1: none). */
export const EMAIL_TEMPLATE_KEYS = [
  'user_ticket_opened', 'user_ticket_reply', 'user_ticket_waitingresponse', 'user_ticket_autoclose', 'user_ticket_operatorclose',
  'user_email_attachmentrejected', 'user_ticket_disablereplies', 'operator_assigned', 'operator_ticket_opened',
  'operator_user_ticket_reply', 'operator_internal_opened', 'operator_department_changed', 'operator_operator_ticket_reply',
  'operator_ticket_note',
] as const;

/** The stored JSON of `email_templates` as the full object of the 14 keys. */
export function emailTemplates(stored: string | null): Record<string, number> {
  let parsed: Record<string, unknown> = {};
  try {
    const value = stored ? JSON.parse(stored) : {};
    if (value && typeof value === 'object' && !Array.isArray(value)) parsed = value;
  } catch {
    parsed = {};
  }
  const out: Record<string, number> = {};
  for (const key of EMAIL_TEMPLATE_KEYS) {
    const v = Number(parsed[key]);
    out[key] = Number.isSafeInteger(v) && v >= 1 ? v : -1;
  }
  return out;
}

export const DEPARTMENT_KEYS = [
  'id', 'name', 'description', 'order', 'parent_id', 'public', 'ticket_number_format', 'default_assignedto',
  'notify_frontend_ticket', 'notify_email_ticket', 'notify_operators', 'disable_user_email_replies',
] as const;

/** A department without its relations (also what tickets embed). */
export function serializeDepartment(d: Department): Record<string, any> {
  return { ...pick(d, DEPARTMENT_KEYS), email_templates: emailTemplates(d.email_templates), created_at: d.created_at, updated_at: d.updated_at };
}

const EMAIL_KEYS = [
  'id', 'department_id', 'address', 'type', 'protocol', 'server', 'username', 'password', 'port', 'encryption',
  'consume_all', 'delete_downloaded', 'created_at', 'updated_at',
] as const;

const filters: Record<string, Filter> = {
  brand_id: {
    schema: field.id(),
    async where(brandId: number) {
      const links = await DepartmentBrand.findAll({ attributes: ['department_id'], where: { brand_id: brandId } });
      return links.length ? { id: { [Op.in]: links.map((l) => l.department_id) } } : null;
    },
  },
  /** 0: top-level departments only. */
  parent_id: { schema: field.id().allow(0), where: (parentId: number) => ({ parent_id: parentId === 0 ? null : parentId }) },
  public: flagFilter('public'),
  registered_only: flagFilter('registered_only'),
};

interface Related {
  emails: Map<number, DepartmentEmail[]>;
  groups: Map<number, Group[]>;
  operators: Map<number, User[]>;
}

/**
 * Departments: list, show and delete (their create and update are not in the spec). A department
 * with sub-departments, or the last one left, cannot be deleted.
 */
export const departmentResource: ResourceDef<Department, Related> = {
  path: '/department',
  model: Department,
  label: 'department',
  actions: ['list', 'show', 'delete'],
  sortable: ['name', 'order', 'parent_id', 'public', 'registered_only', 'created_at', 'updated_at'],
  filters,

  async destroy(department, { transaction }) {
    if (await Department.count({ where: { parent_id: department.id }, transaction })) {
      throw new ValidationError('The department cannot be deleted while it has sub-departments: move or delete them first.');
    }
    // Locks the other departments so two deletions cannot remove the last two at once.
    const others = await Department.findAll({ attributes: ['id'], where: { id: { [Op.ne]: department.id } }, limit: 1, transaction, lock: transaction.LOCK.UPDATE });
    if (!others.length) throw new ValidationError('The department cannot be deleted because it is the only department: a help desk needs at least one.');
    await department.destroy({ transaction });
  },

  async load(departments) {
    const ids = departments.map((d) => d.id);
    const [emails, groups, operators] = await Promise.all([
      loadMany(DepartmentEmail, 'department_id', ids),
      loadLinked(DepartmentGroup, 'department_id', 'group_id', ids, Group),
      loadLinked(OperatorDepartment, 'department_id', 'user_id', ids, User, { attributes: { exclude: ['password'] } }),
    ]);
    return { emails, groups, operators };
  },

  serialize(d, rel) {
    const groups = (rel.groups.get(d.id) ?? []).map((g) => ({ ...serializeGroup(g), pivot: { department_id: d.id, group_id: g.id } }));
    const operators = (rel.operators.get(d.id) ?? []).filter((u) => u.type === 'operator').map((u) => ({
      ...pick(u, ['id', 'firstname', 'lastname', 'email']), formatted_name: formattedName(u), avatar: u.avatar,
      pivot: { department_id: d.id, user_id: u.id },
    }));
    return {
      ...serializeDepartment(d),
      emails: (rel.emails.get(d.id) ?? []).map((e) => pick(e, EMAIL_KEYS)),
      groups,
      operators,
    };
  },
};

export const departmentRouter = resourceRouter(departmentResource);

