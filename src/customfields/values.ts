import { Op, literal, type Transaction } from 'sequelize';
import type { CustomFieldKind } from '../db/models/CustomField';
import { CustomField, CustomFieldOption, CustomFieldValue } from '../db/models';
import { select } from '../db/select';
import { customFieldGrams, holdingOption, narrowedByGrams, optionHolders } from '../db/searchGrams';
import { definitions } from '../db/definitions';
import { onceInTransaction } from '../db/transaction';
import { ValidationError, invalid } from '../errors';
import type { Condition, Filter } from '../http/listQuery';
import { allOf, likeContains, sqlCondition, sqlText, type BoundCondition } from '../db/sql';
import { IN_LISTS_AS_LISTS, groupBy } from '../db/load';
import { CONTROL_CHARACTERS, Joi, characters, toFlag } from '../lib/validation';
import { SEALED_TEXT_MAX_BYTES, openValue, sealValue } from './sealing';
import { lockedDefinitions } from './definitionLocks';

/**
 * Values of user, organisation and ticket custom fields: one row per field and owner in
 * custom_field_values (owner_id is a user, organisation or ticket id, by the field's kind).
 */
export type ValueKind = CustomFieldKind;

/** Custom field `type` values. */
export const TYPE = {
  BOOLEAN: 0, CHECKBOX: 1, CHECKLIST: 2, DATE: 3, MULTIPLE: 4, OPTIONS: 5, PASSWORD: 6, RADIO: 7, TEXT: 8, TEXTAREA: 9,
} as const;

/** Types whose values are option ids (and which have options). */
export const OPTION_TYPES: readonly number[] = [TYPE.CHECKLIST, TYPE.MULTIPLE, TYPE.OPTIONS, TYPE.RADIO];
/** Option types holding several option ids (stored comma-separated). */
export const MULTI_OPTION_TYPES: readonly number[] = [TYPE.CHECKLIST, TYPE.MULTIPLE];

const TEXT_MAX = 255;
/** The value column is TEXT: 65535 bytes. */
const TEXTAREA_MAX_BYTES = 65535;

/** Ids of the fields of a kind: values are tied to their kind through their field. */
async function fieldIdsOfKind(kind: ValueKind, transaction?: Transaction): Promise<number[]> {
  return (await CustomField.findAll({ attributes: ['id'], where: { kind }, transaction })).map((f) => f.id);
}

/**
 * Every field of the kind with its brand, department and option lists (`brand_ids`,
 * `department_ids`, `option_ids`: comma-separated ids, or null), in one statement, kept per
 * process until a field or an option changes (db/definitions): ticket create reads them on every
 * call, and a list's `customfield` of an option checks the option against them.
 */
function fieldsOfKind(kind: ValueKind, transaction?: Transaction): Promise<CustomField[]> {
  const scope = (table: string, column: string, as: string): [ReturnType<typeof literal>, string] =>
    [literal(`(SELECT GROUP_CONCAT(${column}) FROM ${table} WHERE field_id = \`CustomField\`.\`id\`)`), as];
  return definitions.get(`customfields.${kind}`, (t) => CustomField.findAll({
    where: { kind },
    attributes: { include: [scope('custom_field_brands', 'brand_id', 'brand_ids'), scope('custom_field_departments', 'department_id', 'department_ids'), scope('custom_field_options', 'id', 'option_ids')] },
    transaction: t,
  }), transaction) as Promise<CustomField[]>;
}

/** The ids of a field's list column (`brand_ids`, `department_ids`, `option_ids`), as fieldsOfKind and lockedDefinitions read it. */
const idList = (f: CustomField, column: string) => String(f.get(column) ?? '').split(',').filter(Boolean).map(Number);

/** A kept field's option ids, once per field as kept (a field may have thousands). */
const optionIdSets = new WeakMap<CustomField, ReadonlySet<number>>();
function optionIdsOf(field: CustomField): ReadonlySet<number> {
  let ids = optionIdSets.get(field);
  if (!ids) optionIdSets.set(field, (ids = new Set(idList(field, 'option_ids'))));
  return ids;
}

/** Whether `optionId` is an option of the kind's field `fieldId`, as the process keeps the fields (no statement while none changes). */
export async function isOptionOfField(kind: ValueKind, fieldId: number, optionId: number): Promise<boolean> {
  const field = (await fieldsOfKind(kind)).find((f) => f.id === fieldId);
  return !!field && optionIdsOf(field).has(optionId);
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const isEmpty = (v: unknown) => v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);

const INT = /^\s*-?\d{1,15}\s*$/;

function parseFlag(v: unknown): '1' | '0' | null {
  const f = toFlag(v);
  return f === null ? null : f === 1 ? '1' : '0';
}

function parseInteger(v: unknown): number | null {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v : null;
  if (typeof v === 'string' && INT.test(v)) return Number(v);
  return null;
}

/** A list of option ids: an array, one id, or the stored comma-separated form. */
function parseIdList(v: unknown): number[] | null {
  const parts = Array.isArray(v) ? v : typeof v === 'number' ? [v] : typeof v === 'string' ? v.split(',') : isPlainObject(v) ? Object.values(v) : null;
  if (!parts) return null;
  const ids: number[] = [];
  for (const p of parts) {
    if (p === '' || p === null) continue;
    const n = parseInteger(p);
    if (n === null || n < 1) return null;
    if (!ids.includes(n)) ids.push(n);
  }
  return ids;
}

/** Fields of a kind that apply to a brand: no brand list, or the brand is in it. */
function appliesToBrand(field: CustomField, brandsByField: Map<number, number[]>, brandId: number): boolean {
  const brands = brandsByField.get(field.id);
  return !brands || brands.length === 0 || brands.includes(brandId);
}

/**
 * The stored form of a value (a string), null for "no value" (the stored value is deleted), or a
 * 422 naming the field.
 */
function normalise(field: CustomField, raw: unknown, optionIds: Set<number>): string | null {
  const name = `customfield.${field.id}`;
  if (isEmpty(raw)) return null;
  switch (field.type) {
    case TYPE.BOOLEAN:
    case TYPE.CHECKBOX: {
      const f = parseFlag(raw);
      if (f === null) throw new ValidationError(`The ${name} field must be true or false.`);
      return f;
    }
    case TYPE.DATE: {
      const n = parseInteger(raw);
      if (n === null) throw new ValidationError(`The ${name} must be a date as a UNIX timestamp (an integer).`);
      return String(n);
    }
    case TYPE.OPTIONS:
    case TYPE.RADIO: {
      const n = parseInteger(raw);
      if (n === null || !optionIds.has(n)) throw new ValidationError(`The ${name} must be the id of one of the field's options.`);
      return String(n);
    }
    case TYPE.CHECKLIST:
    case TYPE.MULTIPLE: {
      const ids = parseIdList(raw);
      if (ids === null) throw new ValidationError(`The ${name} must be a list of ids of the field's options.`);
      const bad = ids.findIndex((id) => !optionIds.has(id));
      if (bad >= 0) throw new ValidationError(`The ${name} must be a list of ids of the field's options: ${ids[bad]} is not one of them.`);
      return ids.length ? ids.join(',') : null;
    }
    case TYPE.TEXT: {
      if (typeof raw !== 'string' && typeof raw !== 'number') throw new ValidationError(`The ${name} must be a string.`);
      const s = String(raw).trim();
      if (characters(s) > TEXT_MAX) throw new ValidationError(`The ${name} may not be greater than ${TEXT_MAX} characters.`);
      // A one-line text (Textarea is the multi-line type).
      if (CONTROL_CHARACTERS.test(s)) throw new ValidationError(`The ${name} must not contain control characters.`);
      return s === '' ? null : s;
    }
    case TYPE.PASSWORD: {
      if (typeof raw !== 'string' && typeof raw !== 'number') throw new ValidationError(`The ${name} must be a string.`);
      const s = String(raw);
      if (characters(s) > TEXT_MAX) throw new ValidationError(`The ${name} may not be greater than ${TEXT_MAX} characters.`);
      return s;
    }
    default: {
      // Textarea
      if (typeof raw !== 'string' && typeof raw !== 'number') throw new ValidationError(`The ${name} must be a string.`);
      const s = String(raw);
      const max = field.encrypted ? SEALED_TEXT_MAX_BYTES : TEXTAREA_MAX_BYTES;
      if (Buffer.byteLength(s, 'utf8') > max) throw new ValidationError(`The ${name} may not be greater than ${max} bytes.`);
      return s.trim() === '' ? null : s;
    }
  }
}

/** A dependent field counts only when its parent holds the option it depends on (or any value). */
function dependencyMet(field: CustomField, values: Map<number, string | null>, fields: Map<number, CustomField>): boolean {
  if (!field.depends_on_field_id) return true;
  const parent = fields.get(field.depends_on_field_id);
  if (!parent) return true;
  const parentValue = values.get(parent.id);
  if (parentValue === null || parentValue === undefined) return false;
  if (!field.depends_on_option_id) return true;
  return parentValue.split(',').includes(String(field.depends_on_option_id));
}

export interface ApplyOptions {
  brandId: number;
  /** On create, every required field of the brand needs a value (unless `implicit`). */
  creating: boolean;
  /**
   * The owner is created by the help desk itself, not through its form (a ticket's new user by
   * `user_email` or by mail): missing required fields are not asked of it, as SupportPal enforces
   * them on its forms. A value given empty is still refused.
   */
  implicit?: boolean;
  /** On update, locked fields that already have a value change only when true. */
  overwriteLocked: boolean;
  /**
   * Ticket fields: the ticket's department. Only the fields of every department (no `depts`) and
   * those of this one apply, like fields of other brands.
   */
  departmentId?: number;
  transaction: Transaction;
}

/**
 * Writes the request's `customfield` object (keyed by field id) for one user or organisation.
 * A field unknown, of another kind or of another brand: `The selected customfield.<id> is invalid.`
 * An empty value deletes the stored one. Locked fields keep their value on update unless
 * `overwriteLocked`. On create, required fields (whose dependency is met) must have a value.
 * Resolves whether a stored value changed (values sent as stored write nothing).
 */
export async function applyCustomFieldValues(kind: ValueKind, ownerId: number, input: Record<string, unknown> | undefined | null, opts: ApplyOptions): Promise<boolean> {
  const { transaction } = opts;
  if (input !== undefined && input !== null && !isPlainObject(input)) {
    throw new ValidationError('The customfield must be an array keyed by custom field id.');
  }
  const entries = Object.entries(input ?? {});
  for (const [key] of entries) if (!/^\d{1,10}$/.test(key)) throw invalid(`customfield.${key}`);
  if (!entries.length && (!opts.creating || opts.implicit)) return false;

  // Once per transaction when Redis cannot say: a batch of imported mails creates a ticket per mail.
  const cached = await onceInTransaction(transaction, `customfields.${kind}`, () => fieldsOfKind(kind, transaction));
  // The fields the input names are validated against their definitions share-locked now
  // (./definitionLocks.ts): one deleted meanwhile is not a field any more.
  const named = entries.map(([key]) => Number(key)).filter((id) => cached.some((f) => f.id === id));
  const locked = await lockedDefinitions(kind, named, transaction);
  const rows = cached.flatMap((f) => (!named.includes(f.id) ? [f] : locked.has(f.id) ? [locked.get(f.id)!] : []));
  const fields = new Map(rows.map((f) => [f.id, f]));
  const brandsByField = new Map(rows.map((f) => [f.id, idList(f, 'brand_ids')]));
  if (opts.departmentId !== undefined) {
    // Fields of every department (no list) apply, and those listing this one.
    for (const f of rows) {
      const depts = idList(f, 'department_ids');
      if (depts.length && !depts.includes(opts.departmentId)) fields.delete(f.id);
    }
  }

  // On an update, a field of the kind that does not apply (any more: the owner moved brand, the
  // field's brands or departments changed) takes an empty value only: the owner may still hold one,
  // kept from before, which it clears.
  const ofKind = new Map(rows.map((f) => [f.id, f]));
  const isEmpty = (raw: unknown) => raw === null || raw === undefined || (typeof raw === 'string' && !raw.trim()) || (Array.isArray(raw) && !raw.length);
  const cleared: number[] = [];
  const given = entries.flatMap(([key, raw]) => {
    const field = fields.get(Number(key));
    if (field && appliesToBrand(field, brandsByField, opts.brandId)) return [{ field, raw }];
    if (opts.creating || !ofKind.has(Number(key)) || !isEmpty(raw)) throw invalid(`customfield.${key}`);
    cleared.push(Number(key));
    return [];
  });
  const clearedOutside = cleared.length
    ? await CustomFieldValue.destroy({ where: { owner_id: ownerId, field_id: { [Op.in]: cleared } }, transaction })
    : 0;

  const optionIds = new Map(given.map(({ field }) => [field.id, new Set(idList(field, 'option_ids'))]));

  // No lock here: callers hold the owner's row (the resource's update locks it), which serialises
  // writes of one owner's values; a range lock on the values would only add deadlocks between owners.
  // The snapshot is no older than the last change of the named fields (lockedDefinitions), which
  // converts their values.
  const stored = opts.creating ? [] : await CustomFieldValue.findAll({
    where: { owner_id: ownerId, field_id: { [Op.in]: [...fields.keys()] } }, transaction,
  });
  // Plain values: those of encrypted fields decrypted, to compare and to check dependencies.
  const plain = (v: CustomFieldValue) => (fields.get(v.field_id)?.encrypted ? openValue(v.field_id, v.value) : v.value);
  const storedBy = new Map(stored.map((v) => [v.field_id, plain(v)]));

  // The values after this request: stored ones, then the given ones (locked fields keep theirs).
  const next = new Map<number, string | null>(storedBy);
  const changes = new Map<number, string | null>();
  for (const { field, raw } of given) {
    const value = normalise(field, raw, optionIds.get(field.id) ?? new Set());
    const current = storedBy.get(field.id) ?? null;
    if (!opts.creating && field.locked && !opts.overwriteLocked && current !== null && current !== '') continue;
    next.set(field.id, value);
    if (current !== value) changes.set(field.id, value);
  }

  // Required fields of the brand: on create each needs a value; on update (and for an implicit
  // owner) one given empty is refused, whether or not a value was stored.
  const givenIds = new Set(given.map((g) => g.field.id));
  for (const field of fields.values()) {
    if (!field.required || !appliesToBrand(field, brandsByField, opts.brandId)) continue;
    const value = next.get(field.id);
    if (value !== null && value !== undefined) continue;
    if ((!opts.creating || opts.implicit) && !givenIds.has(field.id)) continue;
    if (dependencyMet(field, next, fields)) throw new ValidationError(`The customfield.${field.id} field is required.`);
  }

  const removed = [...changes].filter(([, v]) => v === null).map(([id]) => id);
  const upserts = [...changes].filter((c): c is [number, string] => c[1] !== null)
    .map(([field_id, value]) => ({ field_id, owner_id: ownerId, value: fields.get(field_id)!.encrypted ? sealValue(field_id, value) : value }));
  if (removed.length) await CustomFieldValue.destroy({ where: { owner_id: ownerId, field_id: { [Op.in]: removed } }, transaction });
  if (upserts.length) await CustomFieldValue.bulkCreate(upserts, { transaction, updateOnDuplicate: ['value', 'updated_at'] });
  return changes.size > 0 || clearedOutside > 0;
}

/** The custom field values of a page of users, organisations or tickets, in one query. */
export async function loadCustomFieldValues(ownerIds: number[], kind: ValueKind): Promise<Map<number, CustomFieldValue[]>> {
  const ids = [...new Set(ownerIds)];
  if (!ids.length) return new Map();
  // Plain rows, for presenters (as db/load.ts's loaders return); encrypted values decrypted. The
  // page's owners' values by their index, then each one's field: with statistics taken before a
  // bulk load of values, the optimiser started from the kind's fields and read every value of
  // each (two fields of a million tickets' values: 240 ms a page, against 0.5). A page of 1,000
  // owners keeps its IN list (IN_LISTS_AS_LISTS).
  const rows = await select<CustomFieldValue & { sealed: number }>(
    `${IN_LISTS_AS_LISTS}SELECT STRAIGHT_JOIN v.*, f.encrypted AS sealed FROM custom_field_values v FORCE INDEX (custom_field_values_owner_id) JOIN custom_fields f ON f.id = v.field_id
     WHERE f.kind = ? AND v.owner_id IN (?) ORDER BY v.owner_id, v.field_id`,
    [kind, ids],
  );
  const values = rows.map(({ sealed, ...v }) => (sealed ? { ...v, value: openValue(v.field_id, v.value) } : v) as CustomFieldValue);
  return groupBy(values, (v) => v.owner_id);
}

/** A value as the API returns it: `{id, field_id, user_id|organisation_id, value, created_at, updated_at}`. */
export function serializeCustomFieldValue(v: CustomFieldValue, ownerKey: 'user_id' | 'organisation_id' | 'ticket_id'): Record<string, any> {
  return { id: v.id, field_id: v.field_id, [ownerKey]: v.owner_id, value: v.value, created_at: v.created_at, updated_at: v.updated_at };
}

/** Removes every custom field value of a user, organisation or tickets (when they are deleted). */
export async function deleteCustomFieldValues(kind: ValueKind, ownerIds: number | number[], transaction: Transaction): Promise<void> {
  const owners = [ownerIds].flat();
  const fieldIds = owners.length ? await fieldIdsOfKind(kind, transaction) : [];
  if (fieldIds.length) await CustomFieldValue.destroy({ where: { owner_id: { [Op.in]: owners }, field_id: { [Op.in]: fieldIds } }, transaction });
}

/**
 * After options of a field were deleted: values that named them lose those ids (a value left with
 * no option is deleted).
 */
export async function pruneDeletedOptions(field: CustomField, deletedOptionIds: number[], transaction: Transaction): Promise<void> {
  if (!deletedOptionIds.length) return;
  const gone = new Set(deletedOptionIds.map(String));
  // Encrypted values cannot be matched in SQL: every value of the field is read and decrypted.
  // Others: the owners whose values name one of them (migration 071's index), read locking as
  // the values are.
  const holders = optionHolders(field.id, deletedOptionIds);
  const ownerIds = field.encrypted ? undefined
    : [...new Set((await select<{ owner_id: number }>(`${sqlText(holders)} FOR UPDATE`, holders.replacements, { transaction })).map((r) => r.owner_id))];
  await rewriteValuesOfField(field.id, transaction, (stored) => {
    const ids = ((field.encrypted ? openValue(field.id, stored) : stored) ?? '').split(',').filter((id) => id !== '');
    const kept = ids.filter((id) => !gone.has(id)).join(',');
    if (kept === ids.join(',')) return undefined; // none of its options went (or it does not decrypt)
    if (kept === '') return null;
    return field.encrypted ? sealValue(field.id, kept) : kept;
  }, ownerIds);
}

/** Values converted by a change of their field are read and rewritten this many at a time. */
const CHUNK = 500;

/** The values of a field (of `ownerIds` only, when given), CHUNK at a time, read FOR UPDATE. */
async function* valuesOfField(fieldId: number, transaction: Transaction, ownerIds?: number[]): AsyncGenerator<CustomFieldValue[]> {
  const lock = transaction.LOCK.UPDATE;
  if (ownerIds) {
    for (let i = 0; i < ownerIds.length; i += CHUNK) {
      yield await CustomFieldValue.findAll({ where: { field_id: fieldId, owner_id: { [Op.in]: ownerIds.slice(i, i + CHUNK) } }, transaction, lock });
    }
    return;
  }
  for (let afterId = 0; ;) {
    const rows = await CustomFieldValue.findAll({ where: { field_id: fieldId, id: { [Op.gt]: afterId } }, order: [['id', 'ASC']], limit: CHUNK, transaction, lock });
    if (!rows.length) return;
    yield rows;
    afterId = rows[rows.length - 1].id;
  }
}

/**
 * The stored values of a field (of `ownerIds` only, when given), a chunk at a time, for a change
 * of the field that rewrites them: read FOR UPDATE, so the values written before the change
 * locked the field are among them (the change's snapshot may be older), and none is written
 * meanwhile. `rewrite` returns the new stored form of each value to change (null: delete it).
 */
async function rewriteValuesOfField(fieldId: number, transaction: Transaction, rewrite: (stored: string | null) => string | null | undefined, ownerIds?: number[]): Promise<void> {
  for await (const rows of valuesOfField(fieldId, transaction, ownerIds)) {
    const deleted: number[] = [];
    const changed: Array<{ id: number; field_id: number; owner_id: number; value: string }> = [];
    for (const v of rows) {
      const value = rewrite(v.value);
      if (value === null) deleted.push(v.id);
      else if (value !== undefined && value !== v.value) changed.push({ id: v.id, field_id: v.field_id, owner_id: v.owner_id, value });
    }
    if (changed.length) await CustomFieldValue.bulkCreate(changed, { transaction, updateOnDuplicate: ['value', 'updated_at'] });
    if (deleted.length) await CustomFieldValue.destroy({ where: { id: { [Op.in]: deleted } }, transaction });
  }
}

/**
 * A field's `encrypted` flag changed: its stored values are encrypted or decrypted in place, in the
 * transaction of the change (one that no longer decrypts is deleted: it was shown as empty).
 */
export async function resealValuesOfField(field: CustomField, transaction: Transaction): Promise<void> {
  await rewriteValuesOfField(field.id, transaction, (stored) => (field.encrypted ? sealValue(field.id, stored ?? '') : openValue(field.id, stored)));
}

/**
 * A field's `type` changed (its options are already the new ones): a stored value that a write
 * to the field would take now is kept, in the stored form that write would give it (`1700000000`
 * fits a Date field, an option id a list of them); any other is deleted, as it could be neither
 * shown nor searched as the type says. A value that does not decrypt is left as it is (nothing
 * tells whether it fits; it is shown as empty).
 */
export async function fitValuesToType(field: CustomField, transaction: Transaction): Promise<void> {
  const options = await CustomFieldOption.findAll({ attributes: ['id'], where: { field_id: field.id }, transaction, lock: transaction.LOCK.SHARE });
  const optionIds = new Set(options.map((o) => o.id));
  await rewriteValuesOfField(field.id, transaction, (stored) => {
    const plain = field.encrypted ? openValue(field.id, stored) : stored;
    if (plain === null) return undefined;
    let fit: string | null;
    try {
      fit = normalise(field, plain, optionIds);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return null;
    }
    if (fit === null) return null;
    if (fit === plain) return undefined;
    return field.encrypted ? sealValue(field.id, fit) : fit;
  });
}

/**
 * The `customfield` input of a write: an object keyed by field id (`customfield[<id>]=<value>`),
 * null for none. An empty list is an empty object: JSON from PHP (`json_encode` of an empty
 * array) sends `[]` for `{}`. Every key must be a field id: `The selected customfield.<key> is invalid.`
 */
export const customFieldValuesSchema = () => Joi.any().custom((value) => {
  if (value === null) return value;
  if (Array.isArray(value) && !value.length) return {};
  if (!isPlainObject(value)) throw new Error('The customfield must be an array keyed by custom field id.');
  for (const key of Object.keys(value)) if (!/^\d{1,10}$/.test(key)) throw new Error(`The selected customfield.${key} is invalid.`);
  return value;
}).meta({ 'x-schema': CUSTOMFIELD_VALUES_SCHEMA });

/**
 * What the OpenAPI document shows for these two (src/openapi/document.ts reads `x-schema`: joi
 * cannot describe a custom rule): a map keyed by custom field id, sent as `customfield[<id>]=…`.
 */
const FIELD_ID_KEYS = { propertyNames: { pattern: '^[0-9]{1,10}$' } };
const CUSTOMFIELD_VALUES_SCHEMA = {
  description: 'Values keyed by custom field id (`customfield[3]=x`; an option field takes option ids, `customfield[4][]=7`). JSON `[]`: none.',
  anyOf: [
    { type: 'object', ...FIELD_ID_KEYS, additionalProperties: { anyOf: [{ type: ['string', 'integer', 'null'] }, { type: 'array', items: { type: ['string', 'integer'] } }] } },
    { type: 'array', maxItems: 0 }, { type: 'null' },
  ],
};
const CUSTOMFIELD_FILTER_SCHEMA = {
  description: 'Records with a value of each named field that matches (`customfield[3]=x`): text contains, option fields the option id, others equal.',
  type: 'object', ...FIELD_ID_KEYS, additionalProperties: { type: ['string', 'integer', 'boolean', 'null'] },
};

/** The entries of a list's `customfield` parameter that narrow it: [field id, value trimmed], empty values left out. */
const namedValues = (value: Record<string, string | number | boolean | null>) => Object.entries(value)
  .map(([key, v]) => [Number(key), v === null || v === undefined ? '' : String(v).trim()] as const)
  .filter(([, v]) => v !== '');

/**
 * The one option a list's `customfield` parameter names, when it names one field only and that is
 * an option field (the filter has checked that the option is one of the field's): its field and
 * option ids, or null.
 */
export async function oneOptionNamed(kind: ValueKind, value: Record<string, string | number | boolean | null>): Promise<{ fieldId: number; optionId: number } | null> {
  const entries = namedValues(value);
  if (entries.length !== 1) return null;
  const [[fieldId, v]] = entries;
  const optionId = parseInteger(v);
  return (await plainOptionFields(kind)).has(fieldId) && optionId !== null ? { fieldId, optionId } : null;
}

/** The ids of the kind's option fields that are not encrypted (their values' ids are in migration 071's index), as the process keeps them. */
export async function plainOptionFields(kind: ValueKind): Promise<Set<number>> {
  return new Set((await fieldsOfKind(kind)).filter((f) => !f.encrypted && OPTION_TYPES.includes(f.type)).map((f) => f.id));
}

/**
 * The lists' `customfield` parameter (`customfield[<field id>]=<value>`): records with a value of
 * each named field that matches. Text and Textarea: contains; option types: the option id is among
 * the stored ids; other types: equals. An empty value is ignored. An id that is not a field of the
 * kind: `The selected customfield.<id> is invalid.`
 */
export function customFieldFilter(kind: ValueKind): Filter {
  return {
    schema: Joi.any().custom((value) => {
      if (!isPlainObject(value)) throw new Error('The customfield must be an array keyed by custom field id.');
      for (const [key, v] of Object.entries(value)) {
        if (!/^\d{1,10}$/.test(key)) throw new Error(`The selected customfield.${key} is invalid.`);
        if (v !== null && typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') throw new Error(`The customfield.${key} must be a string.`);
        if (typeof v === 'string' && CONTROL_CHARACTERS.test(v)) throw new Error(`The customfield.${key} must not contain control characters.`);
      }
      return value;
    }).meta({ 'x-schema': CUSTOMFIELD_FILTER_SCHEMA }),
    async where(value: Record<string, string | number | boolean | null>): Promise<Condition> {
      const entries = namedValues(value);
      if (!entries.length) return {};
      // The fields of the kind and their options as the process keeps them (no statement while none changes).
      const fields = new Map((await fieldsOfKind(kind)).map((f) => [f.id, f]));
      // One subquery per named field, all in the list's own query: every named field must match.
      return allOf(await Promise.all(entries.map(async ([id, v]) => {
        const field = fields.get(id);
        if (!field) throw invalid(`customfield.${id}`);
        if (field.encrypted) throw new ValidationError(`The customfield.${id} is encrypted: its values cannot be searched.`);
        const owners = (match: BoundCondition) => sqlCondition`id IN (SELECT owner_id FROM custom_field_values WHERE field_id = ${id} AND ${match})`;
        // Contains: the records holding the part's grams in this field (migration 070), then its LIKE.
        if (field.type === TYPE.TEXT || field.type === TYPE.TEXTAREA) return narrowedByGrams(customFieldGrams(id), v, owners(sqlCondition`value LIKE ${likeContains(v)}`));
        if (OPTION_TYPES.includes(field.type)) {
          const option = parseInteger(v);
          if (option === null || !optionIdsOf(field).has(option)) throw new ValidationError(`The customfield.${id} must be the id of one of the field's options.`);
          return holdingOption(id, option);
        }
        if (field.type === TYPE.BOOLEAN || field.type === TYPE.CHECKBOX) {
          const f = parseFlag(v);
          if (f === null) throw new ValidationError(`The customfield.${id} field must be true or false.`);
          return owners(sqlCondition`value = ${f}`);
        }
        if (field.type === TYPE.DATE) {
          const n = parseInteger(v);
          if (n === null) throw new ValidationError(`The customfield.${id} must be a date as a UNIX timestamp (an integer).`);
          return owners(sqlCondition`value = ${String(n)}`);
        }
        return owners(sqlCondition`value = ${v}`);
      })));
    },
  };
}
