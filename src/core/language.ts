import { Language } from '../db/models';
import { flagFilter } from '../http/listQuery';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { pick } from '../lib/serialize';

/** Languages ship with the install: list (the spec's) and show one (beyond it). */
export const languageResource: ResourceDef<Language> = {
  path: '/language',
  model: Language,
  label: 'language',
  actions: ['list', 'show'],
  sortable: ['name', 'code', 'enabled', 'created_at', 'updated_at'],
  filters: { enabled: flagFilter('enabled') },
  translations: { type: 'language', key: 'language_id', fields: ['name'] },
  serialize: (l) => pick(l, ['id', 'name', 'code', 'enabled', 'created_at', 'updated_at']),
};

export const languageRouter = resourceRouter(languageResource);
