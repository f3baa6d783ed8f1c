import { Op, type Transaction } from 'sequelize';
import { Group, Permission, Role, RoleGroup, RolePermission } from '../db/models';
import { setLinks } from '../db/links';
import { invalid } from '../errors';
import { slugify, writeWithFreeSlug } from '../db/slugs';
import { assertExist } from '../db/exists';
import { loadLinked } from '../db/load';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { pick } from '../lib/serialize';
import { Joi, field, toFlag } from '../lib/validation';
import { serializePermission } from './permission';
import { OPERATOR_GROUP_FIELDS } from './groupFields';

/**
 * Roles: a name (translatable), a generated unique slug, the permissions the role grants and the
 * operator groups that have it.
 */

/** Writes the role with the first free slug of its name (db/slugs.ts: a slug another request takes first is skipped). */
const withFreeSlug = <T>(name: string, exceptId: number | null, transaction: Transaction, write: (slug: string) => Promise<T>): Promise<T> =>
  writeWithFreeSlug(slugify(name, 'role'), { model: Role, scope: {}, exceptId, transaction }, 'slug', write);

/** `permission[<permission id>]=1|0`: which permissions the role has. An empty value means none. */
const permissionMap = () => Joi.any().custom((value) => {
  if (value === '' || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new Error('The permission must be an array keyed by permission id (permission[<id>]=1).');
  }
  const out: Record<string, 0 | 1> = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (!/^\d{1,10}$/.test(key)) throw new Error(`The selected permission.${key} is invalid.`);
    const f = toFlag(v);
    if (f === null) throw new Error(`The permission.${key} field must be true or false.`);
    out[key] = f;
  }
  return out;
});

const fields = {
  description: field.multiline(65535),
  group: field.idArray().allow('', null),
  permission: permissionMap(),
};

/** The ids a `permission` object grants, after checking that every key is a permission. */
async function grantedPermissions(permission: Record<string, 0 | 1>, transaction: Transaction): Promise<number[]> {
  const ids = Object.keys(permission).map(Number);
  if (!ids.length) return [];
  const found = new Set((await Permission.findAll({ attributes: ['id'], where: { id: { [Op.in]: ids } }, transaction })).map((p) => p.id));
  const missing = ids.find((id) => !found.has(id));
  if (missing !== undefined) throw invalid(`permission.${missing}`);
  return ids.filter((id) => permission[id] === 1);
}

const replacePermissions = (roleId: number, ids: number[], transaction: Transaction) =>
  setLinks(RolePermission, { role_id: roleId }, 'permission_id', ids, transaction);

const replaceGroups = (roleId: number, ids: number[], transaction: Transaction) =>
  setLinks(RoleGroup, { role_id: roleId }, 'group_id', ids, transaction);

interface Related {
  permissions: Map<number, Permission[]>;
  groups: Map<number, Group[]>;
}

/** A role's own fields in every response (the OpenAPI document describes the same list). */
export const ROLE_FIELDS = ['id', 'name', 'slug', 'description', 'created_at', 'updated_at'] as const;

export const roleResource: ResourceDef<Role, Related> = {
  path: '/role',
  model: Role,
  label: 'role',
  sortable: ['name', 'slug', 'created_at', 'updated_at'],
  translations: { type: 'role', key: 'role_id', fields: ['name', 'description'], multiline: ['description'] },
  createSchema: Joi.object({ name: field.string().required(), ...fields }),
  updateSchema: Joi.object({ name: field.string(), ...fields }),

  async create(input, { transaction }) {
    const { group, permission, ...values } = input;
    const granted = permission ? await grantedPermissions(permission, transaction) : [];
    // Roles are given to operator groups only.
    await assertExist(Group, 'group', group ?? [], transaction, { type: 'operator' });
    const role = await withFreeSlug(values.name, null, transaction, (slug) => Role.create({ ...values, slug }, { transaction }));
    await replacePermissions(role.id, granted, transaction);
    await replaceGroups(role.id, group ?? [], transaction);
    return role;
  },

  async update(role, input, { transaction }) {
    const { group, permission, ...values } = input;
    const granted = permission !== undefined ? await grantedPermissions(permission, transaction) : undefined;
    if (group) await assertExist(Group, 'group', group, transaction, { type: 'operator' });
    if (values.name !== undefined && values.name !== role.name) {
      await withFreeSlug(values.name, role.id, transaction, (slug) => role.update({ ...values, slug }, { transaction }));
    } else {
      await role.update(values, { transaction });
    }
    if (granted !== undefined) await replacePermissions(role.id, granted, transaction);
    if (group !== undefined) await replaceGroups(role.id, group ?? [], transaction);
  },

  async load(roles) {
    const ids = roles.map((r) => r.id);
    const [permissions, groups] = await Promise.all([
      loadLinked(RolePermission, 'role_id', 'permission_id', ids, Permission),
      loadLinked(RoleGroup, 'role_id', 'group_id', ids, Group),
    ]);
    return { permissions, groups };
  },

  // Beyond the spec: `groups`, the operator groups that have the role (what `group` sets), so a
  // client reads back what it wrote, as an operator's `groups` are shown.
  serialize(role, related) {
    const permissions = (related.permissions.get(role.id) ?? [])
      .map((p) => ({ ...serializePermission(p), pivot: { role_id: role.id, permission_id: p.id } }));
    const groups = (related.groups.get(role.id) ?? []).map((g) => ({ ...pick(g, OPERATOR_GROUP_FIELDS), pivot: { role_id: role.id, group_id: g.id } }));
    return { ...pick(role, ROLE_FIELDS), permissions, groups };
  },
};

export const roleRouter = resourceRouter(roleResource);
