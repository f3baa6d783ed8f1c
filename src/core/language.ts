import { Language } from '../db/models';
import { flagFilter } from '../http/listQuery';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { pick } from '../lib/serialize';

/** The fields of every response (the OpenAPI document describes the same list). */
export const LANGUAGE_FIELDS = ['id', 'name', 'code', 'enabled', 'created_at', 'updated_at'] as const;

/** Languages ship with the install: list (the spec's) and show one (beyond it). */
export const languageResource: ResourceDef<Language> = {
  path: '/language',
  model: Language,
  label: 'language',
  actions: ['list', 'show'],
  sortable: ['name', 'code', 'enabled', 'created_at', 'updated_at'],
  filters: { enabled: flagFilter('enabled') },
  translations: { type: 'language', key: 'language_id', fields: ['name'] },
  serialize: (l) => pick(l, LANGUAGE_FIELDS),
};

export const languageRouter = resourceRouter(languageResource);
