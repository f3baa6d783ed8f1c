import type { Transaction } from 'sequelize';
import { Department, OperatorDepartment, User } from '../db/models';
import { assertExist } from '../http/exists';
import { sent } from '../http/serialize';
import { equals, flagFilter } from '../http/listQuery';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { Joi, field } from '../http/validation';
import { readSettings } from '../http/settings';
import {
  assertEmailFree, assertLanguage, maybeSendVerification, normalisePhones, passwordValues, personFields, replaceGroups, replacePhones,
} from './people';
import { loadPeople, serializePerson, type PersonRelations } from './present';

/** Input fields stored as they are. */
const COLUMNS = ['firstname', 'lastname', 'email', 'country', 'language_code', 'timezone', 'active'] as const;

/** Departments an operator handles besides those of the operator's groups. */
async function replaceDepartments(userId: number, deptIds: number[], transaction: Transaction, fresh = false) {
  await assertExist(Department, 'depts', deptIds, transaction);
  if (!fresh) await OperatorDepartment.destroy({ where: { user_id: userId }, transaction });
  const unique = [...new Set(deptIds)];
  if (unique.length) await OperatorDepartment.bulkCreate(unique.map((department_id) => ({ user_id: userId, department_id })), { transaction });
}

export async function createOperator(input: Record<string, any>, transaction: Transaction): Promise<User> {
  const phones = normalisePhones(input.phone);
  await assertEmailFree('operator', input.email, null, null, transaction);
  await assertLanguage(input.language_code, transaction);
  const core = await readSettings('core');
  const operator = await User.create({
    type: 'operator', brand_id: null, ...sent(input, COLUMNS),
    language_code: input.language_code || core.default_operator_language || 'en',
    timezone: input.timezone || core.default_timezone || 'UTC',
    ...(await passwordValues(input.password)),
  }, { transaction });
  await replaceGroups(operator.id, 'operator', input.groups, transaction, true);
  if (phones) await replacePhones(operator.id, phones, transaction, true);
  if (input.depts) await replaceDepartments(operator.id, input.depts, transaction, true);
  await maybeSendVerification(operator, input.send_email, transaction);
  return operator;
}

export async function updateOperator(operator: User, input: Record<string, any>, transaction: Transaction): Promise<void> {
  const phones = normalisePhones(input.phone);
  if (input.email !== undefined && input.email !== operator.email) await assertEmailFree('operator', input.email, null, operator.id, transaction);
  await assertLanguage(input.language_code, transaction);
  await operator.update({ ...sent(input, COLUMNS), ...(await passwordValues(input.password)) }, { transaction });
  if (input.groups) await replaceGroups(operator.id, 'operator', input.groups, transaction);
  if (phones) await replacePhones(operator.id, phones, transaction);
  if (input.depts) await replaceDepartments(operator.id, input.depts, transaction);
  await maybeSendVerification(operator, input.send_email, transaction);
}

const operatorFields = {
  ...personFields,
  groups: field.idArray().min(1),
  depts: field.idArray(),
};

export const operatorResource: ResourceDef<User, PersonRelations> = {
  path: '/operator',
  model: User,
  label: 'operator',
  scope: { type: 'operator' },
  sortable: ['firstname', 'lastname', 'email', 'active', 'created_at', 'updated_at'],
  filters: { email: equals('email', field.email()), active: flagFilter('active') },
  dates: true,
  createSchema: Joi.object({
    ...operatorFields,
    firstname: field.string().required(),
    lastname: field.string().required(),
    email: field.email().required(),
    groups: operatorFields.groups.required(),
    active: field.flag().default(1),
  }),
  updateSchema: Joi.object({ ...operatorFields, firstname: field.string(), lastname: field.string() }),
  load: (operators) => loadPeople(operators, { customfields: false, detail: false }),
  serialize: (operator, rel, ctx) => serializePerson(operator, rel, ctx.view),
  create: (input, { transaction }) => createOperator(input, transaction),
  update: (operator, input, { transaction }) => updateOperator(operator, input, transaction),
};

export const operatorRouter = resourceRouter(operatorResource);
