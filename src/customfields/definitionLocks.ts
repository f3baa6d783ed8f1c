import type { Transaction } from 'sequelize';
import { CustomField } from '../db/models';
import { SnapshotBehindLock } from '../db/errors';
import { select } from '../db/select';
import type { CustomFieldKind } from '../db/models/CustomField';

/**
 * Writes of values and changes of a field's definition are serialised on the field's row. A change
 * (update or delete: the resource locks the row FOR UPDATE before anything else) converts or
 * deletes the stored values in its own transaction; a write of values reads the definitions of
 * the fields it names here, under a shared lock held to its commit, and validates against them,
 * not against the per-process cache (db/definitions.ts), which may be a version behind. So a write
 * either commits before a change starts (which then converts its value), or waits for the change
 * and validates against the new definition.
 */
const definitionsSql = (lock: string) => `SELECT f.*,
  (SELECT GROUP_CONCAT(brand_id ORDER BY brand_id) FROM custom_field_brands WHERE field_id = f.id${lock}) AS brand_ids,
  (SELECT GROUP_CONCAT(department_id ORDER BY department_id) FROM custom_field_departments WHERE field_id = f.id${lock}) AS department_ids,
  (SELECT GROUP_CONCAT(id ORDER BY id) FROM custom_field_options WHERE field_id = f.id${lock}) AS option_ids
  FROM custom_fields f WHERE f.kind = ? AND f.id IN (?) ORDER BY f.id${lock}`;

/**
 * The fields of `kind` among `ids` (those deleted are missing), share-locked until the commit,
 * with their brands, departments and options (`brand_ids`, `department_ids`, `option_ids`:
 * comma-separated ids, or null). When the transaction's snapshot is behind them (a
 * change committed while this waited: the values it converted and the options it deleted are not
 * in the snapshot), the transaction runs again: SnapshotBehindLock.
 */
export async function lockedDefinitions(kind: CustomFieldKind, ids: number[], transaction: Transaction): Promise<Map<number, CustomField>> {
  if (!ids.length) return new Map();
  const locked = await select(definitionsSql(' LOCK IN SHARE MODE'), [kind, ids], { transaction });
  const seen = await select(definitionsSql(''), [kind, ids], { transaction });
  if (JSON.stringify(seen) !== JSON.stringify(locked)) throw new SnapshotBehindLock('custom field definitions');
  return new Map(locked.map((row) => [Number(row.id), CustomField.build(row, { raw: true, isNewRecord: false })]));
}
