import { Permission } from '../db/models';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { pick } from '../lib/serialize';

const HEAD_FIELDS = ['id', 'inherit_id', 'module_id', 'name'] as const;
const TAIL_FIELDS = ['description', 'created_at', 'updated_at'] as const;

/** A permission as the API returns it; `slug` says which actions it covers, as 1/0. */
export function serializePermission(p: Permission): Record<string, any> {
  return {
    ...pick(p, HEAD_FIELDS),
    slug: { view: p.can_view ? 1 : 0, create: p.can_create ? 1 : 0, update: p.can_update ? 1 : 0, delete: p.can_delete ? 1 : 0 },
    ...pick(p, TAIL_FIELDS),
  };
}

/** Permissions ship with the install: read-only list and show. */
export const permissionResource: ResourceDef<Permission> = {
  path: '/permission',
  model: Permission,
  label: 'permission',
  actions: ['list', 'show'],
  sortable: ['name', 'module_id', 'created_at', 'updated_at'],
  serialize: (p) => serializePermission(p),
};

export const permissionRouter = resourceRouter(permissionResource);
