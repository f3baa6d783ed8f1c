import { Group } from '../db/models';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { GROUP_FIELDS, OPERATOR_GROUP_FIELDS } from './groupFields';
import { pick } from '../lib/serialize';


/**
 * User and operator groups, read-only (beyond the spec: the official PHP client looks them up to
 * fill `groups` of users and operators).
 */
const groupResource = (type: 'user' | 'operator'): ResourceDef<Group> => ({
  path: `/${type}group`,
  model: Group,
  label: `${type} group`,
  scope: { type },
  actions: ['list', 'show'],
  sortable: ['name', 'created_at', 'updated_at'],
  serialize: (g) => pick(g, type === 'operator' ? OPERATOR_GROUP_FIELDS : GROUP_FIELDS),
});

export const userGroupResource = groupResource('user');
export const operatorGroupResource = groupResource('operator');
export const userGroupRouter = resourceRouter(userGroupResource);
export const operatorGroupRouter = resourceRouter(operatorGroupResource);
