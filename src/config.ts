import Joi from 'joi';

/**
 * Every setting of every process comes from the environment, validated once at start: a bad value
 * stops the process with a message that names the variable (see README for the full list).
 */
export interface Config {
  env: 'development' | 'production' | 'test';
  port: number;
  host: string;
  appUrl: string;
  database: {
    url: string;
    host: string;
    port: number;
    user: string;
    password: string;
    name: string;
    poolMax: number;
  };
  redisUrl: string;
  queuePrefix: string;
  logLevel: string;
  trustProxy: string;
  bodyLimit: string;
  apiToken: string | undefined;
  verifyTokenTtl: number;
  mail: { attempts: number; backoffMs: number; concurrency: number };
  outbox: { sweepEveryMs: number; sweepAfterMs: number; republishAfterMs: number };
  banExpiryEveryMs: number;
  shutdownTimeoutMs: number;
}

const schema = Joi.object({
  NODE_ENV: Joi.string().valid('development', 'production', 'test').default('development'),
  PORT: Joi.number().integer().min(0).max(65535).default(3000),
  HOST: Joi.string().default('0.0.0.0'),
  APP_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
  DATABASE_URL: Joi.string()
    .uri({ scheme: ['mariadb', 'mysql'] })
    .default('mariadb://root@127.0.0.1:3306/helpdesk'),
  DATABASE_POOL_MAX: Joi.number().integer().min(1).max(200).default(10),
  REDIS_URL: Joi.string().uri({ scheme: ['redis', 'rediss'] }).default('redis://127.0.0.1:6379'),
  QUEUE_PREFIX: Joi.string().pattern(/^[A-Za-z0-9_-]+$/).default('helpdesk'),
  LOG_LEVEL: Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').default('info'),
  TRUST_PROXY: Joi.string().allow('').default(''),
  BODY_LIMIT: Joi.string().pattern(/^\d+(b|kb|mb)$/i).default('25mb'),
  API_TOKEN: Joi.string().min(20).max(200),
  VERIFY_TOKEN_TTL: Joi.number().integer().min(60).default(48 * 3600),
  MAIL_ATTEMPTS: Joi.number().integer().min(1).max(50).default(6),
  MAIL_BACKOFF_MS: Joi.number().integer().min(10).default(15000),
  MAIL_CONCURRENCY: Joi.number().integer().min(1).max(100).default(5),
  OUTBOX_SWEEP_EVERY_MS: Joi.number().integer().min(100).default(30000),
  OUTBOX_SWEEP_AFTER_MS: Joi.number().integer().min(0).default(15000),
  OUTBOX_REPUBLISH_AFTER_MS: Joi.number().integer().min(0).default(120000),
  BAN_EXPIRY_EVERY_MS: Joi.number().integer().min(100).default(60000),
  SHUTDOWN_TIMEOUT_MS: Joi.number().integer().min(100).default(10000),
}).unknown(true);

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const { value, error } = schema.validate(env, { abortEarly: false, convert: true });
  if (error) {
    throw new ConfigError(`Invalid configuration: ${error.details.map((d) => d.message.replace(/"/g, '')).join('; ')}`);
  }
  const db = new URL(value.DATABASE_URL);
  const name = decodeURIComponent(db.pathname.replace(/^\//, ''));
  // The database name is used as an identifier (CREATE DATABASE), which cannot be a bound parameter.
  if (!/^[A-Za-z0-9_]{1,64}$/.test(name)) {
    throw new ConfigError('Invalid configuration: DATABASE_URL must name a database of letters, digits and underscores');
  }
  return {
    env: value.NODE_ENV,
    port: value.PORT,
    host: value.HOST,
    appUrl: (value.APP_URL ?? `http://127.0.0.1:${value.PORT}`).replace(/\/+$/, ''),
    database: {
      url: value.DATABASE_URL,
      host: db.hostname || '127.0.0.1',
      port: Number(db.port || 3306),
      user: decodeURIComponent(db.username || 'root'),
      password: decodeURIComponent(db.password || ''),
      name,
      poolMax: value.DATABASE_POOL_MAX,
    },
    redisUrl: value.REDIS_URL,
    queuePrefix: value.QUEUE_PREFIX,
    logLevel: value.LOG_LEVEL,
    trustProxy: value.TRUST_PROXY,
    bodyLimit: value.BODY_LIMIT,
    apiToken: value.API_TOKEN,
    verifyTokenTtl: value.VERIFY_TOKEN_TTL,
    mail: { attempts: value.MAIL_ATTEMPTS, backoffMs: value.MAIL_BACKOFF_MS, concurrency: value.MAIL_CONCURRENCY },
    outbox: { sweepEveryMs: value.OUTBOX_SWEEP_EVERY_MS, sweepAfterMs: value.OUTBOX_SWEEP_AFTER_MS, republishAfterMs: value.OUTBOX_REPUBLISH_AFTER_MS },
    banExpiryEveryMs: value.BAN_EXPIRY_EVERY_MS,
    shutdownTimeoutMs: value.SHUTDOWN_TIMEOUT_MS,
  };
}

let current: Config | undefined;

/** The process-wide configuration, read from the environment on first use. */
export function config(): Config {
  if (!current) current = loadConfig();
  return current;
}
