import 'reflect-metadata';
import { Sequelize } from 'sequelize-typescript';
import type { Model } from 'sequelize';
import { config } from '../config';
import { now } from './entity';
import { models } from './models';

type Attributes = { getAttributes(): Record<string, unknown> };
const has = (model: Attributes, column: string) => column in model.getAttributes();

function stamp(instance: Model, creating: boolean) {
  const model = instance.constructor as unknown as Attributes;
  const t = now();
  // A caller may set created_at on purpose (an imported record); never overwrite it.
  if (creating && has(model, 'created_at') && instance.get('created_at') == null) instance.set('created_at', t);
  if (has(model, 'updated_at') && (creating ? instance.get('updated_at') == null : instance.changed() !== false)) instance.set('updated_at', t);
}

function create(): Sequelize {
  const db = config().database;
  const sequelize = new Sequelize({
    dialect: 'mariadb',
    host: db.host,
    port: db.port,
    username: db.user,
    password: db.password,
    database: db.name,
    logging: false,
    pool: { max: db.poolMax, min: 0, idle: 10000, acquire: 20000 },
    define: { timestamps: false, charset: 'utf8mb4', collate: 'utf8mb4_unicode_ci' },
    // No type cast: every column is an integer or a string (timestamps are UNIX seconds, flags
    // TINYINT), and Sequelize's cast, a JavaScript call for every value of every row read, only
    // parses DATETIME, DATE and GEOMETRY, which no table has. The driver's own readers remain.
    dialectOptions: { connectTimeout: 5000, typeCast: undefined },
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
