import 'reflect-metadata';
import { Sequelize } from 'sequelize-typescript';
import type { Model } from 'sequelize';
import { config } from '../config';
import { now } from './entity';
import { models } from './models';
import { Replicas } from './replicas';
import { countWrite } from './writes';

type Attributes = { getAttributes(): Record<string, unknown> };
const has = (model: Attributes, column: string) => column in model.getAttributes();

function stamp(instance: Model, creating: boolean) {
  const model = instance.constructor as unknown as Attributes;
  const t = now();
  // A caller may set created_at on purpose (an imported record); never overwrite it.
  if (creating && has(model, 'created_at') && instance.get('created_at') == null) instance.set('created_at', t);
  if (has(model, 'updated_at') && (creating ? instance.get('updated_at') == null : instance.changed() !== false)) instance.set('updated_at', t);
}

/**
 * The session's statement limit (0: none); ms is a validated integer (config.ts). A string, not
 * an array: Sequelize pushes its time-zone statement onto an array initSql at every connect.
 */
function statementTimeout(ms: number): string {
  return `SET max_statement_time=${Number(ms) / 1000}`;
}

/**
 * Timeouts, so a request never hangs on the database: connecting, waiting for a pooled connection,
 * a socket that answers nothing (dropped packets), and one statement (MariaDB's
 * max_statement_time: the server stops the statement). Either failure is a Sequelize
 * ConnectionError or TimeoutError, which the API answers with 503 (http/errors.ts). Migrations run
 * without the socket and statement timeouts (migrationSequelize).
 *
 * max_statement_time is set by initSql, not by the driver's queryTimeout option: the driver (3.5)
 * sends queryTimeout's SET without waiting for it, so a connection lost during that SET resolves
 * as connected and rejects a promise nobody holds (an unhandled rejection). An initSql statement
 * is part of connecting: its failure fails the connect, which the pool handles.
 */
function connectionOptions(long = false, db = config().database) {
  return {
    dialect: 'mariadb' as const,
    host: db.host,
    port: db.port,
    username: db.user,
    password: db.password,
    database: db.name,
    logging: false as const,
    pool: { max: db.poolMax, min: 0, idle: 10000, acquire: db.acquireTimeoutMs },
    // No type cast: every column is an integer or a string (timestamps are UNIX seconds, flags
    // TINYINT), and Sequelize's cast, a JavaScript call for every value of every row read, only
    // parses DATETIME, DATE and GEOMETRY, which no table has. The driver's own readers remain.
    dialectOptions: {
      connectTimeout: db.connectTimeoutMs, typeCast: undefined,
      ...(long ? {} : { socketTimeout: db.socketTimeoutMs, initSql: statementTimeout(db.queryTimeoutMs) }),
    },
  };
}

/** A connection for migrations only: no models, no socket or statement timeout (an ALTER of a big table takes its time). */
export function migrationSequelize(db = config().database): Sequelize {
  return new Sequelize({ ...connectionOptions(true, db), pool: { max: 2, min: 0, idle: 10000, acquire: config().database.acquireTimeoutMs } });
}

/** The read replicas of DATABASE_READ_URLS, or none (db/replicas.ts). */
function readReplicas(): Replicas | undefined {
  const db = config().database;
  if (!db.replicas.length) return undefined;
  return new Replicas(db.replicas, { maxLagSeconds: db.replicaMaxLagSeconds, checkMs: db.replicaCheckMs, connectTimeoutMs: db.connectTimeoutMs });
}

function create(): Sequelize {
  const replicas = readReplicas();
  const options = connectionOptions();
  const sequelize = new Sequelize({
    ...options,
    ...(replicas ? { replication: replicas.replication(config().database), pool: { ...options.pool, validate: replicas.validate } } : {}),
    define: { timestamps: false, charset: 'utf8mb4', collate: 'utf8mb4_unicode_ci' },
    models,
  });
  // Validation (NOT NULL) runs before beforeCreate/beforeUpdate, so the stamp goes in first.
  sequelize.addHook('beforeValidate', (instance: Model) => stamp(instance, (instance as any).isNewRecord));
  // An update saves only the fields it names: updated_at must be one of them, or it never moves.
  sequelize.addHook('beforeUpdate', (instance: Model, options: any) => {
    if (!has(instance.constructor as unknown as Attributes, 'updated_at') || !options.fields?.length) return;
    instance.set('updated_at', now());
    if (!options.fields.includes('updated_at')) options.fields.push('updated_at');
  });
  sequelize.addHook('beforeBulkCreate', (instances: Model[]) => instances.forEach((i) => stamp(i, true)));
  sequelize.addHook('beforeBulkUpdate', (options: any) => {
    if (!has(options.model, 'updated_at')) return;
    options.attributes.updated_at = now();
    if (options.fields && !options.fields.includes('updated_at')) options.fields.push('updated_at');
  });
  // Whether an update wrote anything (db/writes.ts): a no-op update moves no updated_at, emits nothing.
  sequelize.addHook('afterQuery', (options: any, query: any) => countWrite(options, query));
  replicas?.attach(sequelize);
  return sequelize;
}

let instance: Sequelize | undefined;
const onCreate: Array<(s: Sequelize) => void> = [];

/** The process's one Sequelize instance (models can belong to a single instance). */
export function sequelize(): Sequelize {
  if (!instance) {
    instance = create();
    for (const hook of onCreate) hook(instance);
  }
  return instance;
}

/**
 * Runs `hook` once the instance exists (at once if it does): model hooks (cache watchers) can only
 * be added after the models joined the instance, which resets them.
 */
export function whenModelsReady(hook: (s: Sequelize) => void): void {
  onCreate.push(hook);
  if (instance) hook(instance);
}

/** Counts the SQL statements a piece of work runs: used by tests and the benchmark (no N+1). */
export async function countQueries<T>(work: () => Promise<T>): Promise<{ result: T; queries: string[] }> {
  const s = sequelize();
  const queries: string[] = [];
  const previous = s.options.logging;
  s.options.logging = (sql: string) => queries.push(sql);
  try {
    return { result: await work(), queries };
  } finally {
    s.options.logging = previous;
  }
}
