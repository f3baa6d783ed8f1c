import type { QueryInterface } from 'sequelize';
import { dropGrams, indexGrams, type GramSource, type Parts } from './068_user_search_grams';

export const name = '071_custom_field_value_options';

/**
 * A list's `customfield` filter of an option field (checklist, multiple, options, radio) is "the
 * option is among the value's ids" (`FIND_IN_SET(option, value)`): the ticket, user and
 * organisation lists read every value of that field (a million values: 0.3 s). An option field's
 * value is its option ids, comma-separated (src/customfields/values.ts).
 * `custom_field_value_options` holds, per field, each id of each value and the record it belongs
 * to, kept by triggers on `custom_field_values` as migration 070 keeps the grams, so the filter is
 * an index range of (field, option).
 *
 * A value is cut into ids when it is a list of ids as the API writes them (no zero in front, no
 * space, at most 1,000: a field has at most 1,000 options), whatever its field's type (a field's
 * type may change after its values are written); any other value holds none. For such a value,
 * `FIND_IN_SET` of an id is exactly "the id is among its rows". A field's delete cascades to its
 * values without their triggers, so it takes the field's ids away itself.
 */
const ID_LIST = '^[1-9][0-9]{0,9}(,[1-9][0-9]{0,9})*$';
const commas = (text: string) => `CHAR_LENGTH(${text}) - CHAR_LENGTH(REPLACE(${text}, ',', ''))`;

/** The ids of a comma-separated list of ids (no more than 1,000), none of any other text. */
export const OPTION_IDS: Parts = {
  column: 'option_id',
  type: 'BIGINT UNSIGNED',
  sequence: 'seq_1_to_1000',
  nth: (text) => `SUBSTRING_INDEX(SUBSTRING_INDEX(${text}, ',', seq), ',', -1)`,
  count: (text) => `IF(${commas(text)} < 1000 AND ${text} REGEXP '${ID_LIST}', ${commas(text)} + 1, 0)`,
};

export const OPTIONS: GramSource = {
  table: 'custom_field_values', grams: 'custom_field_value_options', owner: 'owner_id', ownerColumn: 'owner_id', scope: 'field_id',
  scopeTable: { table: 'custom_fields', trigger: 'custom_fields_value_options_delete' },
  parts: OPTION_IDS,
  triggers: 'custom_field_values_options',
  texts: (r) => [`${r}.value`],
  columns: ['value', 'field_id', 'owner_id'],
};

export const up = (q: QueryInterface): Promise<void> => indexGrams(q, OPTIONS);
export const down = (q: QueryInterface): Promise<void> => dropGrams(q, OPTIONS);
