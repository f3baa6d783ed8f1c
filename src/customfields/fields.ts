import { Op, type Transaction } from 'sequelize';
import type { Schema } from 'joi';
import { Brand, CustomField, CustomFieldBrand, CustomFieldOption, Translation } from '../db/models';
import { setLinks } from '../db/links';
import { ValidationError, invalid } from '../errors';
import { assertExist } from '../db/exists';
import { type Filter } from '../http/listQuery';
import { loadMany } from '../db/load';
import { nextOrder } from '../db/order';
import { sqlCondition } from '../db/sql';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { pick } from '../lib/serialize';
import { translate, loadTranslations, saveTranslations, type TranslationInput, type TranslationSpec } from '../translations';
import { CONTROL_CHARACTERS, Joi, MAX_ID, characters, field, isLocale } from '../lib/validation';
import { OPTION_TYPES, fitValuesToType, pruneDeletedOptions, resealValuesOfField, type ValueKind } from './values';

/**
 * Custom fields of users (`/api/user/customfield`), organisations (`/api/user/organisationcustomfield`)
 * and tickets (`/api/ticket/customfield`): one factory, one table (`kind` tells them apart).
 * Options belong to the option types only (Checklist, Multiple Options, Options, Radio Buttons).
 * Responses add `depends_on_field_id`, `depends_on_option_id` and `brand` (brand ids) to the spec's list.
 */

/** `name:<locale>` and `description:<locale>` of a field (ids are unique across kinds). */
export const FIELD_TRANSLATIONS: TranslationSpec = { type: 'customfield', key: 'field_id', fields: ['name', 'description'], multiline: ['description'] };
/** `options[n][value:<locale>]` of an option. */
export const OPTION_TRANSLATIONS: TranslationSpec = { type: 'customfieldoption', key: 'option_id', fields: ['value'] };

export const CUSTOM_FIELD_FIELDS = ['id', 'name', 'description', 'type', 'order', 'required', 'public', 'encrypted', 'locked', 'created_at', 'updated_at'] as const;
export const CUSTOM_FIELD_OPTION_FIELDS = ['id', 'field_id', 'value', 'order', 'created_at', 'updated_at'] as const;

const OPTION_VALUE_MAX = 255;

const optionItem = Joi.object({
  id: field.id(),
  value: field.string(OPTION_VALUE_MAX).required(),
  order: field.order(),
}).pattern(/^value:/, Joi.any());

/** A reference that may be cleared with an empty value or 0. */
const optionalRef = () => Joi.number().integer().min(0).max(MAX_ID).allow(null, '');

const bodyFields = {
  description: field.multiline(65535),
  depends_on_field_id: optionalRef(),
  depends_on_option_id: optionalRef(),
  brand: Joi.array().items(field.id()).single().max(1000).allow('', null),
  order: field.order(),
  options: Joi.array().items(optionItem).max(1000).allow('', null),
};
const type = () => Joi.number().integer().valid(0, 1, 2, 3, 4, 5, 6, 7, 8, 9);

export const customFieldCreateSchema = Joi.object({
  name: field.string().required(),
  type: type().required(),
  ...bodyFields,
  required: field.flag().default(0),
  public: field.flag().default(1),
  encrypted: field.flag().default(0),
  locked: field.flag().default(0),
});

export const customFieldUpdateSchema = Joi.object({
  name: field.string(),
  type: type(),
  ...bodyFields,
  required: field.flag(),
  public: field.flag(),
  encrypted: field.flag(),
  locked: field.flag(),
});

interface OptionInput {
  id?: number;
  value: string;
  order?: number;
  translations: TranslationInput[];
}

/**
 * The validated `options` items, with their `value:<locale>` translations taken out. Two items of
 * one value are refused: nobody could tell them apart, and the second would take the first's
 * stored option (and its values).
 */
function optionInputs(items: Array<Record<string, any>>): OptionInput[] {
  const values = new Set<string>();
  return items.map((item, n) => {
    if (values.has(item.value)) throw new ValidationError(`The options.${n}.value field has a duplicate value.`);
    values.add(item.value);
    const translations: TranslationInput[] = [];
    for (const [key, raw] of Object.entries(item)) {
      if (!key.startsWith('value:')) continue;
      const locale = key.slice('value:'.length);
      const name = `options.${n}.${key}`;
      if (!isLocale(locale)) throw new ValidationError(`The locale of ${name} is not a valid ISO-639 code.`);
      if (typeof raw !== 'string') throw new ValidationError(`The ${name} must be a string.`);
      const value = raw.trim();
      if (characters(value) > OPTION_VALUE_MAX) throw new ValidationError(`The ${name} may not be greater than ${OPTION_VALUE_MAX} characters.`);
      if (CONTROL_CHARACTERS.test(value)) throw new ValidationError(`The ${name} must not contain control characters.`);
      if (value !== '') translations.push({ locale: locale.replace('-', '_'), field: 'value', value });
    }
    return { id: item.id, value: item.value, order: item.order, translations };
  });
}

/**
 * A field shown only when another holds one option (`depends_on_option_id`) would, without the
 * option, be shown (and required) whenever that field holds any value; without the field, always.
 * So an option or a field another field depends on is not deleted: that field's dependency is
 * changed first. The dependents are share-locked: none starts to depend on it meanwhile.
 */
async function refuseDependents(what: string, where: { depends_on_field_id: number; depends_on_option_id?: number }, transaction: Transaction): Promise<void> {
  const dependent = await CustomField.findOne({ attributes: ['id', 'name'], where, order: [['id', 'ASC']], transaction, lock: transaction.LOCK.SHARE });
  if (dependent) {
    throw new ValidationError(`The ${what} cannot be deleted because the custom field "${dependent.name}" depends on it: change that field's dependency first.`);
  }
}

async function deleteOptions(field: CustomField, options: CustomFieldOption[], transaction: Transaction): Promise<void> {
  if (!options.length) return;
  for (const o of options) await refuseDependents(`option "${o.value}"`, { depends_on_field_id: field.id, depends_on_option_id: o.id }, transaction);
  const ids = options.map((o) => o.id);
  await Translation.destroy({ where: { record_type: OPTION_TRANSLATIONS.type, record_id: { [Op.in]: ids } }, transaction });
  await CustomFieldOption.destroy({ where: { field_id: field.id, id: { [Op.in]: ids } }, transaction });
  await pruneDeletedOptions(field, ids, transaction);
}

/**
 * Makes the field's options the given list: an item with the id of one of its options updates it;
 * an item without id is the stored option of the same value when there is one not already named
 * (so the spec's `options[n][value]` form, sent again with an option added, keeps the values that
 * users and tickets hold), else a new option; options not listed are deleted, with the values
 * that chose them. `order` defaults to the item's position. An item's translations replace that
 * option's stored ones.
 */
async function replaceOptions(field: CustomField, items: OptionInput[], transaction: Transaction): Promise<void> {
  const existing = new Map((await CustomFieldOption.findAll({ where: { field_id: field.id }, transaction, lock: transaction.LOCK.UPDATE })).map((o) => [o.id, o]));
  const seen = new Set<number>();
  items.forEach((item, n) => {
    if (item.id === undefined) return;
    if (!existing.has(item.id) || seen.has(item.id)) throw invalid(`options.${n}.id`);
    seen.add(item.id);
  });
  const ids = items.map((item) => {
    if (item.id !== undefined) return item.id;
    const same = [...existing.values()].find((o) => !seen.has(o.id) && o.value === item.value);
    if (same) seen.add(same.id);
    return same?.id;
  });
  await deleteOptions(field, [...existing.values()].filter((o) => !seen.has(o.id)), transaction);
  for (const [n, item] of items.entries()) {
    const order = item.order ?? n;
    const id = ids[n];
    let option = id === undefined ? undefined : existing.get(id);
    if (option) await option.update({ value: item.value, order }, { transaction });
    else option = await CustomFieldOption.create({ field_id: field.id, value: item.value, order }, { transaction });
    if (item.translations.length) await saveTranslations(OPTION_TRANSLATIONS, option.id, item.translations, id !== undefined, transaction);
  }
}

const replaceBrands = (fieldId: number, brands: number[], transaction: Transaction) =>
  setLinks(CustomFieldBrand, { field_id: fieldId }, 'brand_id', brands, transaction);

/**
 * `depends_on_field_id` names another field of the same kind (never itself, never one that
 * depends on this one); `depends_on_option_id` one of that field's options.
 */
async function checkDependency(kind: string, selfId: number | null, fieldId: number | null, optionId: number | null, transaction: Transaction): Promise<void> {
  if (optionId !== null && fieldId === null) {
    throw new ValidationError('The depends on field id field is required when depends on option id is present.');
  }
  if (fieldId === null) return;
  const fields = new Map((await CustomField.findAll({ attributes: ['id', 'depends_on_field_id'], where: { kind }, transaction })).map((f) => [f.id, f]));
  if (!fields.has(fieldId) || fieldId === selfId) throw invalid('depends_on_field_id');
  if (selfId !== null) {
    const visited = new Set<number>();
    for (let cur = fields.get(fieldId); cur?.depends_on_field_id; cur = fields.get(cur.depends_on_field_id)) {
      if (cur.depends_on_field_id === selfId) throw new ValidationError('The depends on field id may not name a field that depends on this one.');
      if (visited.has(cur.id)) break;
      visited.add(cur.id);
    }
  }
  if (optionId !== null && !(await CustomFieldOption.findOne({ attributes: ['id'], where: { id: optionId, field_id: fieldId }, transaction, lock: transaction.LOCK.SHARE }))) {
    throw invalid('depends_on_option_id');
  }
}

/**
 * A field with options becomes a type without options only when the same request removes them
 * (`options` empty or null): the change would delete the options and every value that names one.
 */
async function refuseDroppingOptions(field: CustomField, transaction: Transaction): Promise<void> {
  if (!OPTION_TYPES.includes(field.type)) return;
  if (await CustomFieldOption.findOne({ attributes: ['id'], where: { field_id: field.id }, transaction, lock: transaction.LOCK.SHARE })) {
    throw new ValidationError('The type of a custom field with options can only change to another type with options; remove its options first.');
  }
}

const refOrNull = (v: number | null | undefined): number | null => (v ? v : null);

/** `brand_id`: the brand's fields and the fields with no brand list (they apply to every brand). */
const brandFilter: Filter = {
  schema: field.id(),
  async where(brandId: number) {
    if (!(await Brand.findByPk(brandId, { attributes: ['id'] }))) return null;
    return sqlCondition`id NOT IN (SELECT field_id FROM custom_field_brands) OR id IN (SELECT field_id FROM custom_field_brands WHERE brand_id = ${brandId})`;
  },
};

interface Related {
  options: Map<number, CustomFieldOption[]>;
  /** The brand links (`brand`). */
  brands: Map<number, CustomFieldBrand[]>;
  translations: Map<number, Translation[]>;
  /** What the kind's `load` loaded for its `present`. */
  extra: unknown;
}

/** What one kind of custom field adds to the shared shape (ticket fields: `depts`, `purge`...). */
export interface CustomFieldKindSpec {
  kind: ValueKind;
  path: string;
  /** Body fields of create and update beyond the shared ones (create defaults included). */
  createFields?: Record<string, Schema>;
  updateFields?: Record<string, Schema>;
  /** Columns stored as sent (e.g. `purge`); other extra fields are the kind's to write in `afterWrite`. */
  columns?: readonly string[];
  filters?: Record<string, Filter>;
  /** Writes what the extra fields mean (links to departments...), in the request's transaction. */
  afterWrite?(field: CustomField, input: Record<string, any>, creating: boolean, transaction: Transaction): Promise<void>;
  /** Refuses a deletion the kind does not allow (a ticket field that saved filters use), in its transaction. */
  beforeDestroy?(field: CustomField, transaction: Transaction): Promise<void>;
  /** Responses carry `options` (the spec leaves them out of ticket fields; they are still stored for values). */
  withOptions?: boolean;
  /** Loads what `present` shows, for a whole page of fields at once (a fixed number of queries). */
  load?(fields: CustomField[]): Promise<unknown>;
  /** Fields added to each response; `loaded` is what `load` returned. */
  present?(field: CustomField, loaded: any): Record<string, any>;
}

/** The resource of one kind of custom field. */
export function customFieldResource(spec: CustomFieldKindSpec): ResourceDef<CustomField, Related> {
  const { kind, path } = spec;
  const extraColumns = spec.columns ?? [];
  const withoutExtras = (input: Record<string, any>) => {
    const rest = { ...input };
    for (const k of Object.keys(spec.createFields ?? {}).concat(Object.keys(spec.updateFields ?? {}))) if (!extraColumns.includes(k)) delete rest[k];
    return rest;
  };
  return {
    path,
    model: CustomField,
    label: 'custom field',
    scope: { kind },
    sortable: ['name', 'type', 'order', 'required', 'public', 'created_at', 'updated_at'],
    filters: { brand_id: brandFilter, ...spec.filters },
    translations: FIELD_TRANSLATIONS,
    createSchema: spec.createFields ? customFieldCreateSchema.keys(spec.createFields) : customFieldCreateSchema,
    updateSchema: spec.updateFields ? customFieldUpdateSchema.keys(spec.updateFields) : customFieldUpdateSchema,

    async create(input, { transaction }) {
      const { brand, options, depends_on_field_id: depField, depends_on_option_id: depOption, ...values } = withoutExtras(input);
      const items = options && OPTION_TYPES.includes(values.type) ? optionInputs(options) : [];
      const withId = items.findIndex((i) => i.id !== undefined);
      if (withId >= 0) throw invalid(`options.${withId}.id`);
      await checkDependency(kind, null, refOrNull(depField), refOrNull(depOption), transaction);
      if (brand?.length) await assertExist(Brand, 'brand', brand, transaction);
      const created = await CustomField.create({
        ...values, order: values.order ?? (await nextOrder(CustomField, transaction, { kind })), kind, depends_on_field_id: refOrNull(depField), depends_on_option_id: refOrNull(depOption),
      }, { transaction });
      if (brand?.length) await replaceBrands(created.id, brand, transaction);
      if (items.length) await replaceOptions(created, items, transaction);
      await spec.afterWrite?.(created, input, true, transaction);
      return created;
    },

    async update(record, input, { transaction }) {
      const { brand, options, depends_on_field_id: depFieldIn, depends_on_option_id: depOptionIn, ...values } = withoutExtras(input);
      const items = options ? optionInputs(options) : options === null ? [] : undefined;
      const depField = depFieldIn === undefined ? record.depends_on_field_id : refOrNull(depFieldIn);
      const depOption = depOptionIn !== undefined ? refOrNull(depOptionIn)
        : depField === record.depends_on_field_id ? record.depends_on_option_id : null;
      if (depField !== record.depends_on_field_id || depOption !== record.depends_on_option_id) {
        await checkDependency(kind, record.id, depField, depOption, transaction);
      }
      if (brand?.length) await assertExist(Brand, 'brand', brand, transaction);
      if (values.type !== undefined && !OPTION_TYPES.includes(values.type) && items?.length !== 0) await refuseDroppingOptions(record, transaction);

      const oldType = record.type;
      const wasEncrypted = !!record.encrypted;
      await record.update({ ...values, depends_on_field_id: depField, depends_on_option_id: depOption }, { transaction });
      // Stored values follow the flag at once (pruning options below reads them by the new flag).
      if (!!record.encrypted !== wasEncrypted) await resealValuesOfField(record, transaction);
      if (brand !== undefined) await replaceBrands(record.id, brand ?? [], transaction);
      if (!OPTION_TYPES.includes(record.type)) {
        // A field that is no longer of an option type has no options.
        const stale = await CustomFieldOption.findAll({ attributes: ['id', 'value'], where: { field_id: record.id }, transaction, lock: transaction.LOCK.UPDATE });
        await deleteOptions(record, stale, transaction);
      } else if (items !== undefined) {
        await replaceOptions(record, items, transaction);
      }
      if (record.type !== oldType) await fitValuesToType(record, transaction);
      await spec.afterWrite?.(record, input, false, transaction);
    },

    async destroy(record, { transaction }) {
      await refuseDependents('custom field', { depends_on_field_id: record.id }, transaction);
      await spec.beforeDestroy?.(record, transaction);
      const options = await CustomFieldOption.findAll({ attributes: ['id'], where: { field_id: record.id }, transaction });
      if (options.length) {
        await Translation.destroy({ where: { record_type: OPTION_TRANSLATIONS.type, record_id: { [Op.in]: options.map((o) => o.id) } }, transaction });
      }
      // Options, values and brand links go with the field.
      await record.destroy({ transaction });
    },

    async load(fields) {
      const ids = fields.map((f) => f.id);
      const extra = spec.load ? await spec.load(fields) : undefined;
      const brands = await loadMany(CustomFieldBrand, 'field_id', ids, { order: [['field_id', 'ASC'], ['brand_id', 'ASC']] });
      if (spec.withOptions === false) return { options: new Map(), translations: new Map(), brands, extra };
      const options = await loadMany(CustomFieldOption, 'field_id', ids, { order: [['order', 'ASC'], ['id', 'ASC']] });
      const optionIds = [...options.values()].flat().map((o) => o.id);
      return { options, translations: await loadTranslations(OPTION_TRANSLATIONS, optionIds), brands, extra };
    },

    serialize(record, related, ctx) {
      const out: Record<string, any> = {
        ...pick(record, CUSTOM_FIELD_FIELDS),
        // Beyond the spec's list, so that what was written can be read back (as ticket fields' `depts`).
        depends_on_field_id: record.depends_on_field_id ?? null,
        depends_on_option_id: record.depends_on_option_id ?? null,
        brand: (related.brands.get(record.id) ?? []).map((l) => l.brand_id),
        ...pick(record, extraColumns),
        ...spec.present?.(record, related.extra),
      };
      if (spec.withOptions === false) return out;
      out.options = (related.options.get(record.id) ?? []).map((o) =>
        translate(OPTION_TRANSLATIONS, pick(o, CUSTOM_FIELD_OPTION_FIELDS), related.translations.get(o.id) ?? [], ctx.lang));
      return out;
    },
  };
}

export const organisationCustomFieldResource = customFieldResource({ kind: 'organisation', path: '/organisationcustomfield' });
export const userCustomFieldResource = customFieldResource({ kind: 'user', path: '/customfield' });

export const organisationCustomFieldRouter = resourceRouter(organisationCustomFieldResource);
export const userCustomFieldRouter = resourceRouter(userCustomFieldResource);
