import type { Transaction } from 'sequelize';
import { Language } from '../db/models';
import { invalid } from '../http/errors';
import { flagFilter } from '../http/listQuery';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { pick } from '../http/serialize';

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

/** A language code given to a record must name an enabled language of the install (`The selected <field> is invalid.`). */
export async function assertEnabledLanguage(field: string, code: string | null | undefined, transaction?: Transaction): Promise<void> {
  if (!code) return;
  if (!(await Language.findOne({ where: { code, enabled: 1 }, attributes: ['id'], transaction }))) throw invalid(field);
}
