import { Op, type Transaction } from 'sequelize';
import {
  Brand, CustomFieldDepartment, Department, EmailTemplate, DepartmentBrand, DepartmentEmail, DepartmentGroup, Group, OperatorDepartment,
  PriorityDepartment, Ticket, User,
} from '../db/models';
import { setLinks } from '../db/links';
import { select } from '../db/select';
import { ScopeRequiredError, ValidationError, fieldLabel, invalid } from '../errors';
import { assertNotInFilters } from './filterUse';
import { assertExist } from '../db/exists';
import { flagFilter, type Filter } from '../http/listQuery';
import { loadLinked, loadMany } from '../db/load';
import { nextOrder } from '../db/order';
import { sqlCondition } from '../db/sql';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { pick, sent } from '../lib/serialize';
import { Joi, MAX_ID, field } from '../lib/validation';
import { formattedName, serializeGroup } from '../user/people/presenter';
import { defaultBrandId } from '../user/users/service';
import { serializeDepartmentEmail } from './departmentEmail';
import { NumberFormatError, assertNumberFormat } from './numberFormat';
import { EMAIL_TEMPLATE_KEYS, emailTemplates } from './templateMapping';

// The template mapping lives in a module without dependencies (the mail worker reads it).
export { EMAIL_TEMPLATE_KEYS, emailTemplates } from './templateMapping';

export const DEPARTMENT_FIELDS = [
  'id', 'name', 'description', 'order', 'parent_id', 'public', 'registered_only', 'ticket_number_format', 'default_assignedto',
  'notify_frontend_ticket', 'notify_email_ticket', 'notify_operators', 'disable_user_email_replies',
] as const;

/** An operator as a department's `operators` show them (with formatted_name, avatar and the pivot). */
const OPERATOR_NAME_FIELDS = ['id', 'firstname', 'lastname', 'email'] as const;

/** A department without its relations (also what tickets embed). */
export function serializeDepartment(d: Department): Record<string, any> {
  return { ...pick(d, DEPARTMENT_FIELDS), email_templates: emailTemplates(d.email_templates), created_at: d.created_at, updated_at: d.updated_at };
}

export const DEPARTMENT_TRANSLATIONS = { type: 'department', key: 'department_id', fields: ['name', 'description'], multiline: ['description'] } as const;

/**
 * `email_templates[<key>]=<template id>` (-1: none). Only the 14 keys of a department; ids must
 * name email templates of that key (`assertTemplates`).
 */
const emailTemplatesInput = () => Joi.any().custom((value) => {
  if (value === '' || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new Error('The email templates must be an array keyed by template name (email_templates[user_ticket_opened]=3).');
  }
  const out: Record<string, number> = {};
  for (const [key, raw] of Object.entries(value as Record<string, unknown>)) {
    const name = fieldLabel(`email_templates.${key}`);
    if (!(EMAIL_TEMPLATE_KEYS as readonly string[]).includes(key)) throw new Error(`The ${name} is not an email template of a department.`);
    const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*-?\d{1,10}\s*$/.test(raw) ? Number(raw) : NaN;
    if (!(n === -1 || (Number.isSafeInteger(n) && n >= 1 && n <= MAX_ID))) throw new Error(`The ${name} must be an email template id, or -1 for none.`);
    out[key] = n;
  }
  return out;
});

/** A reference that may be cleared with an empty value or 0. */
const optionalRef = () => Joi.number().integer().min(0).max(MAX_ID).allow(null, '');

const bodyFields = {
  description: field.multiline(65535),
  order: field.order(),
  parent_id: optionalRef(),
  ticket_number_format: field.nullable(255),
  default_assignedto: optionalRef(),
  brand: field.idArray().allow('', null),
  groups: field.idArray().allow('', null),
  operators: field.idArray().allow('', null),
  email_templates: emailTemplatesInput(),
};

const createSchema = Joi.object({
  ...bodyFields,
  name: field.string().required(),
  public: field.flag().default(1),
  registered_only: field.flag().default(0),
  notify_frontend_ticket: field.flag().default(1),
  notify_email_ticket: field.flag().default(1),
  notify_operators: field.flag().default(1),
  disable_user_email_replies: field.flag().default(0),
});

const updateSchema = Joi.object({
  ...bodyFields,
  name: field.string(),
  public: field.flag(),
  registered_only: field.flag(),
  notify_frontend_ticket: field.flag(),
  notify_email_ticket: field.flag(),
  notify_operators: field.flag(),
  disable_user_email_replies: field.flag(),
});

/** Input fields stored as they are. */
const COLUMNS = [
  'name', 'description', 'order', 'public', 'registered_only', 'notify_frontend_ticket', 'notify_email_ticket', 'notify_operators',
  'disable_user_email_replies',
] as const;

const refOrNull = (v: number | null | undefined): number | null => (v ? v : null);

/**
 * The parent of a department: an existing department, never the department itself nor one of
 * its descendants (the tree has no cycle). The ancestors are read with locks, so two updates
 * that would close a loop between them cannot both pass.
 */
async function assertParent(selfId: number | null, parentId: number | null, transaction: Transaction): Promise<void> {
  if (parentId === null) return;
  const cycle = () => new ValidationError('The parent id may not be the department itself or one of its sub-departments.');
  if (parentId === selfId) throw cycle();
  const seen = new Set<number>();
  for (let id: number | null = parentId; id !== null;) {
    const row: Department | null = await Department.findOne({ attributes: ['id', 'parent_id'], where: { id }, transaction, lock: transaction.LOCK.SHARE });
    if (!row) {
      if (id === parentId) throw invalid('parent_id');
      return;
    }
    if (selfId !== null && row.parent_id === selfId) throw cycle();
    if (seen.has(row.id)) return;
    seen.add(row.id);
    id = row.parent_id;
  }
}

function checkNumberFormat(format: string | null | undefined): void {
  if (!format) return;
  try {
    assertNumberFormat(format);
  } catch (err) {
    if (err instanceof NumberFormatError) throw new ValidationError(err.message);
    throw err;
  }
}

/**
 * An update keeps every brand that one of the department's emails uses: mail to that address opens
 * tickets of its brand in the department, which would refuse each (`The selected department is
 * invalid.`). Tickets of a brand removed otherwise keep working; new ones of it are refused in the
 * department, as for any brand it does not serve. The department row is locked by the update and an
 * email's write share-locks it, so no email takes the brand meanwhile.
 */
async function assertEmailBrandsKept(departmentId: number, ids: number[], transaction: Transaction): Promise<void> {
  const [used] = await select<{ address: string; name: string }>(
    `SELECT e.address, b.name FROM department_emails e
       JOIN department_brands l ON l.department_id = e.department_id AND l.brand_id = e.brand_id
       JOIN brands b ON b.id = e.brand_id
     WHERE e.department_id = ?${ids.length ? ' AND e.brand_id NOT IN (?)' : ''} ORDER BY e.id LIMIT 1`,
    ids.length ? [departmentId, ids] : [departmentId], { transaction },
  );
  if (used) {
    throw new ValidationError(`The brand "${used.name}" cannot be removed from the department because its email ${used.address} uses it: give the email another brand first.`);
  }
}

async function replaceBrands(departmentId: number, ids: number[], transaction: Transaction, fresh = false) {
  await assertExist(Brand, 'brand', ids, transaction);
  if (!fresh) await assertEmailBrandsKept(departmentId, ids, transaction);
  await setLinks(DepartmentBrand, { department_id: departmentId }, 'brand_id', ids, transaction, { fresh });
}

async function replaceGroups(departmentId: number, ids: number[], transaction: Transaction, fresh = false) {
  await assertExist(Group, 'groups', ids, transaction, { type: 'operator' });
  await setLinks(DepartmentGroup, { department_id: departmentId }, 'group_id', ids, transaction, { fresh });
}

async function replaceOperators(departmentId: number, ids: number[], transaction: Transaction, fresh = false) {
  await assertExist(User, 'operators', ids, transaction, { type: 'operator' });
  await setLinks(OperatorDepartment, { department_id: departmentId }, 'user_id', ids, transaction, { fresh });
}

/**
 * Every template id a request maps is an email template of that key (a template's `name` is its
 * key; a brand's own version has the same name): `The selected email templates.<key> is invalid.`
 * for an unknown id and for a template of another key (a user's mail sent to operators...).
 */
async function assertTemplates(templates: Record<string, number> | undefined, transaction: Transaction): Promise<void> {
  const entries = Object.entries(templates ?? {}).filter(([, id]) => id !== -1);
  if (!entries.length) return;
  const rows = await EmailTemplate.findAll({ attributes: ['id', 'name'], where: { id: { [Op.in]: entries.map(([, id]) => id) } }, transaction });
  const names = new Map(rows.map((t) => [t.id, t.name]));
  const wrong = entries.find(([key, id]) => names.get(id) !== key);
  if (wrong) throw invalid(`email_templates.${wrong[0]}`);
}

/** The templates the install ships for every brand, by department key (the seed maps them in the first department). */
async function shippedTemplates(transaction: Transaction): Promise<Record<string, number>> {
  const rows = await EmailTemplate.findAll({
    attributes: ['id', 'name'], where: { brand_id: null, name: { [Op.in]: [...EMAIL_TEMPLATE_KEYS] } }, order: [['id', 'ASC']], transaction,
  });
  const out: Record<string, number> = {};
  for (const t of rows) out[t.name] ??= t.id;
  return out;
}

/**
 * A new department's templates: those sent, and for the keys not sent the shipped ones, so that a
 * department created through the API mails as the install's first does; `email_templates=`
 * (empty) maps none (-1 each).
 */
async function newDepartmentTemplates(sent: Record<string, number> | undefined, transaction: Transaction): Promise<Record<string, number>> {
  if (sent !== undefined && !Object.keys(sent).length) return {};
  return { ...(await shippedTemplates(transaction)), ...sent };
}

export async function createDepartment(input: Record<string, any>, transaction: Transaction): Promise<Department> {
  const parentId = refOrNull(input.parent_id);
  await assertTemplates(input.email_templates, transaction);
  const assignee = refOrNull(input.default_assignedto);
  await assertParent(null, parentId, transaction);
  checkNumberFormat(input.ticket_number_format);
  await assertExist(User, 'default_assignedto', assignee, transaction, { type: 'operator' });
  const department = await Department.create({
    ...sent(input, COLUMNS), order: input.order ?? (await nextOrder(Department, transaction)), parent_id: parentId, default_assignedto: assignee, ticket_number_format: input.ticket_number_format ?? null,
    email_templates: JSON.stringify(emailTemplates(await newDepartmentTemplates(input.email_templates, transaction))),
  }, { transaction });
  // A department without a brand is no use to any ticket: the default brand unless told otherwise.
  await replaceBrands(department.id, input.brand === undefined ? [await defaultBrandId(transaction)] : input.brand ?? [], transaction, true);
  if (input.groups?.length) await replaceGroups(department.id, input.groups, transaction, true);
  if (input.operators?.length) await replaceOperators(department.id, input.operators, transaction, true);
  return department;
}

export async function updateDepartment(department: Department, input: Record<string, any>, transaction: Transaction): Promise<void> {
  const values: Record<string, any> = sent(input, COLUMNS);
  if (input.parent_id !== undefined) {
    values.parent_id = refOrNull(input.parent_id);
    if (values.parent_id !== department.parent_id) await assertParent(department.id, values.parent_id, transaction);
  }
  if (input.default_assignedto !== undefined) {
    values.default_assignedto = refOrNull(input.default_assignedto);
    await assertExist(User, 'default_assignedto', values.default_assignedto, transaction, { type: 'operator' });
  }
  if (input.ticket_number_format !== undefined) {
    checkNumberFormat(input.ticket_number_format);
    values.ticket_number_format = input.ticket_number_format;
  }
  // The keys sent replace theirs; the others keep their templates (an empty value resets all to -1).
  if (input.email_templates !== undefined) {
    await assertTemplates(input.email_templates, transaction);
    const merged = Object.keys(input.email_templates).length ? { ...emailTemplates(department.email_templates), ...input.email_templates } : {};
    values.email_templates = JSON.stringify(emailTemplates(merged));
  }
  await department.update(values, { transaction });
  if (input.brand !== undefined) await replaceBrands(department.id, input.brand ?? [], transaction);
  if (input.groups !== undefined) await replaceGroups(department.id, input.groups ?? [], transaction);
  if (input.operators !== undefined) await replaceOperators(department.id, input.operators ?? [], transaction);
}

const filters: Record<string, Filter> = {
  brand_id: {
    schema: field.id(),
    where: (brandId: number) => sqlCondition`id IN (SELECT department_id FROM department_brands WHERE brand_id = ${brandId})`,
  },
  /** 0: top-level departments only. */
  parent_id: { schema: Joi.number().integer().min(0).max(MAX_ID), where: (parentId: number) => ({ parent_id: parentId === 0 ? null : parentId }) },
  public: flagFilter('public'),
  registered_only: flagFilter('registered_only'),
};

interface Related {
  emails: Map<number, DepartmentEmail[]>;
  groups: Map<number, Group[]>;
  operators: Map<number, User[]>;
}

/** What a department may be the only department of: the table, its links to departments, the link's key. */
const OFFERED = [
  { kind: 'priority', table: 'ticket_priorities', links: 'priority_departments', key: 'priority_id' },
  { kind: 'custom field', table: 'custom_fields', links: 'custom_field_departments', key: 'field_id' },
] as const;

/**
 * The first priority or ticket custom field (as `priority "Urgent"`) offered in this department
 * and no other: without it, it would be offered in every department (none means all), so a field
 * required in one department would become required everywhere. The records offered here are
 * locked first (in id order) and their links then read with a locking read, which sees what
 * committed meanwhile: two deletions of a priority's two departments each read the other's link
 * otherwise, and both went through.
 */
async function confinedTo(departmentId: number, transaction: Transaction): Promise<string | null> {
  for (const { kind, table, links, key } of OFFERED) {
    const offered = await select<{ id: number }>(`SELECT ${key} AS id FROM ${links} WHERE department_id = ?`, [departmentId], { transaction });
    if (!offered.length) continue;
    const ids = offered.map((o) => o.id);
    const locked = await select<{ id: number; name: string }>(`SELECT id, name FROM ${table} WHERE id IN (?) ORDER BY id FOR UPDATE`, [ids], { transaction });
    const elsewhere = new Set((await select<{ id: number }>(
      `SELECT DISTINCT ${key} AS id FROM ${links} WHERE ${key} IN (?) AND department_id <> ? LOCK IN SHARE MODE`, [ids, departmentId], { transaction },
    )).map((r) => r.id));
    const only = locked.find((r) => !elsewhere.has(r.id));
    if (only) return `${kind} "${only.name}"`;
  }
  return null;
}

/**
 * Departments: the spec's list, show and delete, and create and update beyond it (same style).
 * A department with sub-departments, or the last one left, cannot be deleted.
 */
export const departmentResource: ResourceDef<Department, Related> = {
  path: '/department',
  model: Department,
  label: 'department',
  sortable: ['name', 'order', 'parent_id', 'public', 'registered_only', 'created_at', 'updated_at'],
  filters,
  translations: DEPARTMENT_TRANSLATIONS,
  createSchema,
  updateSchema,
  create: (input, { transaction }) => createDepartment(input, transaction),
  update: (department, input, { transaction }) => updateDepartment(department, input, transaction),

  async destroy(department, { transaction, grants }) {
    // Its mailboxes go with it, and they are administration (a core scope, as at their own path).
    if (grants && !grants('core:write') && await DepartmentEmail.findOne({ attributes: ['id'], where: { department_id: department.id }, transaction })) {
      throw new ScopeRequiredError('core:write');
    }
    if (await Department.count({ where: { parent_id: department.id }, transaction })) {
      throw new ValidationError('The department cannot be deleted while it has sub-departments: move or delete them first.');
    }
    // Locks the other departments so two deletions cannot remove the last two at once.
    const others = await Department.findAll({ attributes: ['id'], where: { id: { [Op.ne]: department.id } }, limit: 1, transaction, lock: transaction.LOCK.UPDATE });
    if (!others.length) throw new ValidationError('The department cannot be deleted because it is the only department: a help desk needs at least one.');
    // Tickets in the trash count too: they can be restored.
    if (await Ticket.findOne({ attributes: ['id'], where: { department_id: department.id }, transaction, lock: transaction.LOCK.SHARE })) {
      throw new ValidationError('The department cannot be deleted because tickets are in it: move them to another department first.');
    }
    const confined = await confinedTo(department.id, transaction);
    if (confined) throw new ValidationError(`The department cannot be deleted because it is the only department of the ${confined}: give it another department first.`);
    await assertNotInFilters('department', department.id, 'department', transaction);
    // By statements, not the foreign keys' cascade: the models' hooks then tell every process that
    // the priorities and fields a department offers changed (http caches, ticket/configCache.ts).
    await PriorityDepartment.destroy({ where: { department_id: department.id }, transaction });
    await CustomFieldDepartment.destroy({ where: { department_id: department.id }, transaction });
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

  serialize(d, rel, ctx) {
    const groups = (rel.groups.get(d.id) ?? []).map((g) => ({ ...serializeGroup(g), pivot: { department_id: d.id, group_id: g.id } }));
    const operators = (rel.operators.get(d.id) ?? []).filter((u) => u.type === 'operator').map((u) => ({
      ...pick(u, OPERATOR_NAME_FIELDS), formatted_name: formattedName(u), avatar: u.avatar,
      pivot: { department_id: d.id, user_id: u.id },
    }));
    return {
      ...serializeDepartment(d),
      emails: (rel.emails.get(d.id) ?? []).map((e) => serializeDepartmentEmail(e, ctx.grants('core:read'))),
      groups,
      operators,
    };
  },
};

export const departmentRouter = resourceRouter(departmentResource);

