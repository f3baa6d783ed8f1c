/**
 * Functions that build an object as one object literal (`{"name": ..., ...}`) for a list of
 * names known only at run time (a result's columns, a presenter's fields). An object built by
 * adding its properties one at a time under computed names takes stores V8 cannot specialise
 * (megamorphic), and past about 16 properties becomes a hash table instead of a compact shape:
 * slow to build, to read from and to serialise (`JSON.stringify`'s fast path takes compact
 * objects only). A literal has its one shape from the start. The generated source holds the names
 * as JSON string literals only, so no name can escape into code.
 *
 * One function per list of names, kept (bounded: lists built from requests can vary). A list
 * naming `__proto__`, which in a literal would set the prototype, gets a function that defines
 * each name as an own property instead (no compact shape, but no prototype set from data).
 */
const MAX_LISTS = 2_000;

const literalOf = (names: readonly string[], value: (name: string, i: number) => string) =>
  `{ ${names.map((n, i) => `${JSON.stringify(n)}: ${value(JSON.stringify(n), i)}`).join(', ')} }`;

/** An object of `names`, each an own property, `__proto__` included, with the value `valueOf` gives. */
function ownProperties(names: readonly string[], valueOf: (name: string, i: number) => unknown): Record<string, any> {
  const out: Record<string, any> = {};
  names.forEach((n, i) => Object.defineProperty(out, n, { value: valueOf(n, i), enumerable: true, writable: true, configurable: true }));
  return out;
}

/** `make`'s function for a list of names, made once per list (by its names) and kept. */
function keptPerNames<F>(make: (names: readonly string[]) => F): (names: readonly string[]) => F {
  const kept = new Map<string, F>();
  return (names) => {
    const key = names.join('\0');
    let f = kept.get(key);
    if (!f) {
      f = make(names);
      if (kept.size >= MAX_LISTS) kept.clear();
      kept.set(key, f);
    }
    return f;
  };
}

export type ObjectOfValues = (values: unknown[]) => Record<string, unknown>;
export type Picker = (record: object) => Record<string, any>;

/**
 * The function that makes the object of `names` from a list of values: `names[i]` is `values[i]`.
 * Two equal names are refused, in the words of the driver's own check (a literal would keep the
 * last value silently).
 */
export const objectOfValues: (names: readonly string[]) => ObjectOfValues = keptPerNames((names) => {
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) throw new Error(`Error in results, duplicate field name \`${name}\``);
    seen.add(name);
  }
  if (names.includes('__proto__')) return (values) => ownProperties(names, (_, i) => values[i]);
  return new Function('v', `return ${literalOf(names, (_, i) => `v[${i}]`)};`) as ObjectOfValues;
});

const pickerPerNames = keptPerNames<Picker>((names) => {
  // `?? null`: null stays null, undefined (unset) becomes null, any other value is kept.
  if (names.includes('__proto__')) return (record) => ownProperties(names, (n) => (record as Record<string, unknown>)[n] ?? null);
  return new Function('r', `return ${literalOf(names, (n) => `r[${n}] ?? null`)};`) as Picker;
});

/** Presenters pass constant lists: their picker is found by the list itself, without joining its names. */
const pickerPerList = new WeakMap<readonly string[], Picker>();

/** The function that reads the object of `names` from a record: each its value there, or null where it is undefined. */
export function picker(names: readonly string[]): Picker {
  let found = pickerPerList.get(names);
  if (!found) {
    found = pickerPerNames(names);
    pickerPerList.set(names, found);
  }
  return found;
}
