import type { Model } from 'sequelize';

/** The named attributes of a record (a model instance or a raw row), in that order (unset ones as null). */
export function pick(record: Model | Record<string, any>, keys: readonly string[]): Record<string, any> {
  const read = typeof record.get === 'function' ? (k: string) => (record as Model).get(k) : (k: string) => (record as Record<string, any>)[k];
  const out: Record<string, any> = {};
  for (const k of keys) {
    const v = read(k);
    out[k] = v === undefined ? null : v;
  }
  return out;
}

/** The given input fields that were sent (undefined ones left out): the columns an update sets. */
export function sent(input: Record<string, any>, keys: readonly string[]): Record<string, any> {
  const out: Record<string, any> = {};
  for (const k of keys) if (input[k] !== undefined) out[k] = input[k];
  return out;
}
