import { Op, type Transaction, type WhereOptions } from 'sequelize';
import type { Model, ModelCtor } from 'sequelize-typescript';
import { keysetCondition } from './keyset';
import { select } from './select';
import { whereSql } from './whereSql';
import { sqlText, type BoundCondition } from './sql';

/** Groups rows by a key. */
export function groupBy<T, K>(rows: T[], key: (row: T) => K): Map<K, T[]> {
  const map = new Map<K, T[]>();
  for (const row of rows) {
    const k = key(row);
    const list = map.get(k);
    if (list) list.push(row);
    else map.set(k, [row]);
  }
  return map;
}

type Key = number | string;

/** What a loader may narrow and order by: a page's relations need no more. */
export interface LoadOptions {
  /** The attributes to read (default: all), or all but some. */
  attributes?: readonly string[] | { exclude: readonly string[] };
  /** Equalities besides the key column. */
  where?: Record<string, string | number>;
  /** Default: by `id` (by the key column when the model has no id). */
  order?: ReadonlyArray<readonly [string, 'ASC' | 'DESC']>;
}

// Identifiers come from the models' metadata, never from a request.
const ident = (name: string) => `\`${name.replace(/`/g, '``')}\``;
const statements = new WeakMap<object, Map<string, string>>();

/** An attribute's column, quoted (an unknown attribute is a programming error). */
const columnOf = (model: ModelCtor<Model>) => (name: string) => {
  const attribute = (model.getAttributes() as Record<string, { field?: string }>)[name];
  if (!attribute) throw new Error(`${model.name} has no attribute ${name}`);
  return ident(attribute.field ?? name);
};

/** The SELECT of `model`'s rows whose `column` is in a list (`IN (?)`), built once per shape. */
function selectByKey(model: ModelCtor<Model>, column: string, options: LoadOptions): string {
  const shape = JSON.stringify([column, options.attributes ?? null, Object.keys(options.where ?? {}), options.order ?? null]);
  let byShape = statements.get(model);
  if (!byShape) statements.set(model, (byShape = new Map()));
  const cached = byShape.get(shape);
  if (cached) return cached;
  const attributes = model.getAttributes() as Record<string, { field?: string }>;
  const field = columnOf(model);
  const exclude = options.attributes && !Array.isArray(options.attributes) ? (options.attributes as { exclude: readonly string[] }).exclude : [];
  const names = Array.isArray(options.attributes) ? options.attributes as readonly string[] : Object.keys(attributes).filter((n) => !exclude.includes(n));
  const columns = names.map((n) => (field(n) === ident(n) ? ident(n) : `${field(n)} AS ${ident(n)}`));
  const where = [`${field(column)} IN (?)`, ...Object.keys(options.where ?? {}).map((k) => `${field(k)} = ?`)];
  const order = options.order ?? [['id' in attributes ? 'id' : column, 'ASC']];
  const sql = `SELECT ${columns.join(', ')} FROM ${ident(model.getTableName() as string)} WHERE ${where.join(' AND ')}`
    + ` ORDER BY ${order.map(([c, d]) => `${field(c)} ${d === 'DESC' ? 'DESC' : 'ASC'}`).join(', ')}`;
  byShape.set(shape, sql);
  return sql;
}

/**
 * The rows of `model` whose `column` is one of `keys`: one query for a whole page of records (the
 * way every embedded relation is loaded, never one query per record).
 *
 * Loaders feed presenters only, so they return plain rows (the columns as properties, no model
 * instances), and they run a statement built once per shape from the model's attributes rather
 * than through `findAll`, on the driver (./select.ts): for these simple reads, Sequelize's option
 * cloning, query generation, instance building and row copying cost more than the driver.
 */
export async function loadRows<M extends Model>(model: ModelCtor<M>, column: string, keys: Array<Key | null | undefined>, options: LoadOptions = {}): Promise<M[]> {
  const unique = [...new Set(keys.filter((k): k is Key => k !== null && k !== undefined))];
  if (!unique.length) return [];
  return select<M>(selectByKey(model as ModelCtor<Model>, column, options), [unique, ...Object.values(options.where ?? {})]);
}

/** Rows by `column`, grouped by it (the children of a page of records). */
export async function loadMany<M extends Model>(model: ModelCtor<M>, column: string, keys: Array<Key | null | undefined>, options: LoadOptions = {}): Promise<Map<number, M[]>> {
  return groupBy(await loadRows(model, column, keys, options), (r) => (r as any)[column] as number);
}

/** Records by id, in one query. */
export async function loadById<M extends Model>(model: ModelCtor<M>, ids: Array<number | null | undefined>, options: LoadOptions = {}): Promise<Map<number, M>> {
  return new Map((await loadRows(model, 'id', ids, options)).map((r) => [(r as any).id as number, r]));
}

/**
 * The record of `model` with id `id`, read in `transaction` under a lock (`share`: LOCK IN SHARE
 * MODE, `update`: FOR UPDATE), as a model instance (a write that locks a record changes and saves
 * it): what `findByPk(id, { transaction, lock })` gives, built from the row as findAll builds it,
 * but on the driver (./select.ts). A reply and a create lock two or three records each, and
 * Sequelize's query path (query generation, option cloning, result handling) cost as much CPU as
 * the rest of their reads together.
 */
export async function lockById<M extends Model>(model: ModelCtor<M>, id: number, transaction: Transaction, lock: 'share' | 'update'): Promise<M | null> {
  return recordById(model, id, { transaction, lock });
}

/**
 * The record of `model` with id `id` and the equalities of `where`, as a model instance (what
 * `findOne({ where, transaction, lock })` gives, on the driver as lockById reads): in
 * `transaction` under `lock` when given, else from the pool; `attributes`: only those (default
 * every one). Null when no row matches.
 */
export async function recordById<M extends Model>(
  model: ModelCtor<M>, id: number,
  options: { transaction?: Transaction; lock?: 'share' | 'update'; where?: Record<string, string | number>; attributes?: LoadOptions['attributes'] } = {},
): Promise<M | null> {
  const { transaction, lock, where = {}, attributes } = options;
  const sql = `${selectByKey(model as ModelCtor<Model>, 'id', { where, attributes })}${lock ? (lock === 'share' ? ' LOCK IN SHARE MODE' : ' FOR UPDATE') : ''}`;
  const [row] = await select<Record<string, unknown>>(sql, [[id], ...Object.values(where)], { transaction });
  return row ? model.build(row as any, { isNewRecord: false, raw: true }) : null;
}

/**
 * Sets `record`'s values to its row as stored, read in `transaction` (what `reload()` does, on the
 * driver as lockById reads): a write's answer presents what the database holds (its defaults, its
 * conversions), and the instance itself is kept (a presenter may key by it what only this
 * response shows). A record gone meanwhile is an error, as it is for `reload()`.
 */
export async function readBack<M extends Model>(record: M, transaction: Transaction): Promise<void> {
  const model = record.constructor as ModelCtor<M>;
  const id = (record as unknown as { id: number }).id;
  const [row] = await select<Record<string, unknown>>(selectByKey(model as ModelCtor<Model>, 'id', {}), [[id]], { transaction });
  if (!row) throw new Error(`${model.name} ${id} could not be read back: it does not exist anymore`);
  record.set(row as any, { raw: true, reset: true });
}

/**
 * A many-to-many relation for a page of owners, in two queries: the link rows, then the linked
 * records. Returns, per owner id, the linked records in the order of their ids.
 */
export async function loadLinked<L extends Model, T extends Model>(
  link: ModelCtor<L>, ownerKey: string, targetKey: string, ownerIds: number[], target: ModelCtor<T>, options: LoadOptions = {},
): Promise<Map<number, T[]>> {
  const links = await loadMany(link, ownerKey, ownerIds, { order: [[ownerKey, 'ASC'], [targetKey, 'ASC']] });
  const targetOf = (l: L) => (l as any)[targetKey] as number;
  const targets = await loadById(target, [...links.values()].flat().map(targetOf), options);
  const out = new Map<number, T[]>();
  for (const [ownerId, rows] of links) {
    out.set(ownerId, rows.map((l) => targets.get(targetOf(l))).filter((t): t is T => t !== undefined));
  }
  return out;
}

/** Rows of a model by a condition: Sequelize's where (literals with `:name` values allowed), the order, the limit. */
export interface ConditionOptions {
  where: WhereOptions;
  replacements: Record<string, unknown>;
  order: ReadonlyArray<readonly [string, string]>;
  limit: number;
  /** Read in this transaction (loadWhere): on its connection, at its isolation level. */
  transaction?: Transaction;
  /** Only these attributes (loadWhere; default every one). */
  attributes?: readonly string[];
  /**
   * Each row's `_fingerprint` too (loadWhere): an MD5 of every column as the database holds it,
   * whatever `attributes` reads, so that two reads of a row tell whether it changed in between
   * without carrying it twice.
   */
  fingerprint?: boolean;
}

/** A page of a list: the rows by a condition, from `offset`. */
export interface PageOptions extends ConditionOptions {
  offset: number;
  /** The number of rows that match, when known otherwise (counters): no COUNT then. */
  count?: Promise<number>;
  /** The page's rows only past this condition (keyset paging, afterRecord); the count is of every match. */
  after?: BoundCondition;
  /** Run the page and the count without index merge intersections (ResourceDef.noIndexIntersections). */
  noIntersections?: boolean;
  /** Indexes the page never reads its order from (ResourceDef.notForOrder). */
  notForOrder?: readonly string[];
  /**
   * The matches as parts no row is in two of, each a FROM clause ending in its WHERE, the model
   * under its name (ResourceDef.pageParts): the page is each part's first `offset + limit` rows in
   * the order, merged, instead of `where` read in the order.
   */
  parts?: readonly BoundCondition[];
}

/** A statement's prefix that keeps the optimiser from intersecting indexes (index_merge_intersection). */
export const NO_INTERSECTIONS = "SET STATEMENT optimizer_switch = 'index_merge_intersection=off' FOR ";

/**
 * A statement's prefix that keeps the optimiser from flattening IN-subqueries into semi-joins:
 * each is then a look-up per row, in the order the statement reads its rows.
 */
export const NO_SEMIJOINS = "SET STATEMENT optimizer_switch = 'semijoin=off' FOR ";

/**
 * A statement's prefix that keeps an IN list of values a list of values: from 1,000 of them
 * (in_predicate_conversion_threshold, a page of the largest `limit`) MariaDB turns it into a
 * subquery over a table of the values, which a forced index or a join order cannot then use (the
 * custom field values of 1,000 tickets at 1M read all 2,000,000 values: 494 ms, 8 ms so).
 */
export const IN_LISTS_AS_LISTS = 'SET STATEMENT in_predicate_conversion_threshold = 0 FOR ';

/**
 * The parts of a SELECT of `model`'s rows by a condition as `findAll` renders it (the table under
 * the model's name, Sequelize's rendering of the where), to run on the driver (./select.ts).
 */
function statementOf(model: ModelCtor<Model>, options: ConditionOptions): { columns: string; from: string; where: string; order: string; table: string; alias: string } {
  const all = Object.keys(model.getAttributes());
  const field = columnOf(model);
  const alias = ident(model.name);
  const table = ident(model.getTableName() as string);
  const condition = whereSql(model, options.where, alias);
  const where = condition ? ` WHERE ${condition}` : '';
  const read = (options.attributes ?? all).map((n) => `${alias}.${field(n)}${field(n) === ident(n) ? '' : ` AS ${ident(n)}`}`);
  if (options.fingerprint) read.push(`MD5(JSON_ARRAY(${all.map((n) => `${alias}.${field(n)}`).join(', ')})) AS \`_fingerprint\``);
  return {
    columns: read.join(', '),
    table,
    alias,
    where,
    from: `FROM ${table} AS ${alias}${where}`,
    order: options.order.map(([c, d]) => `${alias}.${field(c)} ${d === 'DESC' ? 'DESC' : 'ASC'}`).join(', '),
  };
}

/**
 * `model`'s rows by a condition, plain, as the loaders return them: what `findAll({ raw: true })`
 * runs, on the driver (Sequelize's path clones its options and copies every row key by key: the
 * export's page of 1,000 tickets cost 85 ms of CPU through it, 70 ms this way; docs/benchmark.md).
 */
export async function loadWhere<M extends Model>(model: ModelCtor<M>, options: ConditionOptions & { offset?: number }): Promise<M[]> {
  const { columns, from, order } = statementOf(model as ModelCtor<Model>, options);
  return select<M>(
    `SELECT ${columns} ${from} ORDER BY ${order} LIMIT :pageOffset, :pageLimit`,
    { ...options.replacements, pageOffset: options.offset ?? 0, pageLimit: options.limit }, { transaction: options.transaction },
  );
}

/**
 * A page of `model`'s rows (plain, as the loaders return them) and the number of rows that match,
 * in two statements run together: what `findAndCountAll({ raw: true })` runs, on the driver (the
 * count from `options.count` instead when given).
 */
export async function loadPage<M extends Model>(model: ModelCtor<M>, options: PageOptions): Promise<{ rows: M[]; count: number }> {
  const { columns, from, where, order, table, alias } = statementOf(model as ModelCtor<Model>, options);
  const { after } = options;
  const pageWhere = after ? statementOf(model as ModelCtor<Model>, { ...options, where: { [Op.and]: [options.where, after.literal as WhereOptions] } }).where : where;
  const hint = options.notForOrder?.length ? ` IGNORE INDEX FOR ORDER BY (${options.notForOrder.map(ident).join(', ')})` : '';
  const page = `FROM ${table} AS ${alias}${hint}${pageWhere}`;
  const values = { ...options.replacements, ...after?.replacements, pageOffset: options.offset, pageLimit: options.limit };
  const switches = options.noIntersections ? NO_INTERSECTIONS : '';
  // A page past the first, or in an order other than the primary key's: a deferred join. The
  // page's ids come from an index alone (every secondary index ends with the primary key), then
  // its rows by primary key. Reading every column while skipping `start` rows or walking another
  // order's index, the optimiser priced each skipped row's lookup and sorted the whole table
  // instead (100,000 IP bans by `updated_at`, `start=1000`: 25-32 ms against 0.8-0.9 ms).
  const pk = columnOf(model as ModelCtor<Model>)(model.primaryKeyAttribute);
  const deferred = options.offset > 0 || options.order[0][0] !== model.primaryKeyAttribute;
  const ids = options.parts
    ? `SELECT ${alias}.${pk} FROM (${partsMerged(model as ModelCtor<Model>, options.parts, options.order, order, after)}) AS ${alias} ORDER BY ${order} LIMIT :pageOffset, :pageLimit`
    : `SELECT ${alias}.${pk} ${page} ORDER BY ${order} LIMIT :pageOffset, :pageLimit`;
  const pageSql = deferred || options.parts
    ? `${switches}SELECT STRAIGHT_JOIN ${columns} FROM (${ids}) AS \`page\`
       JOIN ${table} AS ${alias} ON ${alias}.${pk} = \`page\`.${pk} ORDER BY ${order}`
    : `${switches}SELECT ${columns} ${page} ORDER BY ${order} LIMIT :pageOffset, :pageLimit`;
  const partValues = Object.assign({}, ...(options.parts ?? []).map((p) => p.replacements), options.parts && { pageEnd: options.offset + options.limit });
  const [rows, count] = await Promise.all([
    select<M>(pageSql, { ...values, ...partValues }),
    options.count ?? select<{ count: number | bigint }>(`${switches}SELECT COUNT(*) AS count ${from}`, options.replacements).then(([r]) => r.count),
  ]);
  return { rows, count: Number(count) };
}

/**
 * The union of a page's parts (PageOptions.parts): each part's first `pageEnd` rows in the page's
 * order, read apart (a part is a range of an index of its own, its rows sorted when the index is
 * not in the order: as many as the part holds), so no plan of the whole condition can walk the
 * order's index past every row that is not a match. Their columns: the key and the order's.
 */
function partsMerged(
  model: ModelCtor<Model>, parts: readonly BoundCondition[], orderBy: PageOptions['order'], order: string, after: BoundCondition | undefined,
): string {
  const field = columnOf(model);
  const alias = ident(model.name);
  const columns = [...new Set([model.primaryKeyAttribute, ...orderBy.map(([c]) => c)])].map((c) => `${alias}.${field(c)}`).join(', ');
  const past = after ? ` AND ${sqlText(after)}` : '';
  return parts.map((part) => `(SELECT ${columns} FROM ${sqlText(part)}${past} ORDER BY ${order} LIMIT :pageEnd)`).join(' UNION ALL ');
}

/** The number a statement counts (a `SELECT <expression> AS count`), for a page's `count` (PageOptions.count). */
export async function countBy(statement: BoundCondition): Promise<number> {
  const [r] = await select<{ count: number | bigint | string }>(sqlText(statement), statement.replacements);
  return Number(r.count);
}

/** The record a keyset page starts after (`after_id`): its id and its value of the order's column. */
export interface Anchor { id: number; value: unknown }

/**
 * The anchor of a keyset page after record `id` in the order `column` then id (keyset paging,
 * ./keyset.ts); null when no record of `model` with that id and the equalities `where` (the
 * list's scope, not its filters) exists.
 */
export async function anchorOf<M extends Model>(
  model: ModelCtor<M>, column: string, id: number, where: Record<string, string | number> = {},
): Promise<Anchor | null> {
  const [row] = await select<Record<string, unknown>>(selectByKey(model as ModelCtor<Model>, 'id', { where, attributes: [column] }), [[id], ...Object.values(where)]);
  return row ? { id, value: row[column] } : null;
}

/** The condition of the rows after `anchor` in the order `column` then id, as a page of `model` (loadPage) names its columns. */
export const afterAnchor = <M extends Model>(model: ModelCtor<M>, column: string, desc: boolean, anchor: Anchor): BoundCondition =>
  keysetCondition(ident(model.name), columnOf(model as ModelCtor<Model>)(column), desc, anchor.value, anchor.id);

/** The condition of the rows after record `id` (anchorOf, afterAnchor); null when there is no such record. */
export async function afterRecord<M extends Model>(
  model: ModelCtor<M>, column: string, desc: boolean, id: number, where: Record<string, string | number> = {},
): Promise<BoundCondition | null> {
  const anchor = await anchorOf(model, column, id, where);
  return anchor && afterAnchor(model, column, desc, anchor);
}
