import { User } from '../../db/models';
import { equals, flagFilter } from '../../http/listQuery';
import { resourceRouter, type ResourceDef } from '../../http/resource';
import { Joi, field } from '../../lib/validation';
import { personFields } from '../people/rules';
import { loadPeople, serializePerson, type PersonRelations } from '../people/presenter';
import { createOperator, deleteOperator, updateOperator, type CreateOperatorInput } from './service';

const operatorFields = {
  ...personFields,
  // An empty value (`groups=`): an operator keeps at least one group (the 422 says so).
  groups: field.idArray().min(1).allow('', null),
  // An empty value (`depts=`) clears them, as `groups=` clears a user's.
  depts: field.idArray().allow('', null),
};

export const operatorResource: ResourceDef<User, PersonRelations> = {
  path: '/operator',
  model: User,
  label: 'operator',
  scope: { type: 'operator' },
  counted: { kind: 'operator', byValue: ['active'] },
  // A password's hash is for signing in only: no read of an operator carries it.
  unread: ['password'],
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
  create: (input, { transaction }) => createOperator(input as CreateOperatorInput, transaction),
  update: (operator, input, { transaction, writesBefore }) => updateOperator(operator, input, transaction, writesBefore),
  destroy: (operator, { transaction, grants }) => deleteOperator(operator, transaction, grants),
};

export const operatorRouter = resourceRouter(operatorResource);
