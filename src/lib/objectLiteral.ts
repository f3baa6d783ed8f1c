/**
 * Functions that build an object as one object literal (`{"name": ..., ...}`) for a list of
 * names known only at run time (a result's columns, a presenter's fields). An object built by
 * adding its properties one at a time under computed names takes stores V8 cannot specialise
 * (megamorphic), and past about 16 properties becomes a hash table instead of a compact shape:
 * slow to build, to read from and to serialise (`JSON.stringify`'s fast path takes compact
 * objects only). A literal has its one shape from the start. The generated source holds the names
 * as JSON string literals only, so no name can escape into code.
 *
 * Null when a name is `__proto__`, which in a literal would set the prototype: the caller keeps
 * its own loop for such a list.
 */
const literalOf = (names: readonly string[], value: (name: string, i: number) => string) =>
  `{ ${names.map((n, i) => `${JSON.stringify(n)}: ${value(JSON.stringify(n), i)}`).join(', ')} }`;

/** The object of `names` from a list of values: `names[i]` is `values[i]`. */
export function objectOfValuesFunction(names: readonly string[]): ((values: unknown[]) => Record<string, unknown>) | null {
  if (names.includes('__proto__')) return null;
  return new Function('v', `return ${literalOf(names, (_, i) => `v[${i}]`)};`) as (values: unknown[]) => Record<string, unknown>;
}

/** The object of `names` read from a record: each its value there, or null where it is undefined. */
export function pickFunction(names: readonly string[]): ((record: object) => Record<string, any>) | null {
  if (names.includes('__proto__')) return null;
  // `?? null`: null stays null, undefined (unset) becomes null, any other value is kept.
  return new Function('r', `return ${literalOf(names, (n) => `r[${n}] ?? null`)};`) as (record: object) => Record<string, any>;
}
