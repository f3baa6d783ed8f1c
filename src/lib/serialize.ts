import { pickFunction } from './objectLiteral';

type Pick = (record: object) => Record<string, any>;

/** A picker per list of names: by the list itself (presenters pass constants), else by its names. */
const byList = new WeakMap<readonly string[], Pick>();
const byNames = new Map<string, Pick>();
const MAX_LISTS = 2_000;

function pickerOf(keys: readonly string[]): Pick {
  let picker = byList.get(keys);
  if (picker) return picker;
  const key = keys.join('\0');
  picker = byNames.get(key);
  if (!picker) {
    picker = pickFunction(keys) ?? ((record) => {
      const out: Record<string, any> = {};
      for (const k of keys) Object.defineProperty(out, k, { value: (record as Record<string, unknown>)[k] ?? null, enumerable: true, writable: true, configurable: true });
      return out;
    });
    if (byNames.size >= MAX_LISTS) byNames.clear();
    byNames.set(key, picker);
  }
  byList.set(keys, picker);
  return picker;
}

/**
 * The named attributes of a record, in that order (unset ones as null). A model instance and a
 * plain row (`raw: true`) read the same: Sequelize defines a property per attribute. The object is
 * one literal per list of names (lib/objectLiteral.ts): a compact shape, however many names.
 */
export function pick(record: object, keys: readonly string[]): Record<string, any> {
  return pickerOf(keys)(record);
}

/** The given input fields that were sent (undefined ones left out): the columns an update sets. */
export function sent(input: Record<string, any>, keys: readonly string[]): Record<string, any> {
  const out: Record<string, any> = {};
  for (const k of keys) if (input[k] !== undefined) out[k] = input[k];
  return out;
}
