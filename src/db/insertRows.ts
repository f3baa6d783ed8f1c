import { type Model, type ModelStatic, type Transaction } from 'sequelize';
import { now } from './entity';
import { select } from './select';
import { sequelize } from './sequelize';

type Row = Record<string, unknown>;

/**
 * What insertRows needs of a model, worked out once per model (its attributes are fixed once the
 * models are registered): the literal defaults, the stamps, the column of each attribute, the
 * quoted table, and the INSERT's head per list of columns (a table is written with a few lists).
 */
interface Shape {
  attributes: Record<string, { field?: string; defaultValue?: unknown }>;
  defaults: Array<[string, unknown]>;
  stamps: string[];
  byField: Array<readonly [string, string]>;
  heads: Map<string, string>;
}
const shapes = new WeakMap<object, Shape>();
const MAX_HEADS = 64;

function shapeOf(model: ModelStatic<Model>): Shape {
  let shape = shapes.get(model);
  if (!shape) {
    const attributes = model.getAttributes() as Shape['attributes'];
    const literal = (v: unknown) => v === null || ['number', 'string', 'boolean'].includes(typeof v);
    shape = {
      attributes,
      defaults: Object.entries(attributes).filter(([, a]) => a.defaultValue !== undefined && literal(a.defaultValue)).map(([name, a]) => [name, a.defaultValue]),
      stamps: ['created_at', 'updated_at'].filter((stamp) => stamp in attributes),
      byField: Object.entries(attributes).map(([name, a]) => [name, a.field ?? name] as const),
      heads: new Map(),
    };
    shapes.set(model, shape);
  }
  return shape;
}

/** The INSERT's text up to its tuples, for these columns. */
function headOf(model: ModelStatic<Model>, shape: Shape, columns: string[]): string {
  const key = columns.join(',');
  let head = shape.heads.get(key);
  if (head === undefined) {
    const q = sequelize().getQueryInterface().queryGenerator as { quoteIdentifier(name: string): string; quoteTable(name: string): string };
    head = `INSERT INTO ${q.quoteTable(model.getTableName() as string)} (${columns.map((c) => q.quoteIdentifier(shape.attributes[c].field ?? c)).join(', ')}) VALUES `;
    // The lists come from the code, but which optional fields a request sent can vary them: bounded.
    if (shape.heads.size >= MAX_HEADS) shape.heads.clear();
    shape.heads.set(key, head);
  }
  return head;
}

/** A row as `create` would write it: the model's default values filled in, created_at/updated_at stamped (db/sequelize.ts). */
function completed(row: Row, shape: Shape, at: number): Row {
  const out: Row = { ...row };
  for (const [name, fallback] of shape.defaults) if (out[name] === undefined) out[name] = fallback;
  for (const stamp of shape.stamps) if (out[stamp] == null) out[stamp] = at;
  return out;
}

/**
 * Inserts rows of a table in one statement and returns them as saved instances, in order, with
 * their ids (`RETURNING`: right whatever the server's auto-increment settings). Each row is
 * written as `create` writes it: the model's default values, created_at/updated_at stamped when the
 * row has none; a column no row gives is left to the database. No validation runs (the database's
 * constraints do); of the model's hooks, `afterBulkCreate` runs as `bulkCreate` runs it, which is
 * how a cache watching the table learns of the rows (db/versionedCache.ts). A row the
 * database refuses (a unique key) fails the whole statement, which then leaves no row behind, and
 * the transaction goes on. (Rows of more than STATEMENT_CHARS go in several statements; a refusal
 * in a later one leaves the earlier ones' rows in the transaction.)
 */
export async function insertRows<M extends Model>(model: ModelStatic<M>, rows: Row[], transaction: Transaction, options: InsertOptions = {}): Promise<M[]> {
  if (!rows.length) return [];
  const shape = shapeOf(model as ModelStatic<Model>);
  const { attributes } = shape;
  const at = now();
  const full = rows.map((r) => completed(r, shape, at));
  const columns = [...new Set(full.flatMap((r) => Object.keys(r).filter((k) => r[k] !== undefined && k in attributes)))];
  const head = headOf(model as ModelStatic<Model>, shape, columns);
  // Every value a placeholder, which the driver fills: no value is written into the statement here.
  const tuples = full.map((r) => {
    const values: unknown[] = [];
    const text = `(${columns.map((c) => (r[c] === undefined ? 'DEFAULT' : (values.push(r[c]), '?'))).join(', ')})`;
    return { text, values };
  });
  const returned: Row[] = [];
  for (const chunk of chunks(tuples)) {
    returned.push(...await select<Row>(`${head}${chunk.map((t) => t.text).join(', ')} RETURNING ${options.stored ? '*' : 'id'}`, chunk.flatMap((t) => t.values), { transaction }));
  }
  if (returned.length !== full.length) throw new Error(`${model.name}: ${full.length} rows inserted, ${returned.length} rows returned`);
  const instances = options.stored
    ? returned.map((r) => model.build(Object.fromEntries(shape.byField.map(([name, column]) => [name, r[column]])) as any, { isNewRecord: false, raw: true }))
    : full.map((r, i) => model.build({ ...r, id: Number(returned[i].id) } as any, { isNewRecord: false, raw: true }));
  const hooks = model as unknown as { hasHooks(name: string): boolean; runHooks(name: string, ...args: unknown[]): Promise<void> };
  if (hooks.hasHooks('afterBulkCreate')) await hooks.runHooks('afterBulkCreate', instances, { transaction });
  return instances;
}

export interface InsertOptions {
  /**
   * Return each row as the database stored it (`RETURNING *`: every column, those left to the
   * database's defaults too), so that nothing need be read back; by default the rows as written
   * with their ids (`RETURNING id`), which saves sending long columns (a message's text) back.
   */
  stored?: boolean;
}

/**
 * Most characters of rows in one statement, a value's characters counted twice (escaped, a quote or
 * a backslash is two; at most 3 bytes each in UTF-8): under MariaDB's default max_allowed_packet
 * (16 MiB), which a batch of long mails' messages could pass. Only rows that long are split.
 */
export const STATEMENT_CHARS = 4 * 1024 * 1024;

type Tuple = { text: string; values: unknown[] };
const sizeOf = (t: Tuple) => t.values.reduce<number>((n, v) => n + (typeof v === 'string' ? 2 * v.length : 24), t.text.length + 2);

function* chunks(tuples: Tuple[]): Generator<Tuple[]> {
  let chunk: Tuple[] = [];
  let size = 0;
  for (const t of tuples) {
    const tupleSize = sizeOf(t);
    if (chunk.length && size + tupleSize > STATEMENT_CHARS) {
      yield chunk;
      chunk = [];
      size = 0;
    }
    chunk.push(t);
    size += tupleSize;
  }
  if (chunk.length) yield chunk;
}
