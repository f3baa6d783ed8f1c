import type { Transaction } from 'sequelize';
import { Department, PriorityDepartment, Ticket, TicketPriority } from '../db/models';
import { setLinks } from '../db/links';
import { ValidationError } from '../errors';
import { assertNameFree } from '../db/uniqueName';
import { assertNotInFilters } from './filterUse';
import { assertExist } from '../db/exists';
import type { Filter } from '../http/listQuery';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { pick } from '../lib/serialize';
import { inDepartment } from './priorityScope';
import { sqlCondition } from '../db/sql';
import type { TranslationSpec } from '../translations';
import { Joi, field } from '../lib/validation';
import { colourField } from './fields';
import { nextOrder } from '../db/order';

export const PRIORITY_FIELDS = ['id', 'name', 'colour', 'order', 'created_at', 'updated_at'] as const;

/** A priority as its resource shows it (also what tickets embed). */
export const serializePriority = (p: TicketPriority) => pick(p, PRIORITY_FIELDS);

export const PRIORITY_TRANSLATIONS: TranslationSpec = { type: 'ticket_priority', key: 'priority_id', fields: ['name'] };

const filters: Record<string, Filter> = {
  // A department that does not exist offers nothing (as the ticket custom fields' filter), not
  // the priorities of every department.
  department_id: { schema: field.id(), where: (id: number) => sqlCondition`EXISTS (SELECT 1 FROM departments WHERE id = ${id}) AND (${inDepartment(id)})` },
};

/** `depts` replaces the departments of the priority. */
async function replaceDepartments(priorityId: number, deptIds: number[], transaction: Transaction, fresh = false) {
  await assertExist(Department, 'depts', deptIds, transaction);
  await setLinks(PriorityDepartment, { priority_id: priorityId }, 'department_id', deptIds, transaction, { fresh });
}

const depts = () => field.idArray().allow('', null);

export const priorityResource: ResourceDef<TicketPriority> = {
  path: '/priority',
  model: TicketPriority,
  label: 'priority',
  sortable: ['name', 'order', 'created_at', 'updated_at'],
  filters,
  translations: PRIORITY_TRANSLATIONS,
  createSchema: Joi.object({ name: field.string().required(), colour: colourField().default('#ffffff'), order: field.order(), depts: depts() }),
  updateSchema: Joi.object({ name: field.string(), colour: colourField(), order: field.order(), depts: depts() }),

  async create(input, { transaction }) {
    const { depts: deptIds, ...values } = input;
    await assertNameFree(TicketPriority, values.name, null, transaction);
    const priority = await TicketPriority.create({ ...values, order: values.order ?? (await nextOrder(TicketPriority, transaction)) }, { transaction });
    await replaceDepartments(priority.id, deptIds ?? [], transaction, true);
    return priority;
  },

  async update(priority, input, { transaction }) {
    const { depts: deptIds, ...values } = input;
    if (values.name !== undefined) await assertNameFree(TicketPriority, values.name, priority.id, transaction);
    await priority.update(values, { transaction });
    if (deptIds !== undefined) await replaceDepartments(priority.id, deptIds ?? [], transaction);
  },

  async destroy(priority, { transaction }) {
    // Tickets in the trash count too: they can be restored.
    if (await Ticket.findOne({ attributes: ['id'], where: { priority_id: priority.id }, transaction, lock: transaction.LOCK.SHARE })) {
      throw new ValidationError('The priority cannot be deleted because tickets have it: give them another priority first.');
    }
    await assertNotInFilters('priority', priority.id, 'priority', transaction);
    await priority.destroy({ transaction });
  },

  serialize: serializePriority,
};

export const priorityRouter = resourceRouter(priorityResource);
