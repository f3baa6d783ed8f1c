import type { Transaction } from 'sequelize';
import { Translation } from './db/models';
import { ValidationError } from './errors';
import { loadMany } from './db/load';
import { setRows } from './db/links';
import { CONTROL_CHARACTERS, characters, isLocale } from './lib/validation';
import { storedHtml } from './content/html';

/** Which fields of a resource take `<field>:<locale>` translations, and how items are keyed. */
export interface TranslationSpec {
  /** Stored record type, e.g. 'role'. */
  type: string;
  /** Key of the owner id in a translation item, e.g. 'role_id'. */
  key: string;
  fields: readonly string[];
  /**
   * Checks of a translated value beyond being a string (a slug's format, an excerpt's length):
   * each returns the 422 message for `<field>:<locale>` (given as `key`), or null when it is fine.
   */
  rules?: Readonly<Partial<Record<string, (value: string, key: string) => string | null>>>;
  /** The fields that are multi-line texts (descriptions); the others refuse control characters. */
  multiline?: readonly string[];
  /** The fields that are rich text: their translations go through content/html.ts like the field. */
  html?: readonly string[];
  /** The longest translation of a field, where it is not the default (rich text 1,000,000, multi-line 65,535, one-line 255 characters). */
  max?: Readonly<Partial<Record<string, number>>>;
}

export interface TranslationInput {
  locale: string;
  field: string;
  value: string;
}

/** The longest translation of a field, as the field itself takes: rich text, a multi-line text, a one-line name. */
function translationMax(spec: TranslationSpec, field: string): number {
  const max = spec.max?.[field];
  if (max !== undefined) return max;
  if (spec.html?.includes(field)) return 1_000_000;
  return spec.multiline?.includes(field) ? 65535 : 255;
}

/**
 * Takes the `<field>:<locale>` members out of a request body. Returns the rest of the body for
 * validation, the translations it carried, and whether it carried any: an empty one (or rich text
 * the allow-list empties) is no translation in that locale, but it is still a translation sent, so
 * an update with only `name:fr=` removes the stored ones (the spec's rule for an update that
 * includes a translation).
 */
export function extractTranslations(spec: TranslationSpec | undefined, body: Record<string, unknown>) {
  const rest: Record<string, unknown> = {};
  const items: TranslationInput[] = [];
  let sent = false;
  for (const [key, value] of Object.entries(body ?? {})) {
    const sep = key.indexOf(':');
    if (sep < 0 || !spec) {
      rest[key] = value;
      continue;
    }
    const field = key.slice(0, sep);
    const locale = key.slice(sep + 1);
    if (!spec.fields.includes(field)) throw new ValidationError(`The ${key} field is not translatable.`);
    if (!isLocale(locale)) throw new ValidationError(`The locale of ${key} is not a valid ISO-639 code.`);
    if (typeof value !== 'string') throw new ValidationError(`The ${key} must be a string.`);
    const trimmed = value.trim();
    const max = translationMax(spec, field);
    if (characters(trimmed) > max) throw new ValidationError(`The ${key} may not be greater than ${max} characters.`);
    const problem = trimmed === '' ? null : spec.rules?.[field]?.(trimmed, key);
    if (problem) throw new ValidationError(problem);
    if (!spec.multiline?.includes(field) && CONTROL_CHARACTERS.test(trimmed)) throw new ValidationError(`The ${key} must not contain control characters.`);
    sent = true;
    const stored = spec.html?.includes(field) ? storedHtml(trimmed) : trimmed;
    if (stored.trim() !== '') items.push({ locale: locale.replace('-', '_'), field, value: stored });
  }
  return { body: rest, translations: items, sent };
}

/**
 * Writes a record's translations. `replace` makes them exactly `items` (the spec's rule for an
 * update that carries at least one translation): sent as stored, nothing is written.
 */
export async function saveTranslations(spec: TranslationSpec, recordId: number, items: TranslationInput[], replace: boolean, transaction: Transaction) {
  if (replace) {
    // One per locale and field, the last given (`en-GB` and `en_GB` are one locale).
    const unique = [...new Map(items.map((i) => [`${i.locale} ${i.field}`, i])).values()];
    await setRows(Translation, { record_type: spec.type, record_id: recordId }, ['locale', 'field', 'value'], unique as unknown as Array<Record<string, string>>, transaction);
    return;
  }
  if (items.length) {
    await Translation.bulkCreate(items.map((i) => ({ ...i, record_type: spec.type, record_id: recordId })), {
      transaction,
      updateOnDuplicate: ['value', 'updated_at'],
    });
  }
}

export async function deleteTranslations(spec: TranslationSpec, recordId: number, transaction: Transaction) {
  await Translation.destroy({ where: { record_type: spec.type, record_id: recordId }, transaction });
}

/** All translations of the given records, in one query. */
export async function loadTranslations(spec: TranslationSpec, ids: number[]): Promise<Map<number, Translation[]>> {
  return loadMany(Translation, 'record_id', ids, { where: { record_type: spec.type }, order: [['locale', 'ASC'], ['id', 'ASC']] });
}

/**
 * With `lang` and a translation in that locale, the translated values replace the defaults;
 * otherwise the defaults stay and a `translations` array lists every locale.
 */
export function translate(spec: TranslationSpec, data: Record<string, any>, rows: Translation[], lang?: string) {
  const inLang = lang ? rows.filter((r) => r.locale === lang.replace('-', '_')) : [];
  if (inLang.length) {
    for (const r of inLang) data[r.field] = r.value;
    return data;
  }
  const byLocale = new Map<string, Record<string, any>>();
  for (const r of rows) {
    let item = byLocale.get(r.locale);
    if (!item) {
      item = { [spec.key]: data.id };
      for (const f of spec.fields) item[f] = null;
      byLocale.set(r.locale, item);
    }
    item[r.field] = r.value;
  }
  data.translations = [...byLocale.entries()].map(([locale, item]) => ({ ...item, locale }));
  return data;
}

/**
 * Records embedded in another resource's response (a status inside a ticket, a type inside a
 * category), presented with their translations the way their own resource presents them: one
 * query for the whole page.
 */
export async function presentTranslated<T extends { id: number }>(
  spec: TranslationSpec, records: T[], serialize: (record: T) => Record<string, any>, lang?: string,
): Promise<Map<number, Record<string, any>>> {
  const rows = await loadTranslations(spec, records.map((r) => r.id));
  return new Map(records.map((r) => [r.id, translate(spec, serialize(r), rows.get(r.id) ?? [], lang)]));
}
