import { picker } from './objectLiteral';

/**
 * The named attributes of a record, in that order (unset ones as null). A model instance and a
 * plain row (`raw: true`) read the same: Sequelize defines a property per attribute. The object is
 * one literal per list of names (lib/objectLiteral.ts): a compact shape, however many names.
 */
export function pick(record: object, keys: readonly string[]): Record<string, any> {
  return picker(keys)(record);
}

/** The given input fields that were sent (undefined ones left out): the columns an update sets. */
export function sent(input: Record<string, any>, keys: readonly string[]): Record<string, any> {
  const out: Record<string, any> = {};
  for (const k of keys) if (input[k] !== undefined) out[k] = input[k];
  return out;
}
