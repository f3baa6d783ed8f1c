import type { Transaction } from 'sequelize';
import { CustomField, CustomFieldDepartment, CustomFieldOption, Department } from '../db/models';
import { setLinks } from '../db/links';
import { CUSTOM_FIELD_OPTION_FIELDS, OPTION_TRANSLATIONS, customFieldResource } from '../customfields/fields';
import { assertExist } from '../db/exists';
import type { Filter } from '../http/listQuery';
import { loadMany } from '../db/load';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { pick } from '../lib/serialize';
import { sqlCondition } from '../db/sql';
import { field } from '../lib/validation';
import { assertNotInFilters } from './filterUse';

/**
 * Ticket custom fields (`/api/ticket/customfield`): the shared custom field resource, plus `purge`
 * (0/1) and `depts`, the departments whose tickets have the field (none: every department, as
 * a field without brands applies to every brand). Responses carry no `options`, as the spec
 * says; options of the option types are still stored (ticket values name them). They add `depts`
 * (department ids), so that what was written can be read back. A field that a saved ticket filter's
 * condition uses is not deleted (filterUse.ts): dropping the condition would widen the filter.
 */

async function replaceDepartments(fieldId: number, ids: number[], transaction: Transaction): Promise<void> {
  await assertExist(Department, 'depts', ids, transaction);
  await setLinks(CustomFieldDepartment, { field_id: fieldId }, 'department_id', ids, transaction);
}

/** `department_id`: the department's fields and the fields of every department (no `depts`). */
const departmentFilter: Filter = {
  schema: field.id(),
  async where(departmentId: number) {
    if (!(await Department.findByPk(departmentId, { attributes: ['id'] }))) return null;
    return sqlCondition`id NOT IN (SELECT field_id FROM custom_field_departments) OR id IN (SELECT field_id FROM custom_field_departments WHERE department_id = ${departmentId})`;
  },
};

const depts = () => field.idArray().allow('', null);

export const ticketCustomFieldResource = customFieldResource({
  kind: 'ticket',
  path: '/customfield',
  createFields: { depts: depts(), purge: field.flag().default(0) },
  updateFields: { depts: depts(), purge: field.flag() },
  columns: ['purge'],
  filters: { department_id: departmentFilter },
  withOptions: false,

  async afterWrite(record, input, _creating, transaction) {
    if (input.depts !== undefined) await replaceDepartments(record.id, input.depts ?? [], transaction);
  },

  beforeDestroy: (record, transaction) => assertNotInFilters('customfield', record.id, 'custom field', transaction),

  load: (fields) => loadMany(CustomFieldDepartment, 'field_id', fields.map((f) => f.id), { order: [['field_id', 'ASC'], ['department_id', 'ASC']] }),
  present: (record, links: Map<number, CustomFieldDepartment[]>) => ({ depts: (links.get(record.id) ?? []).map((l) => l.department_id) }),
});

/**
 * `/api/ticket/customfield/{customfield}/option`: the options of a ticket custom field, read-only
 * (they are written with the field's `options`). The field's responses carry none, as the spec
 * says, yet a ticket's value of an option field is an option id: without this an integrator
 * could not learn the ids of the options it created.
 */
export const ticketCustomFieldOptionResource: ResourceDef<CustomFieldOption> = {
  path: '/customfield/:customfield/option',
  model: CustomFieldOption,
  label: 'custom field option',
  parent: { model: CustomField, label: 'custom field', param: 'customfield', column: 'field_id', scope: { kind: 'ticket' } },
  actions: ['list', 'show'],
  sortable: ['value', 'order', 'created_at', 'updated_at'],
  translations: OPTION_TRANSLATIONS,
  serialize: (option) => pick(option, CUSTOM_FIELD_OPTION_FIELDS),
};

export const ticketCustomFieldRouter = resourceRouter(ticketCustomFieldResource);
export const ticketCustomFieldOptionRouter = resourceRouter(ticketCustomFieldOptionResource);
