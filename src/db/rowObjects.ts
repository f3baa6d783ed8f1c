import { objectOfValues } from '../lib/objectLiteral';

/**
 * A result's rows, read from the driver as arrays (`rowsAsArray`), as objects of one hidden class
 * per column list.
 *
 * The driver builds an object row by adding its columns one at a time under computed names, and
 * V8 turns an object built that way into a hash table once it has more than about 16 properties:
 * every ticket row (29 columns) and user row (24) was a dictionary, slow to build and slow to read
 * from, whichever code read it. A function per column list returning one object literal
 * (`{"name": v[0], ...}`: lib/objectLiteral.ts) gives every row the same compact shape: 50 ticket
 * rows read and their columns used, 150 → 75 µs of CPU (docs/performance.md). A column list with
 * two equal names is refused, as the driver refuses it.
 */

/** What the driver tells of a column (its `meta`). */
interface Column { name(): string }

/**
 * `result` as the driver gives it for a statement run with `rowsAsArray`: the rows of a result set
 * (arrays, with the columns in `meta`) become objects; anything else (an UPDATE's OK packet) is
 * returned as it is.
 */
export function rowObjects<T>(result: unknown): T[] {
  const meta = Array.isArray(result) ? (result as { meta?: unknown }).meta : undefined;
  if (!Array.isArray(meta)) return result as T[];
  const make = objectOfValues((meta as Column[]).map((c) => c.name()));
  const rows = result as unknown[][];
  const out: T[] = [];
  for (const values of rows) out.push(make(values) as T);
  return out;
}
