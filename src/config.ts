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
  logFormat: 'auto' | 'json' | 'pretty';
  trustProxy: string;
  bodyLimit: string;
  apiToken: string | undefined;
  verifyTokenTtl: number;
  /** Failed API authentications from one address within the window that ban it for `banSeconds` (max 0: never). */
  loginFailures: { max: number; windowSeconds: number; banSeconds: number };
  /** Requests to verification links from one address within the window, beyond which it gets 429. */
  verifyAttempts: { max: number; windowSeconds: number };
  mail: { attempts: number; backoffMs: number; concurrency: number };
  outbox: { sweepEveryMs: number; sweepAfterMs: number; republishAfterMs: number };
  banExpiryEveryMs: number;
  /** How often the scheduler closes inactive tickets and makes feedback requests. */
  ticketSweepEveryMs: number;
  shutdownTimeoutMs: number;
  /** Web processes (node:cluster workers) of one `web` entry: 1 runs no cluster. */
  webConcurrency: number;
  /**
   * Keys of the secrets stored encrypted (mailbox passwords), see crypto/secrets.ts: `key`
   * encrypts, `key` and `previousKeys` decrypt (rotation). No key: see crypto/secrets.ts.
   */
  secrets: { key: Buffer | undefined; previousKeys: Buffer[] };
  /** Ticket attachments: the largest file, and the most bytes of files one request (or one mail) may carry. */
  attachments: { maxFileBytes: number; maxRequestBytes: number };
  /** How long the web process keeps accepting requests after SIGTERM, answering /readyz with 503. */
  shutdownDrainMs: number;
  /**
   * Prometheus metrics: `/metrics` on the web port needs `Authorization: Bearer <token>` (no
   * token: not served there); `port` (0: none) serves them without authentication on `host`.
   */
  metrics: { token: string; port: number; host: string };
  /** Requests per window per API token and per client address (0: no limit). */
  rateLimit: { perToken: number; perIp: number; windowSeconds: number };
  /** Idempotency-Key: how long a response is kept, how long a request holds its key, how long a second one waits. */
  idempotency: { ttlSeconds: number; lockSeconds: number; waitMs: number };
  webhooks: { attempts: number; backoffMs: number; timeoutMs: number; concurrency: number };
  /**
   * The mailbox worker: how often due mailboxes are polled, polls at once, the network timeout,
   * the longest backoff after failed polls, the largest mail imported, and the cap on automatic
   * notifications to one address about one ticket per window (a loop breaker).
   */
  mailbox: {
    pollEveryMs: number; concurrency: number; timeoutMs: number; maxBackoffSeconds: number; maxMessageBytes: number;
    notifyCap: number; notifyCapWindowSeconds: number;
    /** Ticket mail carries the ticket's sub-address of its department address as Reply-To (`support+t42-…@`). */
    replySubaddress: boolean;
    /** A PEM file of certificates trusted for mailbox TLS besides Node's roots. */
    tlsCaFile: string;
  };
  /** An event newer than this that follows a gap in ids waits: the gap may be a transaction still open. */
  eventFeedSettleSeconds: number;
  /** The export reads rows changed up to this many seconds ago only: longer than any write transaction. */
  exportSettleSeconds: number;
  /**
   * Test only (ignored unless NODE_ENV=test): holds the response of a POST with an Idempotency-Key
   * for `ms` before (`before-store`) or after (`after-store`) its response is stored, so a test
   * can kill the process at that point.
   */
  testHoldResponse: { at: 'before-store' | 'after-store'; ms: number } | null;
}

/** A 32-byte key written as 64 hex characters or as base64 (standard or URL-safe, padding optional). */
export function parseSecretKey(raw: string): Buffer {
  const s = raw.trim();
  if (/^[0-9a-fA-F]{64}$/.test(s)) return Buffer.from(s, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(s)) {
    const key = Buffer.from(s.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (key.length === 32) return key;
  }
  throw new Error('must be 32 bytes written as 64 hex characters or as base64');
}

const secretKey = () => Joi.string().custom((value: string) => parseSecretKey(value));

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
  LOG_FORMAT: Joi.string().valid('auto', 'json', 'pretty').default('auto'),
  TRUST_PROXY: Joi.string().allow('').default(''),
  BODY_LIMIT: Joi.string().pattern(/^\d+(b|kb|mb)$/i).default('25mb'),
  API_TOKEN: Joi.string().min(20).max(200),
  VERIFY_TOKEN_TTL: Joi.number().integer().min(60).default(48 * 3600),
  LOGIN_FAILURES_MAX: Joi.number().integer().min(0).max(1_000_000).default(10),
  LOGIN_FAILURES_WINDOW_SECONDS: Joi.number().integer().min(1).max(30 * 86400).default(600),
  LOGIN_BAN_SECONDS: Joi.number().integer().min(1).max(365 * 86400).default(3600),
  VERIFY_ATTEMPTS_MAX: Joi.number().integer().min(1).max(1_000_000).default(20),
  VERIFY_ATTEMPTS_WINDOW_SECONDS: Joi.number().integer().min(1).max(86400).default(600),
  MAIL_ATTEMPTS: Joi.number().integer().min(1).max(50).default(6),
  MAIL_BACKOFF_MS: Joi.number().integer().min(10).default(15000),
  MAIL_CONCURRENCY: Joi.number().integer().min(1).max(100).default(5),
  OUTBOX_SWEEP_EVERY_MS: Joi.number().integer().min(100).default(30000),
  OUTBOX_SWEEP_AFTER_MS: Joi.number().integer().min(0).default(15000),
  OUTBOX_REPUBLISH_AFTER_MS: Joi.number().integer().min(0).default(120000),
  BAN_EXPIRY_EVERY_MS: Joi.number().integer().min(100).default(60000),
  TICKET_SWEEP_EVERY_MS: Joi.number().integer().min(100).default(60000),
  SHUTDOWN_TIMEOUT_MS: Joi.number().integer().min(100).default(10000),
  WEB_CONCURRENCY: Joi.number().integer().min(1).max(256).default(1),
  SECRET_KEY: secretKey(),
  // At most 10 MiB a file: the uploads store keeps a file in one row, sent in one packet
  // (MariaDB's default max_allowed_packet is 16 MiB).
  ATTACHMENT_MAX_BYTES: Joi.number().integer().min(1).max(10 * 1024 * 1024).default(10 * 1024 * 1024),
  ATTACHMENTS_MAX_BYTES: Joi.number().integer().min(1).max(1024 * 1024 * 1024).default(25 * 1024 * 1024),
  /** Former keys, comma-separated: still decrypt what they encrypted, never encrypt. */
  SECRET_KEY_PREVIOUS: Joi.string().allow('').custom((value: string) => value.split(',').map((k) => k.trim()).filter(Boolean).map(parseSecretKey)),
  SHUTDOWN_DRAIN_MS: Joi.number().integer().min(0).max(600000).default(0),
  METRICS_TOKEN: Joi.string().allow('').min(16).max(512).default(''),
  METRICS_PORT: Joi.number().integer().min(0).max(65535).default(0),
  METRICS_HOST: Joi.string().default('127.0.0.1'),
  RATE_LIMIT_PER_TOKEN: Joi.number().integer().min(0).max(1_000_000_000).default(600),
  RATE_LIMIT_PER_IP: Joi.number().integer().min(0).max(1_000_000_000).default(1200),
  RATE_LIMIT_WINDOW_SECONDS: Joi.number().integer().min(1).max(86400).default(60),
  IDEMPOTENCY_TTL_SECONDS: Joi.number().integer().min(60).max(30 * 86400).default(86400),
  IDEMPOTENCY_LOCK_SECONDS: Joi.number().integer().min(1).max(3600).default(30),
  IDEMPOTENCY_WAIT_MS: Joi.number().integer().min(0).max(60000).default(2000),
  WEBHOOK_ATTEMPTS: Joi.number().integer().min(1).max(50).default(8),
  WEBHOOK_BACKOFF_MS: Joi.number().integer().min(10).default(30000),
  WEBHOOK_TIMEOUT_MS: Joi.number().integer().min(100).max(120000).default(10000),
  WEBHOOK_CONCURRENCY: Joi.number().integer().min(1).max(100).default(10),
  MAILBOX_POLL_EVERY_MS: Joi.number().integer().min(100).default(60000),
  MAILBOX_CONCURRENCY: Joi.number().integer().min(1).max(100).default(4),
  MAILBOX_TIMEOUT_MS: Joi.number().integer().min(100).max(600000).default(30000),
  MAILBOX_MAX_BACKOFF_SECONDS: Joi.number().integer().min(1).max(86400).default(3600),
  MAILBOX_MAX_MESSAGE_BYTES: Joi.number().integer().min(1024).max(1024 * 1024 * 1024).default(40 * 1024 * 1024),
  MAILBOX_TLS_CA_FILE: Joi.string().allow('').default(''),
  MAIL_REPLY_SUBADDRESS: Joi.boolean().truthy('1').falsy('0').default(false),
  MAIL_NOTIFY_CAP: Joi.number().integer().min(0).max(1_000_000).default(10),
  MAIL_NOTIFY_CAP_WINDOW_SECONDS: Joi.number().integer().min(1).max(30 * 86400).default(3600),
  EVENT_FEED_SETTLE_SECONDS: Joi.number().integer().min(0).max(3600).default(5),
  // At least 1: timestamps are whole seconds, and the current second may still be written.
  EXPORT_SETTLE_SECONDS: Joi.number().integer().min(1).max(3600).default(10),
  TEST_HOLD_RESPONSE: Joi.string().allow('').pattern(/^(before-store|after-store):\d{1,6}$/).default(''),
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
    logFormat: value.LOG_FORMAT,
    trustProxy: value.TRUST_PROXY,
    bodyLimit: value.BODY_LIMIT,
    apiToken: value.API_TOKEN,
    verifyTokenTtl: value.VERIFY_TOKEN_TTL,
    loginFailures: { max: value.LOGIN_FAILURES_MAX, windowSeconds: value.LOGIN_FAILURES_WINDOW_SECONDS, banSeconds: value.LOGIN_BAN_SECONDS },
    verifyAttempts: { max: value.VERIFY_ATTEMPTS_MAX, windowSeconds: value.VERIFY_ATTEMPTS_WINDOW_SECONDS },
    mail: { attempts: value.MAIL_ATTEMPTS, backoffMs: value.MAIL_BACKOFF_MS, concurrency: value.MAIL_CONCURRENCY },
    outbox: { sweepEveryMs: value.OUTBOX_SWEEP_EVERY_MS, sweepAfterMs: value.OUTBOX_SWEEP_AFTER_MS, republishAfterMs: value.OUTBOX_REPUBLISH_AFTER_MS },
    banExpiryEveryMs: value.BAN_EXPIRY_EVERY_MS,
    ticketSweepEveryMs: value.TICKET_SWEEP_EVERY_MS,
    shutdownTimeoutMs: value.SHUTDOWN_TIMEOUT_MS,
    webConcurrency: value.WEB_CONCURRENCY,
    secrets: { key: value.SECRET_KEY, previousKeys: value.SECRET_KEY_PREVIOUS || [] },
    attachments: { maxFileBytes: value.ATTACHMENT_MAX_BYTES, maxRequestBytes: value.ATTACHMENTS_MAX_BYTES },
    shutdownDrainMs: value.SHUTDOWN_DRAIN_MS,
    metrics: { token: value.METRICS_TOKEN, port: value.METRICS_PORT, host: value.METRICS_HOST },
    rateLimit: { perToken: value.RATE_LIMIT_PER_TOKEN, perIp: value.RATE_LIMIT_PER_IP, windowSeconds: value.RATE_LIMIT_WINDOW_SECONDS },
    idempotency: { ttlSeconds: value.IDEMPOTENCY_TTL_SECONDS, lockSeconds: value.IDEMPOTENCY_LOCK_SECONDS, waitMs: value.IDEMPOTENCY_WAIT_MS },
    webhooks: { attempts: value.WEBHOOK_ATTEMPTS, backoffMs: value.WEBHOOK_BACKOFF_MS, timeoutMs: value.WEBHOOK_TIMEOUT_MS, concurrency: value.WEBHOOK_CONCURRENCY },
    mailbox: {
      pollEveryMs: value.MAILBOX_POLL_EVERY_MS, concurrency: value.MAILBOX_CONCURRENCY, timeoutMs: value.MAILBOX_TIMEOUT_MS,
      maxBackoffSeconds: value.MAILBOX_MAX_BACKOFF_SECONDS, maxMessageBytes: value.MAILBOX_MAX_MESSAGE_BYTES,
      notifyCap: value.MAIL_NOTIFY_CAP, notifyCapWindowSeconds: value.MAIL_NOTIFY_CAP_WINDOW_SECONDS,
      replySubaddress: value.MAIL_REPLY_SUBADDRESS, tlsCaFile: value.MAILBOX_TLS_CA_FILE,
    },
    eventFeedSettleSeconds: value.EVENT_FEED_SETTLE_SECONDS,
    exportSettleSeconds: value.EXPORT_SETTLE_SECONDS,
    testHoldResponse: value.NODE_ENV === 'test' && value.TEST_HOLD_RESPONSE
      ? { at: value.TEST_HOLD_RESPONSE.split(':')[0], ms: Number(value.TEST_HOLD_RESPONSE.split(':')[1]) }
      : null,
  };
}

let current: Config | undefined;

/** The process-wide configuration, read from the environment on first use. */
export function config(): Config {
  if (!current) current = loadConfig();
  return current;
}
