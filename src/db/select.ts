import { QueryTypes, type Transaction } from 'sequelize';
import { sequelize, whenModelsReady } from './sequelize';
import { rowObjects } from './rowObjects';
import { countWrite } from './writes';

/**
 * Values of a statement: `?` placeholders take an array in order, `:name` placeholders an object.
 * An array value becomes a list (`IN (?)` with [1, 2] is `IN (1,2)`), as with Sequelize's replacements.
 */
export type SelectValues = readonly unknown[] | Readonly<Record<string, unknown>>;

/** Sees every statement `select` sends itself (the benchmark's capture: bench/capture.ts). */
export interface StatementObserver {
  /** `transaction`: the id of the transaction the statement runs in, or null. */
  started(sql: string, values: SelectValues, transaction: string | null): void;
  finished(): void;
}

interface Connection {
  query(sql: string | { sql: string; namedPlaceholders: boolean; rowsAsArray?: boolean }, values: SelectValues): Promise<any[]>;
  execute(sql: string | { sql: string; rowsAsArray?: boolean }, values: SelectValues): Promise<any[]>;
  batch(sql: string, values: SelectValues): Promise<any>;
}
interface Internals {
  connectionManager: { getConnection(o: { type: string }): Promise<Connection>; releaseConnection(c: Connection): void };
  dialect: { Query: new (c: Connection, s: unknown, o: object) => { formatError(err: unknown, stack?: string): Error } };
}

const ER_DEADLOCK = 1213;

let observer: StatementObserver | null = null;
export const observeSelects = (o: StatementObserver | null): void => { observer = o; };

export interface SelectOptions {
  transaction?: Transaction | null;
  /**
   * Sent as a prepared statement (the binary protocol, `?` placeholders only): a Buffer value
   * crosses as its bytes. In the text protocol the driver escapes it into the statement, where a
   * zero byte takes two: a file of 8.5 MB of zeros made a statement over max_allowed_packet (16 MB).
   */
  binary?: boolean;
  /**
   * `values` is a list of rows (arrays, `?` placeholders): the statement is prepared once and run
   * for each row in one round trip (the driver's batch). Each run is the statement's own plan: a
   * DELETE by a whole primary key reads that row alone, where one DELETE of many keys (`IN` of
   * rows, `OR`s) may scan the table, and lock and wait on rows it does not delete.
   */
  batch?: boolean;
}

/**
 * The rows of a statement written in the code that returns rows (a SELECT, an INSERT ... RETURNING),
 * as plain objects (the columns as properties).
 *
 * The statement goes to the driver itself: outside a transaction on a connection of the pool
 * (`connectionManager.getConnection`: a read replica when the work may read from one, as for any
 * Sequelize SELECT; db/replicas.ts), inside one on the transaction's own connection, with the
 * connection's statement timeout. Sequelize's own path costs a statement as much again as the
 * driver does: its options are copied twice, the replacements are escaped into the text in
 * JavaScript, an Error is made for its stack, and every row is copied key by key (measured: 0.36
 * against 0.20 ms of CPU for 50 users). Errors are Sequelize's (the dialect's `formatError`), and
 * `countQueries`' logging sees the statement, so nothing downstream can tell the paths apart. A
 * transaction that has finished (committed, or rolled back after a deadlock) takes Sequelize's
 * path, which refuses the statement as it refuses any other; a deadlock marks the transaction
 * rolled back, as Sequelize's path does.
 */
export async function select<T extends object = Record<string, unknown>>(sql: string, values: SelectValues = [], options: SelectOptions = {}): Promise<T[]> {
  const s = sequelize();
  const t = options.transaction as (Transaction & { connection?: Connection; finished?: string; id: string }) | null | undefined;
  if (t && (t.finished || !t.connection)) {
    return s.query<T>(sql, { replacements: values as Record<string, unknown>, transaction: t, type: QueryTypes.SELECT });
  }
  // Sequelize's own parts, not in its typings: the pool's connection manager and the dialect's error mapping.
  const { connectionManager: manager, dialect } = s as unknown as Internals;
  const connection = t ? t.connection! : await manager.getConnection({ type: QueryTypes.SELECT });
  const named = !Array.isArray(values);
  const logging = s.options.logging;
  if (typeof logging === 'function') logging(`Executing (${t ? t.id : 'default'}): ${sql}`);
  observer?.started(sql, values, t ? t.id : null);
  try {
    if (options.batch && !named) return await connection.batch(sql, values);
    // Rows as arrays, made objects of one shape per column list (./rowObjects.ts).
    if (options.binary && !named) return rowObjects<T>(await connection.execute({ sql, rowsAsArray: true }, values));
    return rowObjects<T>(await connection.query({ sql, namedPlaceholders: named, rowsAsArray: true }, values));
  } catch (err) {
    // As Sequelize does: a deadlock has rolled the whole transaction back in the server; the
    // transaction is marked so, and no later statement of it can run outside it (autocommit).
    if (t && (err as { errno?: number }).errno === ER_DEADLOCK) {
      await t.rollback().catch(() => undefined);
      t.finished = 'rollback';
    }
    const query = new dialect.Query(connection, s, { type: QueryTypes.SELECT });
    (err as any).sql = sql;
    throw query.formatError(err, (err as Error).stack);
  } finally {
    observer?.finished();
    if (!t) manager.releaseConnection(connection);
  }
}

/**
 * A statement written in the code that changes rows and returns none (an UPDATE, a DELETE), on
 * `select`'s path, in a transaction; counted as one of its writes (db/writes.ts), as the
 * statements Sequelize runs are. Returns how many rows it changed.
 */
export async function execute(sql: string, values: SelectValues, transaction: Transaction | undefined, options: Pick<SelectOptions, 'binary' | 'batch'> = {}): Promise<number> {
  const result = (await select(sql, values, { transaction, ...options })) as unknown as { affectedRows?: number };
  countWrite({ transaction }, { sql });
  return Number(result.affectedRows ?? 0);
}

type Boundary = Transaction & { parent?: Transaction; finished?: string; connection?: Connection };
interface BoundaryStatements {
  queryGenerator: Record<'startTransactionQuery' | 'commitTransactionQuery' | 'rollbackTransactionQuery', (t: Boundary) => string>;
  startTransaction(t: Boundary, options: object): Promise<unknown>;
  commitTransaction(t: Boundary, options: object): Promise<unknown>;
  rollbackTransaction(t: Boundary, options: object): Promise<unknown>;
}

/**
 * A transaction's START TRANSACTION, COMMIT and ROLLBACK go on `select`'s path too, not through
 * Sequelize's query (the query interface's methods that its Transaction calls, replaced on the
 * process's instance): every write runs two of them, and Sequelize's path cost each as much again
 * as the statement (bench/ab.ts, CPU per request: create user 0.88 to 0.68 ms, create IP ban 0.57
 * to 0.45, a reply 1.14 to 0.99, create ticket 1.45 to 1.31). The same SQL (Sequelize's query
 * generator), logged and observed as before; the transaction is marked finished as Sequelize marks
 * it (once the statement is sent), and a failed COMMIT still makes its Transaction destroy the
 * connection. A savepoint's statements, and those of a transaction without its connection or
 * already finished (which Sequelize refuses), take Sequelize's own path.
 */
whenModelsReady((s) => {
  const qi = s.getQueryInterface() as unknown as BoundaryStatements;
  const own = { start: qi.startTransaction, commit: qi.commitTransaction, rollback: qi.rollbackTransaction };
  const onDriver = (t: Boundary) => !t.parent && !!t.connection && !t.finished;
  const end = (t: Boundary, sql: string, state: 'commit' | 'rollback') => {
    const sent = select(sql, [], { transaction: t });
    t.finished = state;
    return sent;
  };
  qi.startTransaction = function startTransaction(t, options) {
    return onDriver(t) ? select(this.queryGenerator.startTransactionQuery(t), [], { transaction: t }) : own.start.call(this, t, options);
  };
  qi.commitTransaction = function commitTransaction(t, options) {
    return onDriver(t) ? end(t, this.queryGenerator.commitTransactionQuery(t), 'commit') : own.commit.call(this, t, options);
  };
  qi.rollbackTransaction = function rollbackTransaction(t, options) {
    return onDriver(t) ? end(t, this.queryGenerator.rollbackTransactionQuery(t), 'rollback') : own.rollback.call(this, t, options);
  };
});
