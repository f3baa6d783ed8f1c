import { Utils, type WhereOptions } from 'sequelize';
import type { Model, ModelCtor } from 'sequelize-typescript';
import { sequelize } from './sequelize';

/** Renderings kept, the most recent; and the longest where (as its key) worth keeping. */
const MAX_ENTRIES = 1000;
const MAX_KEY_LENGTH = 4096;
const rendered = new Map<string, string>();

/**
 * What determines `value`'s rendering, as text: plain values, arrays, plain objects (string keys,
 * then operators: Sequelize renders them in that order) and literals. Undefined for anything else
 * (a Date, a function call, a column): its rendering is not a function of what is seen here, and
 * is then not kept.
 */
function keyOf(value: unknown): string | undefined {
  switch (typeof value) {
    case 'number': return `#${value};`;
    case 'bigint': return `#${value}n;`;
    case 'string': return JSON.stringify(value);
    case 'boolean': return value ? 'T' : 'F';
    case 'undefined': return 'U';
    case 'object': break;
    default: return undefined;
  }
  if (value === null) return 'N';
  let key: string;
  if (Array.isArray(value)) {
    key = '[';
    for (const item of value) {
      const k = keyOf(item);
      if (k === undefined) return undefined;
      key += `${k},`;
    }
    return `${key}]`;
  }
  if (value instanceof Utils.Literal) {
    const text = (value as unknown as { val: unknown }).val;
    return typeof text === 'string' ? `L${JSON.stringify(text)}` : undefined;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return undefined;
  key = '{';
  for (const name of Object.keys(value)) {
    const k = keyOf((value as Record<string, unknown>)[name]);
    if (k === undefined) return undefined;
    key += `${JSON.stringify(name)}:${k},`;
  }
  for (const symbol of Object.getOwnPropertySymbols(value)) {
    // Sequelize's operators are registered symbols (Op.and is Symbol.for('and')).
    const name = Symbol.keyFor(symbol);
    const k = name === undefined ? undefined : keyOf((value as Record<symbol, unknown>)[symbol]);
    if (k === undefined) return undefined;
    key += `@${name}:${k},`;
  }
  return `${key}}`;
}

/**
 * Sequelize's rendering of `where` for `model`'s rows under `prefix` (what `findAll` puts after
 * WHERE; '' for no condition), kept by the where's content: a list request builds its filters'
 * where anew, for conditions that repeat from request to request, and Sequelize's query generator
 * took 42-79 µs to render one inside a request (a ticket list of one to four filters, 10k
 * tickets, a quiet machine), a tenth of a cheap list's CPU; its key takes 12-19 µs there. Only a
 * where whose rendering is a function of its content (keyOf) is kept, the last MAX_ENTRIES of
 * them; any other is rendered each time.
 */
export function whereSql(model: ModelCtor<Model>, where: WhereOptions, prefix: string): string {
  const content = keyOf(where);
  const key = content === undefined ? undefined : `${model.name}|${prefix}|${content}`;
  if (key !== undefined) {
    const known = rendered.get(key);
    if (known !== undefined) {
      // The most recent last: the first of the map is the one to drop.
      rendered.delete(key);
      rendered.set(key, known);
      return known;
    }
  }
  const qg = sequelize().getQueryInterface().queryGenerator as unknown as { whereItemsQuery(w: WhereOptions, o: object): string };
  const sql = qg.whereItemsQuery(where, { model, prefix });
  if (key !== undefined && key.length <= MAX_KEY_LENGTH) {
    rendered.set(key, sql);
    if (rendered.size > MAX_ENTRIES) rendered.delete(rendered.keys().next().value!);
  }
  return sql;
}
