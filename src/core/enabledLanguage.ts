import type { Transaction } from 'sequelize';
import { Language } from '../db/models';
import { invalid } from '../errors';

/** A language code given to a record must name an enabled language of the install (`The selected <field> is invalid.`). */
export async function assertEnabledLanguage(field: string, code: string | null | undefined, transaction?: Transaction): Promise<void> {
  if (!code) return;
  if (!(await Language.findOne({ where: { code, enabled: 1 }, attributes: ['id'], transaction }))) throw invalid(field);
}
