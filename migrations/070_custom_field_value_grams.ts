import type { QueryInterface } from 'sequelize';
import { dropGrams, grams, indexGrams, type GramSource } from './068_user_search_grams';

export const name = '070_custom_field_value_grams';

/**
 * A list's `customfield` filter of a text or textarea field is "contains" (`value LIKE
 * '%term%'`): the ticket, user and organisation lists read every value of that field (a million
 * values: 0.74 s). `custom_field_value_grams` holds, per field, the three-character parts of each
 * value and the record it belongs to, as migration 068 does for names, kept by triggers on
 * `custom_field_values`; the filter narrows the records to those holding the term's rarest gram
 * in that field (src/db/searchGrams.ts, src/customfields/values.ts) before the LIKE decides.
 *
 * Values of every field, whatever its type (a field's type may change after its values are
 * written): most are short (an option's id, a date, a flag hold none or a few grams). A value
 * longer than 64 characters (a textarea's) holds no grams but one row of LONG_TEXT, which every
 * look-up includes, so it is still found, by its LIKE. A field's delete cascades to its values
 * without their triggers, so it takes the field's grams away itself.
 */
export const VALUES: GramSource = {
  table: 'custom_field_values', grams: 'custom_field_value_grams', owner: 'owner_id', ownerColumn: 'owner_id', scope: 'field_id',
  scopeTable: { table: 'custom_fields', trigger: 'custom_fields_value_grams_delete' },
  parts: grams(64),
  texts: (r) => [`${r}.value`],
  columns: ['value', 'field_id', 'owner_id'],
};

export const up = (q: QueryInterface): Promise<void> => indexGrams(q, VALUES);
export const down = (q: QueryInterface): Promise<void> => dropGrams(q, VALUES);
