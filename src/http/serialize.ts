import type { Model } from 'sequelize';

/** The named attributes of a record, in that order (unset ones as null). */
export function pick(record: Model, keys: readonly string[]): Record<string, any> {
  const out: Record<string, any> = {};
  for (const k of keys) {
    const v = record.get(k);
    out[k] = v === undefined ? null : v;
  }
  return out;
}
