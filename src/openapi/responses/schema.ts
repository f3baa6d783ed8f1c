import type { ModelStatic, Model } from 'sequelize';
import type { TranslationSpec } from '../../translations';

/**
 * Small builders of the JSON Schemas of response records. Column types and nullability come from
 * the models (the same attributes the presenters pick), never from a list written here.
 */

export type Json = Record<string, any>;

export const INT: Json = { type: 'integer' };
export const STR: Json = { type: 'string' };
export const BOOL: Json = { type: 'boolean' };
/** A 0/1 value computed by a presenter (columns say so through their model). */
export const FLAG: Json = { type: 'integer', enum: [0, 1] };
/** A value stored as JSON that the presenter passes on as it is. */
export const ANY: Json = {};

export function nullable(s: Json): Json {
  if (s.$ref || s.anyOf || s.oneOf || !s.type) return { anyOf: [s, { type: 'null' }] };
  const types: string[] = Array.isArray(s.type) ? s.type : [s.type];
  return types.includes('null') ? s : { ...s, type: [...types, 'null'] };
}

export const array = (items: Json): Json => ({ type: 'array', items });

/**
 * An object with exactly these properties. Every property is required (presenters write every
 * key, `null` when unset) except those in `optional`, which only some responses carry.
 */
export function object(properties: Json, optional: readonly string[] = []): Json {
  const required = Object.keys(properties).filter((k) => !optional.includes(k));
  return { type: 'object', ...(required.length ? { required } : {}), properties };
}

/** Adds properties to an object schema (after its own, in presentation order). */
export function extend(base: Json, properties: Json, optional: readonly string[] = []): Json {
  return object({ ...base.properties, ...properties }, [...Object.keys(base.properties).filter((k) => !(base.required ?? []).includes(k)), ...optional]);
}

/** The object without some of its properties (a view that leaves fields out). */
export function omit(base: Json, names: Iterable<string>): Json {
  const drop = new Set(names);
  const properties = Object.fromEntries(Object.entries(base.properties as Json).filter(([k]) => !drop.has(k)));
  return object(properties, Object.keys(properties).filter((k) => !(base.required ?? []).includes(k)));
}

const TIMESTAMP = /(_at|_time|^expiry)$/;

/** The JSON Schema of a model column, from its attribute definition (type, allowNull, primary key). */
export function column(model: ModelStatic<Model>, name: string): Json {
  const attr = model.getAttributes()[name] as { type?: { key?: string }; allowNull?: boolean; primaryKey?: boolean; flag?: boolean } | undefined;
  if (!attr) throw new Error(`OpenAPI: ${model.name} has no column ${name}`);
  const key = attr.type?.key ?? '';
  // A flag column (db/entity.ts flag()): 1 or 0.
  if (attr.flag) return { ...FLAG };
  const base: Json = /INT/.test(key) ? { ...INT } : /FLOAT|DOUBLE|REAL/.test(key) ? { type: 'number' } : /BOOLEAN/.test(key) ? { ...BOOL } : { ...STR };
  if (base.type === 'integer' && TIMESTAMP.test(name)) base.description = 'UNIX seconds.';
  return attr.allowNull === false || attr.primaryKey ? base : nullable(base);
}

/** The properties of the named columns, in that order (what `pick(record, FIELDS)` presents). */
export function columns(model: ModelStatic<Model>, names: readonly string[]): Json {
  return Object.fromEntries(names.map((n) => [n, column(model, n)]));
}

/** An object of the named columns of a model. */
export const picked = (model: ModelStatic<Model>, names: readonly string[]): Json => object(columns(model, names));

/**
 * The `translations` array `translate()` adds when no translation of `lang` replaced the defaults:
 * per locale, the record's id under the spec's key, each translated field (null when not
 * translated in that locale) and the locale.
 */
export function translationsOf(spec: Pick<TranslationSpec, 'key' | 'fields'>): Json {
  return array(object({
    [spec.key]: INT,
    ...Object.fromEntries(spec.fields.map((f) => [f, nullable(STR)])),
    locale: STR,
  }));
}

/** A record presented through `translate()`: `translations` is there unless `lang` found one. */
export const translated = (base: Json, spec: Pick<TranslationSpec, 'key' | 'fields'>): Json =>
  extend(base, { translations: translationsOf(spec) }, ['translations']);

/** `{...record, pivot: {...}}`: a linked record with the ids of its link. */
export const withPivot = (base: Json, keys: readonly string[], extra: Json = {}): Json =>
  extend(base, { pivot: object({ ...Object.fromEntries(keys.map((k) => [k, INT])), ...extra }) });
