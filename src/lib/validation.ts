import BaseJoi from 'joi';
import type { ObjectSchema, StringSchema, ValidationErrorItem } from 'joi';
import { ValidationError, fieldLabel } from '../errors';
import { domainToASCII } from 'node:url';
import { LANGUAGES } from './languages';

/** `{0: a, 1: b}` (what `x[]=a&x[]=b` and `x[0]=a` parse to) as `[a, b]`, ordered by index. */
function indexedToArray(value: unknown): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  if (!keys.every((k) => /^\d{1,6}$/.test(k))) return value;
  return keys.map(Number).sort((a, b) => a - b).map((k) => (value as Record<string, unknown>)[String(k)]);
}

/** A boolean as the API takes it (1/0, "1"/"0", true/false, "true"/"false") as 1 or 0; null if not one. */
export function toFlag(value: unknown): 0 | 1 | null {
  if (value === true || value === 1 || value === '1' || value === 'true') return 1;
  if (value === false || value === 0 || value === '0' || value === 'false') return 0;
  return null;
}

/** The characters of a string as MariaDB's utf8mb4 columns count them (code points): an emoji is one, not two UTF-16 units. */
export function characters(value: string): number {
  let pairs = 0;
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < value.length) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        pairs++;
        i++;
      }
    }
  }
  return value.length - pairs;
}

/**
 * joi's string `min`, `max` and `length` count `value.length`, UTF-16 units, so a name of 128
 * emoji was "greater than 255 characters" although its varchar(255) column holds 255. joi has no
 * option for it and refuses an extension that redefines a rule, so its one length check (all three
 * rules run it) is replaced here, counting characters; a byte `encoding` is still counted in bytes.
 */
const lengthRule = (BaseJoi.string() as any)._definition.rules.length;
lengthRule.validate = (value: string, helpers: BaseJoi.CustomHelpers, { limit, encoding }: { limit: number; encoding?: BufferEncoding },
  { name, operator, args }: { name: string; operator: '<=' | '>=' | '='; args: { limit: unknown } }) => {
  const length = encoding ? Buffer.byteLength(value, encoding) : characters(value);
  const ok = operator === '<=' ? length <= limit : operator === '>=' ? length >= limit : length === limit;
  return ok ? value : helpers.error(`string.${name}`, { limit: args.limit, value, encoding });
};

/**
 * An integer as the API reads one from text (a query string, a form field, a JSON string): plain
 * decimal digits, with a minus sign for a negative one (`-1`: unassigned).
 */
export const DECIMAL_INTEGER = /^-?\d+$/;
/** What joi's number() converts from a string: besides plain digits, `1e3`, `1.0`, `+5`, ` 5`. */
const NUMERIC_STRING = /^\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?\s*$/i;

/**
 * joi, plus:
 * - integers (`number().integer()`) sent as text must be plain decimal integers (DECIMAL_INTEGER):
 *   joi would read `1e3` as 1000, `1.0` as 1 and ` 5` as 5; they are refused like any other
 *   non-integer (`The <field> must be an integer.`). A JSON number is taken as it is (1000, 1e3);
 * - arrays also accept the form encoding's index-keyed objects (see http/body.ts: brackets parse
 *   to keyed objects so that `permission[7]=1` keeps its id);
 * - `flag`: a boolean sent as 1/0, "1"/"0", true/false or "true"/"false", always returned as 1 or 0;
 * - `ids`: the `mixed` parameter type, one id or a comma-delimited string of ids (or an array).
 */
export const Joi = BaseJoi.extend(
  (joi) => ({
    type: 'number',
    base: joi.number(),
    // Before joi's own conversion (a prepare error ends validation), and only for strings joi would
    // convert: an allowed `''` or a non-number (`0x10`, `abc`) takes joi's usual path. One of a
    // fixed set of values (`valid(0, 1, 2)`) is refused as joi refuses any other value there.
    prepare(value, helpers) {
      const { schema } = helpers;
      if (typeof value !== 'string' || DECIMAL_INTEGER.test(value) || !NUMERIC_STRING.test(value) || !schema.$_getRule('integer')) return undefined;
      if (schema._flags.only) return { value, errors: helpers.error('any.only', { valids: schema.describe().allow }) };
      return { value, errors: helpers.error('number.integer') };
    },
  }),
  (joi) => ({
    type: 'array',
    base: joi.array(),
    coerce: { from: 'object', method: (value) => ({ value: indexedToArray(value) }) },
  }),
  (joi) => ({
    type: 'flag',
    base: joi.any(),
    messages: { 'flag.base': '{{#label}} must be true or false' },
    coerce: {
      method: (value) => ({ value: toFlag(value) ?? value }),
    },
    validate(value, helpers) {
      if (value !== 0 && value !== 1) return { value, errors: helpers.error('flag.base') };
      return { value };
    },
  }),
  (joi) => ({
    type: 'ids',
    base: joi.any(),
    messages: { 'ids.base': '{{#label}} must be an id or a comma-separated list of ids' },
    coerce: {
      method(raw) {
        const value = indexedToArray(raw);
        const parts = Array.isArray(value) ? value : typeof value === 'number' ? [value] : typeof value === 'string' ? value.split(',') : null;
        if (!parts) return { value };
        // Spaces around the commas are the list's (`1, 2, 3`); each id is a plain decimal integer.
        const ids = parts.map((p) => (typeof p === 'number' ? p : DECIMAL_INTEGER.test(String(p).trim()) ? Number(p) : NaN));
        return { value: ids };
      },
    },
    validate(value, helpers) {
      const ok = Array.isArray(value) && value.length > 0 && value.length <= 1000
        && value.every((v) => Number.isSafeInteger(v) && v >= -1);
      return ok ? { value: [...new Set(value as number[])] } : { value, errors: helpers.error('ids.base') };
    },
  }),
) as typeof BaseJoi & { flag(): BaseJoi.AnySchema; ids(): BaseJoi.AnySchema };

export const MAX_ID = 4294967295;

/**
 * Control characters no one-line value holds (names, subjects, emails): the C0 controls but TAB
 * (NUL, CR, LF, ESC...) and DEL. Multi-line texts (notes, descriptions) keep line breaks.
 */
export const CONTROL_CHARACTERS = /[\u0000-\u0008\u000A-\u001F\u007F]/;
const CONTROL_RULE = 'control characters';

/** A one-line string: refuses control characters (`The <field> must not contain control characters.`). */
export const oneLine = <S extends StringSchema>(schema: S): S => schema.pattern(CONTROL_CHARACTERS, { name: CONTROL_RULE, invert: true });

/**
 * Characters that show nothing (zero-width space, joiners, word joiner, BOM, soft hyphen, Mongolian
 * vowel separator) or reorder what is shown (bidi controls): an email holding one looks like
 * another address and is refused.
 */
export const INVISIBLE_CHARACTERS = /[\u00AD\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/;

/**
 * One spelling per address: trimmed, NFC, lower case, and an internationalised domain in its ASCII
 * (punycode) form, so `user@bücher.example` and `user@xn--bcher-kva.example` are one address.
 */
export function canonicalEmail(value: string): string {
  const v = value.trim().normalize('NFC').toLowerCase();
  const at = v.lastIndexOf('@');
  if (at < 0) return v;
  const ascii = domainToASCII(v.slice(at + 1));
  return ascii ? `${v.slice(0, at)}@${ascii}` : v;
}

/** An internationalised domain in its ASCII (punycode) form, as emails store theirs. */
export const canonicalDomain = (v: string): string => domainToASCII(v.trim().normalize('NFC').toLowerCase()) || v;

/**
 * Strict base64: the standard or the URL-safe alphabet, line breaks allowed (MIME wraps lines),
 * padding optional but right when present, and no stray bits: the text must be exactly what the
 * bytes encode to. Anything else is refused rather than decoded into different bytes.
 */
export function decodeBase64(text: string): Buffer | null {
  const compact = text.replace(/[\r\n\t ]+/g, '').replace(/-/g, '+').replace(/_/g, '/');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) return null;
  const unpadded = compact.replace(/=+$/, '');
  if (compact.length !== unpadded.length && compact.length % 4 !== 0) return null;
  if (unpadded.length % 4 === 1) return null;
  const bytes = Buffer.from(unpadded, 'base64');
  return bytes.toString('base64').replace(/=+$/, '') === unpadded ? bytes : null;
}

/**
 * A file name's last path segment, trimmed (`../../etc/passwd.txt` → `passwd.txt`, `C:\\a.pdf` →
 * `a.pdf`); null when nothing is left or only dots (`..`, `dir/`): no name. Checked again on the
 * name as stored (bidi controls stripped), which may be only dots when the name sent was not.
 */
export function fileBaseName(name: string): string | null {
  const base = name.split(/[\\/]/).pop()!.trim();
  return !base || /^\.+$/.test(base) ? null : base;
}

/**
 * A size limit as a refusal states it: in kilobytes when it is a whole number of them (`10240
 * kilobytes`, as Laravel words its `max` of a file), else in bytes (`1000 bytes`): never rounded
 * to a limit that is not the one applied.
 */
export const sizeLimit = (bytes: number): string => (bytes % 1024 === 0 ? `${bytes / 1024} kilobytes` : `${bytes} bytes`);

/** Shared field shapes. */
export const field = {
  id: () => Joi.number().integer().min(1).max(MAX_ID),
  timestamp: () => Joi.number().integer().min(0).max(MAX_ID),
  flag: () => Joi.flag(),
  /** A required-capable one-line string: trimmed, empty counts as missing. */
  string: (max = 255) => oneLine(Joi.string().trim().max(max)),
  /**
   * A file's name as sent with its contents: one line, and its last path segment only
   * (`../../etc/passwd.txt` → `passwd.txt`, `C:\\Users\\a.pdf` → `a.pdf`), so that a client that
   * saves a file under the name it lists writes nowhere else. Nothing left is a missing name.
   */
  filename: () => oneLine(Joi.string().trim().max(255)).custom((v: string, helpers) => {
    const base = fileBaseName(v);
    if (!base) throw new Error(`The ${fieldLabel(helpers.state.path ?? ['filename'])} field is required.`);
    return base;
  }),
  /** A file's contents in strict base64 (decodeBase64), decoded; empty is missing, more than `maxBytes` refused. */
  base64File: (maxBytes = Infinity) => Joi.string().allow('').custom((value: string, helpers) => {
    const name = fieldLabel(helpers.state.path ?? ['contents']);
    const bytes = decodeBase64(value);
    if (!bytes) throw new Error(`The ${name} must be a valid base64 string.`);
    if (!bytes.length) throw new Error(`The ${name} field is required.`);
    if (bytes.length > maxBytes) throw new Error(`The ${name} may not be greater than ${sizeLimit(maxBytes)}.`);
    return bytes;
  }),
  /** An optional one-line string where an empty value clears the field (null). */
  nullable: (max = 255) => oneLine(Joi.string().trim().max(max)).allow('', null),
  /** An optional multi-line string (descriptions, reasons): trimmed, line breaks kept, empty clears it. */
  multiline: (max = 65535) => Joi.string().trim().max(max).allow('', null),
  text: () => Joi.string().max(1_000_000).allow('', null),
  /** Lower-cased (and in Unicode's composed form, so that one address has one spelling): emails compare exactly. */
  email: () => oneLine(Joi.string().trim().normalize('NFC').lowercase().max(255))
    .custom((v: string, helpers) => {
      if (INVISIBLE_CHARACTERS.test(v)) throw new Error(`The ${fieldLabel(helpers.state.path ?? ['email'])} must not contain invisible characters.`);
      return v;
    })
    .email({ tlds: false })
    .custom((v: string) => canonicalEmail(v)),
  idArray: () => Joi.array().items(Joi.number().integer().min(1).max(MAX_ID)).single().max(1000),
  /** A display position, 0 or more; a record created without one goes after the last (db/order.ts nextOrder). */
  order: () => Joi.number().integer().min(0).max(2147483647),
};

const EMAIL = field.email();
/** Whether a value is an address the API takes as an email (field.email). */
export const isEmailAddress = (value: string): boolean => EMAIL.validate(value).error === undefined;

function message(d: ValidationErrorItem): string {
  const l = fieldLabel(d.path.length ? d.path : String(d.context?.key ?? 'value'));
  const limit = d.context?.limit;
  switch (d.type) {
    case 'any.required':
    case 'string.empty':
    case 'array.includesRequiredUnknowns':
      return `The ${l} field is required.`;
    case 'any.only':
    case 'any.invalid':
    case 'ids.base':
      return `The selected ${l} is invalid.`;
    case 'string.base':
      return `The ${l} must be a string.`;
    case 'string.max':
      return `The ${l} may not be greater than ${limit} characters.`;
    case 'string.min':
      return `The ${l} must be at least ${limit} characters.`;
    case 'string.ip':
    case 'string.ipVersion':
      return `The ${l} must be a valid IP address.`;
    case 'string.email':
      return `The ${l} must be a valid email address.`;
    case 'string.hostname':
      return `The ${l} must be a valid host name or IP address.`;
    case 'string.uri':
    case 'string.uriCustomScheme':
      return `The ${l} must be a valid URL.`;
    case 'string.hex':
      return `The ${l} must be a valid hex colour.`;
    case 'number.base':
    case 'number.integer':
    case 'number.unsafe':
      return `The ${l} must be an integer.`;
    case 'number.min':
      return `The ${l} must be at least ${limit}.`;
    case 'number.max':
      return `The ${l} may not be greater than ${limit}.`;
    case 'number.greater':
      return `The ${l} must be greater than ${limit}.`;
    case 'flag.base':
    case 'boolean.base':
      return `The ${l} field must be true or false.`;
    case 'array.base':
    case 'object.base':
      return `The ${l} must be an array.`;
    case 'array.min':
      return `The ${l} must have at least ${limit} ${limit === 1 ? 'item' : 'items'}.`;
    case 'array.max':
      return `The ${l} may not have more than ${limit} items.`;
    case 'array.unique':
      return `The ${l} field has a duplicate value.`;
    case 'string.pattern.invert.name':
      if (d.context?.name === CONTROL_RULE) return `The ${l} must not contain control characters.`;
      return `The ${l} format is invalid.`;
    case 'any.custom':
      return d.context?.error?.message ?? `The ${l} is invalid.`;
    default:
      if (d.type.endsWith('.pattern.name') || d.type === 'string.pattern.base') return `The ${l} format is invalid.`;
      return `The ${l} is invalid.`;
  }
}

const isBlank = (v: unknown) => typeof v === 'string' && v.trim() === '';

function requiredAt(schema: ObjectSchema, path: (string | number)[]): boolean {
  try {
    return path.length > 0 && (schema.extract(path.map(String)).describe().flags as { presence?: string } | undefined)?.presence === 'required';
  } catch {
    return false; // a path inside an array or a pattern key: not a field of its own
  }
}

/** Validates and converts input; the first problem becomes a 422 in the spec's wording. */
export function validate<T = Record<string, any>>(schema: ObjectSchema, input: unknown): T {
  const { value, error } = schema.validate(input ?? {}, { abortEarly: true, stripUnknown: true, convert: true });
  if (error) {
    const d = error.details[0];
    // As Laravel reads a form: a required field sent empty (`department=`) is missing, whatever its type.
    if (d.type !== 'any.required' && isBlank(d.context?.value) && requiredAt(schema, d.path)) {
      throw new ValidationError(message({ ...d, type: 'any.required' }));
    }
    throw new ValidationError(message(d));
  }
  // An empty value of an optional text field clears it.
  for (const [k, v] of Object.entries(value)) if (v === '') value[k] = null;
  return value as T;
}

/** A locale code: ISO-639 language, optionally with a region (`en`, `pt_BR`, `zh-Hant`). */
export const LOCALE = /^[a-z]{2,3}(?:[_-][A-Za-z]{2,4})?$/;

/**
 * A locale a translation (or an attachment) is stored in: LOCALE's form with an ISO 639-1 language
 * (`xx` and `zz` have the form but name no language). `lang` is read by LOCALE's form alone: a
 * locale without translations shows the defaults.
 */
export function isLocale(value: string): boolean {
  const language = /^([a-z]{2})(?:[_-][A-Za-z]{2,4})?$/.exec(value)?.[1];
  return language !== undefined && LANGUAGES.has(language);
}
