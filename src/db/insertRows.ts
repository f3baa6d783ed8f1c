import { type Model, type ModelStatic, type Transaction } from 'sequelize';
import { now } from './entity';
import { select } from './select';
import { sequelize } from './sequelize';

type Row = Record<string, unknown>;

/** A row as `create` would write it: the model's default values filled in, created_at/updated_at stamped (db/sequelize.ts). */
function completed(row: Row, attributes: Record<string, { defaultValue?: unknown }>, at: number): Row {
  const out: Row = { ...row };
  for (const [name, attribute] of Object.entries(attributes)) {
    if (out[name] !== undefined) continue;
    const fallback = attribute.defaultValue;
    if (fallback !== undefined && (fallback === null || ['number', 'string', 'boolean'].includes(typeof fallback))) out[name] = fallback;
  }
  for (const stamp of ['created_at', 'updated_at']) if (stamp in attributes && out[stamp] == null) out[stamp] = at;
  return out;
}

/**
 * Inserts rows of a table in one statement and returns them as saved instances, in order, with
 * their ids (`RETURNING`: right whatever the server's auto-increment settings). Each row is
 * written as `create` writes it: the model's default values, created_at/updated_at stamped when the
 * row has none; a column no row gives is left to the database. No model hook or validation runs
 * (the database's constraints do): for tables no cache watches (db/versionedCache.ts). A row the
 * database refuses (a unique key) fails the whole statement, which then leaves no row behind, and
 * the transaction goes on. (Rows of more than STATEMENT_CHARS go in several statements; a refusal
 * in a later one leaves the earlier ones' rows in the transaction.)
 */
export async function insertRows<M extends Model>(model: ModelStatic<M>, rows: Row[], transaction: Transaction, options: InsertOptions = {}): Promise<M[]> {
  if (!rows.length) return [];
  const attributes = model.getAttributes() as Record<string, { field?: string; defaultValue?: unknown }>;
  const at = now();
  const full = rows.map((r) => completed(r, attributes, at));
  const columns = [...new Set(full.flatMap((r) => Object.keys(r).filter((k) => r[k] !== undefined && k in attributes)))];
  const q = sequelize().getQueryInterface().queryGenerator as { quoteIdentifier(name: string): string; quoteTable(name: string): string };
  const head = `INSERT INTO ${q.quoteTable(model.getTableName() as string)} (${columns.map((c) => q.quoteIdentifier(attributes[c].field ?? c)).join(', ')}) VALUES `;
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
  if (options.stored) {
    const byField = Object.entries(attributes).map(([name, a]) => [name, a.field ?? name] as const);
    return returned.map((r) => model.build(Object.fromEntries(byField.map(([name, column]) => [name, r[column]])) as any, { isNewRecord: false, raw: true }));
  }
  return full.map((r, i) => model.build({ ...r, id: Number(returned[i].id) } as any, { isNewRecord: false, raw: true }));
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
