/**
 * A function that makes an object of `names` from a list of values (`names[i]` is `values[i]`),
 * as one object literal (`{"name": v[0], ...}`). An object built from names known only at run
 * time (a result's columns) otherwise takes its properties one at a time under computed names:
 * stores V8 cannot specialise (megamorphic), and past about 16 properties a hash table instead of
 * a compact shape. A literal has its one shape from the start. The generated source holds the
 * names as JSON string literals and the values' indexes only, so no name can escape into code.
 *
 * Null when a name is `__proto__`, which in a literal would set the prototype: the caller keeps
 * its own loop for such a list.
 */
export function objectOfValuesFunction(names: readonly string[]): ((values: unknown[]) => Record<string, unknown>) | null {
  if (names.includes('__proto__')) return null;
  const properties = names.map((n, i) => `${JSON.stringify(n)}: v[${i}]`);
  return new Function('v', `return { ${properties.join(', ')} };`) as (values: unknown[]) => Record<string, unknown>;
}
