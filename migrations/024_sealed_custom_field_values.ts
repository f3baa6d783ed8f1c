import type { QueryInterface } from 'sequelize';
import { QueryTypes } from 'sequelize';
import { SEALED, openValue, sealValue } from '../src/customfields/sealing';

export const name = '024_sealed_custom_field_values';

const CHUNK = 500;

/** Every value of the fields marked `encrypted`, a chunk at a time: rewritten by `rewrite`. */
async function rewriteValues(q: QueryInterface, rewrite: (fieldId: number, value: string) => string | null): Promise<void> {
  for (let afterId = 0; ;) {
    const rows = await q.sequelize.query<{ id: number; field_id: number; value: string | null }>(
      `SELECT v.id, v.field_id, v.value FROM custom_field_values v JOIN custom_fields f ON f.id = v.field_id
       WHERE f.encrypted = 1 AND v.id > :afterId ORDER BY v.id LIMIT ${CHUNK}`,
      { replacements: { afterId }, type: QueryTypes.SELECT },
    );
    if (!rows.length) return;
    const changed = rows.map((r) => ({ id: r.id, value: r.value === null ? null : rewrite(r.field_id, r.value), was: r.value }))
      .filter((r) => r.value !== r.was);
    // One statement a chunk.
    if (changed.length) {
      await q.sequelize.query(
        `UPDATE custom_field_values SET value = CASE id ${changed.map((_, i) => `WHEN :id${i} THEN :value${i}`).join(' ')} END WHERE id IN (:ids)`,
        { replacements: { ids: changed.map((r) => r.id), ...Object.fromEntries(changed.flatMap((r, i) => [[`id${i}`, r.id], [`value${i}`, r.value]])) } },
      );
    }
    afterId = rows[rows.length - 1].id;
  }
}

/**
 * Values of custom fields marked `encrypted` were stored as given; from now on they are stored
 * encrypted (customfields/sealing.ts). The values already stored are encrypted here (those that
 * already are, by their form, are left as they are).
 */
export async function up(q: QueryInterface): Promise<void> {
  await rewriteValues(q, (fieldId, value) => (SEALED.test(value) ? value : sealValue(fieldId, value)));
}

export async function down(q: QueryInterface): Promise<void> {
  await rewriteValues(q, (fieldId, value) => (SEALED.test(value) ? openValue(fieldId, value) : value));
}
