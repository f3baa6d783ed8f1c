/**
 * A function of one argument (`arg`) that returns an object literal of `names`, each property's
 * value the expression `value(name as a JSON string literal, index)` makes of `arg`. An object
 * built from names known only at run time (a result's columns) otherwise takes its properties one
 * at a time under computed names: stores V8 cannot specialise (megamorphic), and past about 16
 * properties a hash table instead of a compact shape. A literal has its one shape from the start.
 * The generated source holds the names as JSON string literals and the caller's expressions only,
 * so no name can escape into code.
 *
 * Null when a name is `__proto__`, which in a literal would set the prototype: the caller keeps
 * its own loop for such a list.
 */
export function objectLiteralFunction<A>(arg: string, names: readonly string[], value: (name: string, index: number) => string): ((a: A) => Record<string, any>) | null {
  if (names.includes('__proto__')) return null;
  const properties = names.map((n, i) => {
    const name = JSON.stringify(n);
    return `${name}: ${value(name, i)}`;
  });
  return new Function(arg, `return { ${properties.join(', ')} };`) as (a: A) => Record<string, any>;
}
