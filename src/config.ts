import { Joi } from './lib/validation';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { parseEnv } from 'node:util';
import { isAbsolute, join } from 'node:path';
import { projectRoot } from './lib/projectRoot';

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
    /** Connecting, waiting for a pooled connection, a socket with no answer, one statement (server-side); ms, 0: none. */
    connectTimeoutMs: number; acquireTimeoutMs: number; socketTimeoutMs: number; queryTimeoutMs: number;
    /** How long a migration waits for another process's to finish (seconds). */
    migrationLockWaitSeconds: number;
    /** Read replicas (docs/replicas.md): their addresses, the lag beyond which one is skipped, how often they are checked, the read-your-writes window. */
    replicas: Array<{ host: string; port: number; user: string; password: string; name: string }>;
    replicaMaxLagSeconds: number; replicaCheckMs: number; readYourWritesSeconds: number;
  };
  redisUrl: string;
  /**
   * Where Redis is: REDIS_URL's server, the master named `name` that Sentinels report, or a
   * cluster (REDIS_URL then gives only the user, password, database and TLS).
   */
  redis:
    | { kind: 'single' }
    | { kind: 'sentinel'; sentinels: HostPort[]; name: string; sentinelPassword: string }
    | { kind: 'cluster'; nodes: HostPort[] };
  /** Our own Redis keys start with `<queuePrefix>:`. */
  queuePrefix: string;
  /** BullMQ's key prefix: QUEUE_PREFIX, hash-tagged (`{helpdesk}`) on a cluster so a queue's keys share a slot. */
  bullmqPrefix: string;
  logLevel: string;
  logFormat: 'auto' | 'json' | 'pretty';
  trustProxy: string;
  /** The ticket search's engine (src/ticket/tickets/search/engine.ts). */
  searchEngine: 'innodb' | 'mroonga' | 'groonga';
  /** SEARCH_ENGINE=groonga: the Groonga server's address, gqtp:// or http(s):// (src/ticket/tickets/search/groongaServer.ts). */
  searchGroongaUrl: string;
  bodyLimit: string;
  /** Bodies over `largeBytes` (or of unknown length) parsed at once per process; more get 503. */
  largeBodies: { largeBytes: number; concurrency: number };
  apiToken: string | undefined;
  verifyTokenTtl: number;
  /** Failed API authentications from one address within the window that ban it for `banSeconds` (max 0: never). */
  loginFailures: { max: number; windowSeconds: number; banSeconds: number };
  /** Requests to verification links from one address within the window, beyond which it gets 429. */
  verifyAttempts: { max: number; windowSeconds: number };
  mail: { attempts: number; backoffMs: number; maxBackoffMs: number; concurrency: number };
  outbox: { sweepEveryMs: number; sweepAfterMs: number; republishAfterMs: number };
  banExpiryEveryMs: number;
  /** How often the scheduler closes inactive tickets and makes feedback requests. */
  ticketSweepEveryMs: number;
  /** Jobs one scheduler worker runs at once (a long one, a bulk change or a ticket sweep, holds up no other). */
  schedulerConcurrency: number;
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
  /** Where new files are stored (src/storage/stores.ts); `dir` is the directory store's root (may be set in either mode). */
  attachmentStorage: { store: 'database' | 'directory'; dir: string };
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
  /** Internal targets webhooks may reach after all: host names, IPs or CIDRs (src/net/outbound.ts). */
  outboundAllowHosts: string[];
  /** OAuth2 for mailboxes and SMTP (src/oauth): the token endpoint's timeout; how long before expiry a token is renewed. */
  oauth: { timeoutMs: number; refreshBeforeSeconds: number };
  /**
   * The mailbox worker: how often due mailboxes are polled, polls at once, the network timeout,
   * the longest backoff after failed polls, the largest mail imported, and the cap on automatic
   * notifications to one address about one ticket per window (a loop breaker).
   */
  mailbox: {
    pollEveryMs: number; concurrency: number; timeoutMs: number; maxBackoffSeconds: number; maxMessageBytes: number;
    notifyCap: number; notifyCapWindowSeconds: number;
    /**
     * Flood protection (a loop breaker for auto-responders that send no RFC 3834 headers): past
     * `floodLimit` mails from one address into one ticket in `floodWindowSeconds`, a mail is still
     * filed but notifies nobody and changes no status; past `floodNewTickets` tickets opened by one
     * address in that window, a ticket is still opened but its sender not answered (0: no limit).
     */
    floodLimit: number; floodNewTickets: number; floodWindowSeconds: number;
    /** Ticket mail carries the ticket's sub-address of its department address as Reply-To (`support+t42-…@`). */
    replySubaddress: boolean;
    /** An incoming mail's Reply-To, when it names someone other than its From, is its sender (SupportPal's "Prioritise Reply-To"). */
    prioritiseReplyTo: boolean;
    /** A PEM file of certificates trusted for mailbox TLS besides Node's roots. */
    tlsCaFile: string;
    /** Mails fetched together and imported in one transaction, and the most bytes such a batch holds. */
    batchSize: number; batchBytes: number;
  };
  /**
   * The mail catcher (src/mailcatcher): `npm start` runs its SMTP server on host:port, the seeded
   * brand sends there, and the web process shows what it caught. Off in production by default.
   */
  mailCatcher: { enabled: boolean; host: string; port: number; keep: number };
  /** An event newer than this that follows a gap in ids waits: the gap may be a transaction still open. */
  eventFeedSettleSeconds: number;
  /** The export reads rows changed up to this many seconds ago only: longer than any write transaction. */
  exportSettleSeconds: number;
  /** Export tombstones older than this are pruned, and a cursor (or start_time) that needs them is refused. */
  exportTombstoneRetentionSeconds: number;
  /** Outbox entries done with (sent, failed for good) older than this are pruned; 0 keeps them (src/queue/outboxPrune.ts). */
  outboxRetentionSeconds: number;
  /** Events (with their webhook deliveries) older than this are pruned; 0 keeps them (src/core/eventPrune.ts). */
  eventRetentionSeconds: number;
  /** Tickets in the trash longer than this are deleted for good; 0 keeps them (src/ticket/trashPurge.ts). */
  ticketTrashRetentionSeconds: number;
  /** A tickets export narrowed by a search reads at most this many changed tickets a page (src/export/changes.ts, spanEnd). */
  exportSearchSpan: number;
  /** How many spam rules there may be (every incoming mail and comment runs each; each stays compiled). */
  spamRulesMax: number;
  /**
   * Test only (ignored unless NODE_ENV=test): holds the response of a POST with an Idempotency-Key
   * for `ms` before (`before-store`) or after (`after-store`) its response is stored, so a test
   * can kill the process at that point.
   */
  testHoldResponse: { at: 'before-store' | 'after-store'; ms: number } | null;
}

export interface HostPort { host: string; port: number }

/** `host:port,host:port` (a host may be an IPv6 address in brackets). */
const hostPorts = () => Joi.string().allow('').default('').custom((value: string) => value.split(',').map((e) => e.trim()).filter(Boolean).map((e) => {
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$/.exec(e);
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) throw new Error(`has an entry that is not host:port: ${e}`);
  return { host: m[1].replace(/^\[|\]$/g, ''), port: Number(m[2]) };
}));

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

/** An entry of TRUST_PROXY as Express (proxy-addr) reads it: a name, an address, or an address with a prefix length or netmask. */
function trustedProxy(entry: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(entry)) return true;
  const [address, range, ...rest] = entry.split('/');
  const family = isIP(address);
  if (!family || rest.length) return false;
  if (range === undefined) return true;
  return /^\d{1,3}$/.test(range) ? Number(range) <= (family === 4 ? 32 : 128) : family === 4 && isIP(range) === 4;
}

/** A switch: `1` or `0` (also `true`/`false`, `yes`/`no`, `on`/`off`), said so when it is neither. */
const flag = () => Joi.boolean().truthy('1', 'yes', 'on').falsy('0', 'no', 'off').messages({ 'boolean.base': '{{#label}} must be 1 or 0' });
const secretKey = () => Joi.string().custom((value: string) => parseSecretKey(value));

/** A MariaDB server's URL (DATABASE_URL, each of DATABASE_READ_URLS). */
const mariadbUrl = () => Joi.string().uri({ scheme: ['mariadb', 'mysql'] });
/** The database a MariaDB URL names ('' when none). */
const databaseOf = (url: URL) => decodeURIComponent(url.pathname.replace(/^\//, ''));
/** Where a MariaDB URL connects, as whom (defaults: 127.0.0.1:3306, root, no password). */
const serverOf = (url: URL) => ({
  host: url.hostname || '127.0.0.1', port: Number(url.port || 3306),
  user: decodeURIComponent(url.username || 'root'), password: decodeURIComponent(url.password || ''),
});

/** Every variable: its type, limits, default and a description (docs/configuration.md is generated from it). */
export const configSchema = Joi.object({
  NODE_ENV: Joi.string().valid('development', 'production', 'test').default('development').description("`development`, `production` or `test`: production turns the mail catcher off by default"),
  PORT: Joi.number().integer().min(0).max(65535).default(3000).description("web port"),
  HOST: Joi.string().default('0.0.0.0').description("web listen address"),
  APP_URL: Joi.string().uri({ scheme: ['http', 'https'] }).description("public URL of the web process (verification links point here)").meta({ default: "http://127.0.0.1:$PORT" }),
  DATABASE_URL: mariadbUrl()
    .default('mariadb://root@127.0.0.1:3306/helpdesk').description("the database; created if missing"),
  DATABASE_POOL_MAX: Joi.number().integer().min(1).max(200).default(10).description("connections per process"),
  DATABASE_CONNECT_TIMEOUT_MS: Joi.number().integer().min(100).max(600000).default(3000).description("how long opening a database connection may take"),
  DATABASE_ACQUIRE_TIMEOUT_MS: Joi.number().integer().min(100).max(600000).default(10000).description("how long a request waits for a free connection of the pool before 503"),
  DATABASE_SOCKET_TIMEOUT_MS: Joi.number().integer().min(0).max(3600000).default(60000).description("a database connection silent for this long is closed (`0`: never)"),
  DATABASE_QUERY_TIMEOUT_MS: Joi.number().integer().min(0).max(3600000).default(30000).description("the longest a statement may run (`0`: no limit; migrations have none)"),
  DATABASE_MIGRATION_LOCK_WAIT_SECONDS: Joi.number().integer().min(0).max(86400).default(600).description("how long a migration (`npm run migrate`, `npm start`) waits for another process's migration to finish before it gives up"),
  DATABASE_READ_URLS: Joi.string().allow('').default('').description("read replicas, comma-separated `mariadb://` URLs (the database name defaults to DATABASE_URL's): reads of GET requests go there (docs/replicas.md)"),
  DATABASE_READ_MAX_LAG_SECONDS: Joi.number().integer().min(0).max(86400).default(5).description("a replica further behind than this (or not replicating, or unreachable) is skipped until it catches up"),
  DATABASE_READ_CHECK_MS: Joi.number().integer().min(50).max(600000).default(1000).description("how often each replica's lag and reachability are checked"),
  DATABASE_READ_YOUR_WRITES_SECONDS: Joi.number().integer().min(0).max(3600).default(5).description("after a token's write request, its reads go to the primary for this long (tracked in Redis)"),
  REDIS_URL: Joi.string().uri({ scheme: ['redis', 'rediss'] }).default('redis://127.0.0.1:6379').description("Redis for queues, counters, rate limits and cache versions; with `REDIS_SENTINELS` or `REDIS_CLUSTER_NODES` only its user, password, database and `rediss:` (TLS) are used"),
  REDIS_SENTINELS: hostPorts().description("Redis Sentinels, `host:port` comma-separated: connect to the master they name `REDIS_SENTINEL_NAME`, and follow it through a failover").meta({ default: "none" }),
  REDIS_SENTINEL_NAME: Joi.string().pattern(/^[A-Za-z0-9._-]+$/).default('mymaster').description("the master's name in the Sentinels' configuration"),
  REDIS_SENTINEL_PASSWORD: Joi.string().allow('').default('').description("the Sentinels' own password (`requirepass` in sentinel.conf), if they have one"),
  REDIS_CLUSTER_NODES: hostPorts().description("some nodes of a Redis Cluster, `host:port` comma-separated (the others are discovered); BullMQ's keys are then prefixed `{QUEUE_PREFIX}`").meta({ default: "none" }),
  QUEUE_PREFIX: Joi.string().pattern(/^[A-Za-z0-9_-]+$/).default('helpdesk').description("the prefix of every Redis key (queues, counters, cache versions): installs sharing a Redis need different ones"),
  LOG_LEVEL: Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').default('info').description("pino level (`silent` to turn off)"),
  LOG_FORMAT: Joi.string().valid('auto', 'json', 'pretty').default('auto').description("`json` lines, or `pretty` lines for people (`12:00:01.234 INFO  web | web process listening port=3000`); `auto` is pretty on a terminal and JSON otherwise (`npm start` formats the lines of the processes it runs)"),
  SEARCH_ENGINE: Joi.string().valid('innodb', 'mroonga', 'groonga').default('innodb').description("The ticket search's engine: `innodb` (FULLTEXT indexes of the tickets and messages tables; slow for a common word at a million tickets), `mroonga` (MariaDB's Mroonga plugin: an index of each ticket's text kept by triggers, fast counts and pages; install `mariadb-plugin-mroonga` and `INSTALL SONAME 'ha_mroonga'`) or `groonga` (a Groonga search server at `SEARCH_GROONGA_URL`, on a machine of its own if need be, fed from the tickets' change stream by the scheduler worker a second or two behind the database; install `groonga-bin`); see docs/performance.md, Search"),
  SEARCH_GROONGA_URL: Joi.string().uri({ scheme: ['gqtp', 'http', 'https'] }).default('gqtp://127.0.0.1:10043').description("with `SEARCH_ENGINE=groonga`: the Groonga server's address: `gqtp://host:port` for Groonga's own protocol (`groonga -s --protocol gqtp --port 10043 <database path>`: connections kept open, the least CPU a command), or `http://` / `https://` for its HTTP interface (`--protocol http`, or a proxy in front of it); several help desks may share one server (each keeps its tables under its database's name)"),
  TRUST_PROXY: Joi.string().allow('').default('').custom((value: string) => {
    if (value === 'true' || /^\d+$/.test(value)) return value;
    const bad = value.split(',').map((e) => e.trim()).find((e) => !trustedProxy(e));
    if (bad !== undefined) throw new Error(`has an entry that is not true, a hop count, an IP address, a CIDR, loopback, linklocal or uniquelocal: ${bad}`);
    return value;
  }).description("Express `trust proxy`: set it behind a load balancer so bans see the client address (`loopback`, a hop count, or addresses)"),
  BODY_LIMIT: Joi.string().pattern(/^\d+(b|kb|mb)$/i).default('25mb').description("largest request body"),
  LARGE_BODY_BYTES: Joi.number().integer().min(1024).default(1024 * 1024).description("a request body over this size counts as large"),
  LARGE_BODY_CONCURRENCY: Joi.number().integer().min(1).max(1000).default(4).description("large bodies one process parses at once; one more gets 503 with Retry-After"),
  API_TOKEN: Joi.string().min(20).max(200).description("a token to store at `npm start` (at least 20 characters) instead of printing a new one").meta({ default: "none" }),
  VERIFY_TOKEN_TTL: Joi.number().integer().min(60).default(48 * 3600).description("seconds a verification link stays valid"),
  LOGIN_FAILURES_MAX: Joi.number().integer().min(0).max(1_000_000).default(10).description("failed API authentications from one address within the window that ban it from the API (`0`: never)"),
  LOGIN_FAILURES_WINDOW_SECONDS: Joi.number().integer().min(1).max(30 * 86400).default(600).description("that window, starting with the first failure"),
  LOGIN_BAN_SECONDS: Joi.number().integer().min(1).max(365 * 86400).default(3600).description("how long such a ban lasts"),
  VERIFY_ATTEMPTS_MAX: Joi.number().integer().min(1).max(1_000_000).default(20).description("requests to verification links (`GET` and `POST`) one address may make within the window; more get 429"),
  VERIFY_ATTEMPTS_WINDOW_SECONDS: Joi.number().integer().min(1).max(86400).default(600).description("that window"),
  MAIL_ATTEMPTS: Joi.number().integer().min(1).max(1000).default(32).description("attempts per mail (the default, with the default waits, keeps trying for about 24 hours)"),
  MAIL_BACKOFF_MS: Joi.number().integer().min(10).default(15000).description("first retry delay of a mail, doubled each time up to `MAIL_BACKOFF_MAX_MS`"),
  MAIL_BACKOFF_MAX_MS: Joi.number().integer().min(10).default(3600000).description("the longest wait between two attempts of a mail"),
  MAIL_CONCURRENCY: Joi.number().integer().min(1).max(100).default(5).description("mails one worker sends at once"),
  OUTBOX_SWEEP_EVERY_MS: Joi.number().integer().min(100).default(30000).description("how often the sweep runs"),
  OUTBOX_SWEEP_AFTER_MS: Joi.number().integer().min(0).default(15000).description("age of an unpublished entry before the sweep publishes it"),
  OUTBOX_REPUBLISH_AFTER_MS: Joi.number().integer().min(0).default(120000).description("age of a published entry, neither processed nor failed for good, before the sweep re-adds its job"),
  BAN_EXPIRY_EVERY_MS: Joi.number().integer().min(100).default(60000).description("how often expired temporary bans are deleted"),
  TICKET_SWEEP_EVERY_MS: Joi.number().integer().min(100).default(60000).description("how often inactive tickets are closed and feedback requests made"),
  SCHEDULER_CONCURRENCY: Joi.number().integer().min(2).max(50).default(4).description("jobs one scheduler worker runs at once, so that a long one (a bulk change, a ticket sweep) never holds up the outbox sweep or the ban expiry"),
  SHUTDOWN_TIMEOUT_MS: Joi.number().integer().min(100).default(10000).description("how long a process may take to stop before it is forced"),
  WEB_CONCURRENCY: Joi.number().integer().min(1).max(256).default(1).description("web processes one `web` entry runs (node:cluster workers sharing the port; a worker that dies is replaced; SIGTERM stops them all gracefully)").meta({ default: "1 (npm start: the number of CPUs)" }),
  SECRET_KEY: secretKey().description("32 bytes, as 64 hex characters or base64 (`openssl rand -hex 32`): encrypts what the help desk stores encrypted: department mailbox passwords, brand SMTP passwords, webhook signing secrets, OAuth2 client secrets and tokens, the values of encrypted custom fields, and the responses kept for Idempotency-Key replays. In production, without it, the API refuses to store a secret (422) and keeps those responses unencrypted").meta({ default: "none (see docs/operations.md, Secrets at rest)" }),
  // At most 10 MiB a file: the uploads store keeps a file in one row, sent in one packet
  // (MariaDB's default max_allowed_packet is 16 MiB).
  ATTACHMENT_MAX_BYTES: Joi.number().integer().min(1).max(10 * 1024 * 1024).default(10 * 1024 * 1024).description("largest ticket attachment (at most 10 MiB: a file is one row, sent in one packet)"),
  ATTACHMENTS_MAX_BYTES: Joi.number().integer().min(1).max(1024 * 1024 * 1024).default(25 * 1024 * 1024).description("most bytes of attachments one request (or mail) may carry together; `BODY_LIMIT` also bounds a request"),
  ATTACHMENTS_STORAGE: Joi.string().valid('database', 'directory').default('database').description("where new attachment files are stored: `database` (the `uploads` table) or `directory` (files under `ATTACHMENTS_DIR`, shared by every node); `npm run attachments -- move` moves existing ones (see docs/attachments.md)"),
  // Relative, each process would resolve it from its own working directory.
  ATTACHMENTS_DIR: Joi.string().allow('').default('').custom((value: string) => {
    if (value && !isAbsolute(value)) throw new Error('must be an absolute path');
    return value;
  }).when('ATTACHMENTS_STORAGE', { is: 'directory', then: Joi.string().required().invalid('') })
    .description("an absolute directory on storage shared by every node (NFS, a volume): the directory store's root; required with `ATTACHMENTS_STORAGE=directory`"),
  /** Former keys, comma-separated: still decrypt what they encrypted, never encrypt. */
  SECRET_KEY_PREVIOUS: Joi.string().allow('').custom((value: string) => value.split(',').map((k) => k.trim()).filter(Boolean).map(parseSecretKey)).description("former `SECRET_KEY`s, comma-separated: still decrypt what they encrypted, never encrypt"),
  SHUTDOWN_DRAIN_MS: Joi.number().integer().min(0).max(600000).default(0).description("after SIGTERM, how long the web process keeps accepting requests while `/readyz` answers 503 (set it to a few seconds behind a load balancer; it must be below `SHUTDOWN_TIMEOUT_MS`)"),
  METRICS_TOKEN: Joi.string().allow('').min(16).max(512).default('').description("bearer token of `GET /metrics` on the web port (at least 16 characters); empty: `/metrics` is not served there"),
  METRICS_PORT: Joi.number().integer().min(0).max(65535).default(0).description("a port of its own where the process serves `/metrics` without authentication; every process reads it (set it per process; `npm start` gives each Procfile line the base plus its index)"),
  METRICS_HOST: Joi.string().default('127.0.0.1').description("the address `METRICS_PORT` listens on"),
  RATE_LIMIT_PER_TOKEN: Joi.number().integer().min(0).max(1_000_000_000).default(600).description("API requests one token may make per window (`0`: no limit)"),
  RATE_LIMIT_PER_IP: Joi.number().integer().min(0).max(1_000_000_000).default(1200).description("API requests one address may make per window, failed authentications included (`0`: no limit)"),
  RATE_LIMIT_WINDOW_SECONDS: Joi.number().integer().min(1).max(86400).default(60).description("that window, starting with the first request"),
  IDEMPOTENCY_TTL_SECONDS: Joi.number().integer().min(60).max(30 * 86400).default(86400).description("how long the response to a POST with an `Idempotency-Key` is kept and replayed"),
  IDEMPOTENCY_LOCK_SECONDS: Joi.number().integer().min(1).max(3600).default(30).description("how long a request holds its key in Redis (a process that dies releases it after this)"),
  IDEMPOTENCY_WAIT_MS: Joi.number().integer().min(0).max(60000).default(2000).description("how long a second request with a key in use waits for the first's answer before 409"),
  WEBHOOK_ATTEMPTS: Joi.number().integer().min(1).max(50).default(8).description("attempts per webhook delivery"),
  WEBHOOK_BACKOFF_MS: Joi.number().integer().min(10).default(30000).description("first retry delay of a delivery, doubled each time (8 attempts: about an hour)"),
  WEBHOOK_TIMEOUT_MS: Joi.number().integer().min(100).max(120000).default(10000).description("how long a receiver has to answer"),
  WEBHOOK_CONCURRENCY: Joi.number().integer().min(1).max(100).default(10).description("deliveries one webhooks worker makes at once"),
  OUTBOUND_ALLOW_HOSTS: Joi.string().allow('').default('').custom((value: string) => {
    const entries = value.split(',').map((h) => h.trim().toLowerCase()).filter(Boolean);
    for (const e of entries) {
      if (!/^[a-z0-9.:_\-\[\]*/]+$/.test(e)) throw new Error(`has an entry that is not a host name, IP or CIDR: ${e}`);
    }
    return entries;
  }).description("internal hosts webhooks and OAuth2 token endpoints may reach: comma-separated host names, IPs or CIDRs (loopback, private, link-local and metadata addresses are refused otherwise)").meta({ default: "none" }),
  OAUTH_TIMEOUT_MS: Joi.number().integer().min(100).max(120000).default(10000).description("how long an OAuth2 token endpoint has to answer a refresh"),
  OAUTH_REFRESH_BEFORE_SECONDS: Joi.number().integer().min(0).max(86400).default(300).description("an OAuth2 access token is renewed this long before it expires"),
  MAILBOX_POLL_EVERY_MS: Joi.number().integer().min(100).default(60000).description("how often due mailboxes are polled"),
  MAILBOX_CONCURRENCY: Joi.number().integer().min(1).max(100).default(4).description("mailboxes one mailbox worker polls at once"),
  MAILBOX_TIMEOUT_MS: Joi.number().integer().min(100).max(600000).default(30000).description("connect, greeting and socket timeout of a mailbox connection"),
  MAILBOX_MAX_BACKOFF_SECONDS: Joi.number().integer().min(1).max(86400).default(3600).description("the longest wait after failed polls (the wait doubles from the poll interval)"),
  MAILBOX_MAX_MESSAGE_BYTES: Joi.number().integer().min(1024).max(1024 * 1024 * 1024).default(40 * 1024 * 1024).description("largest mail imported; a larger one is recorded as `rejected` without being downloaded"),
  MAILBOX_BATCH_SIZE: Joi.number().integer().min(1).max(1000).default(50).description("mails a poll fetches in one IMAP FETCH and imports in one transaction (one by one again when one of them fails)"),
  MAILBOX_BATCH_BYTES: Joi.number().integer().min(1024).default(32 * 1024 * 1024).description("most bytes of mail a poll holds in memory for one batch (a larger mail is a batch of its own)"),
  MAILBOX_TLS_CA_FILE: Joi.string().allow('').default('').description("a PEM file of certificates trusted for mailbox TLS besides Node's (checked readable at start)"),
  MAIL_PRIORITISE_REPLY_TO: flag().default(false).description("`1`: an incoming mail whose Reply-To names someone other than its From (a web form's mail: From the site, Reply-To the visitor) is that person's: the Reply-To opens or answers the ticket, as its user or a CC"),
  MAIL_REPLY_SUBADDRESS: flag().default(false).description("`1`: ticket mail carries the ticket's sub-address as Reply-To (needs `+` delivery on the mail server)"),
  MAIL_NOTIFY_CAP: Joi.number().integer().min(0).max(1_000_000).default(10).description("automatic mails one user or CC address gets about one ticket per window (`0`: no cap)"),
  MAIL_NOTIFY_CAP_WINDOW_SECONDS: Joi.number().integer().min(1).max(30 * 86400).default(3600).description("that window"),
  MAIL_FLOOD_LIMIT: Joi.number().integer().min(0).max(1_000_000).default(10).description("mails from one address into one ticket per window that notify as usual; later ones are still filed, but notify nobody and change no status, as an automatic mail (`0`: no limit)"),
  MAIL_FLOOD_NEW_TICKETS: Joi.number().integer().min(0).max(1_000_000).default(10).description("tickets one address opens by mail per window whose sender is answered as usual; later ones are still opened (the operators hear of them) but the sender is not answered, so a robot that opens a ticket with every answer it gets stops (`0`: no limit)"),
  MAIL_FLOOD_WINDOW_SECONDS: Joi.number().integer().min(1).max(30 * 86400).default(600).description("that window"),
  MAIL_CATCHER: flag().description("`1`: `npm start` runs the local mail catcher and the seeded brand sends to it (see docs/operations.md); `0`: no catcher").meta({ default: "on (off when NODE_ENV=production)" }),
  MAIL_CATCHER_HOST: Joi.string().default('127.0.0.1').description("the address the mail catcher's SMTP server listens on (and the seeded brand sends to)"),
  MAIL_CATCHER_PORT: Joi.number().integer().min(0).max(65535).default(1025).description("the mail catcher's SMTP port"),
  MAIL_CATCHER_KEEP: Joi.number().integer().min(1).max(100000).default(200).description("how many caught mails are kept (the oldest are dropped)"),
  EVENT_FEED_SETTLE_SECONDS: Joi.number().integer().min(0).max(3600).default(5).description("the event feed stops before a recent event that follows a gap in ids for this long: an id is taken an instant before its row is written (an older gap is checked for open transactions on the primary; see Event feed)"),
  // At least 1: timestamps are whole seconds, and the current second may still be written.
  SPAM_RULES_MAX: Joi.number().integer().min(1).max(10000).default(256).description("how many spam rules there may be: every incoming mail and self-service comment runs each, and each stays compiled in every process (up to ~130 KB each); a create past it is refused (422)"),
  EXPORT_SETTLE_SECONDS: Joi.number().integer().min(1).max(3600).default(10).description("the export holds back changes younger than this: a time is taken an instant before its row is written (a row a transaction still open has written holds the export back until it ends, whatever its age; see docs/integrations.md)"),
  EXPORT_SEARCH_SPAN: Joi.number().integer().min(10).max(1000000).default(10000).description("a tickets export narrowed by `search` tests at most this many changed tickets a page, so a search few tickets match answers each page in bounded time: a page may then hold fewer records than its `limit`, or none, with `end_of_stream` false (follow `after_cursor` as always)"),
  EXPORT_TOMBSTONE_RETENTION_DAYS: Joi.number().integer().min(1).max(3650).default(90).description("export tombstones older than this many days are pruned; a reader whose cursor (or `start_time`) is older must start the export again from the beginning"),
  OUTBOX_RETENTION_DAYS: Joi.number().integer().min(0).max(3650).default(90).description("the outbox's entries that are done with (sent, or failed for good: the mail log's entries among them) are removed this many days after they were queued, with their delivery records; one still queued or retrying is kept whatever its age; 0 keeps every entry"),
  EVENT_RETENTION_DAYS: Joi.number().integer().min(0).max(3650).default(90).description("events older than this many days are removed from the event feed, with their webhook deliveries, oldest first (never past an event whose delivery is still pending); a feed cursor before the removed events is refused (422): read the feed again from cursor 0; 0 keeps every event"),
  TICKET_TRASH_RETENTION_DAYS: Joi.number().integer().min(0).max(3650).default(30).description("tickets in the trash longer than this many days are deleted for good (SupportPal's default), with their messages, attachments, feedback, history and the tickets merged into them, each with a `ticket.deleted` event; a ticket restored before then stays; 0 keeps the trash until tickets are restored or their user is deleted"),
  TEST_HOLD_RESPONSE: Joi.string().allow('').pattern(/^(before-store|after-store):\d{1,6}$/).default('').description("tests only, ignored unless `NODE_ENV=test`: `before-store:<ms>` or `after-store:<ms>` holds the response of a POST with an `Idempotency-Key`, so a test can kill the process there"),
}).unknown(true);

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // A custom check's own message follows the name ('SECRET_KEY must be 32 bytes ...'), not Joi's 'failed custom validation because'.
  const { value, error } = configSchema.validate(env, { abortEarly: false, convert: true, messages: { 'any.custom': '{{#label}} {{#error.message}}' } });
  if (error) {
    throw new ConfigError(`Invalid configuration: ${error.details.map((d) => d.message.replace(/"/g, '')).join('; ')}`);
  }
  if (value.REDIS_SENTINELS.length && value.REDIS_CLUSTER_NODES.length) {
    throw new ConfigError('Invalid configuration: set REDIS_SENTINELS or REDIS_CLUSTER_NODES, not both');
  }
  // A cluster has database 0 only.
  if (value.REDIS_CLUSTER_NODES.length && !/^\/?0?$/.test(new URL(value.REDIS_URL).pathname)) {
    throw new ConfigError('Invalid configuration: REDIS_URL names a database, which a Redis Cluster (REDIS_CLUSTER_NODES) does not have');
  }
  // Forced to stop at the timeout, a web process still draining exits 1 with requests in flight.
  if (value.SHUTDOWN_DRAIN_MS >= value.SHUTDOWN_TIMEOUT_MS) {
    throw new ConfigError(`Invalid configuration: SHUTDOWN_DRAIN_MS (${value.SHUTDOWN_DRAIN_MS}) must be below SHUTDOWN_TIMEOUT_MS (${value.SHUTDOWN_TIMEOUT_MS})`);
  }
  if (value.MAILBOX_TLS_CA_FILE) {
    try {
      accessSync(value.MAILBOX_TLS_CA_FILE, constants.R_OK);
    } catch (err) {
      throw new ConfigError(`Invalid configuration: MAILBOX_TLS_CA_FILE ${value.MAILBOX_TLS_CA_FILE} cannot be read (${(err as NodeJS.ErrnoException).code})`);
    }
  }
  const db = new URL(value.DATABASE_URL);
  const name = databaseOf(db);
  // The database name is used as an identifier (CREATE DATABASE), which cannot be a bound parameter.
  if (!/^[A-Za-z0-9_]{1,64}$/.test(name)) {
    throw new ConfigError('Invalid configuration: DATABASE_URL must name a database of letters, digits and underscores');
  }
  const replicas = (value.DATABASE_READ_URLS as string).split(',').map((u) => u.trim()).filter(Boolean).map((u) => {
    const r = mariadbUrl().validate(u);
    if (r.error) throw new ConfigError(`Invalid configuration: DATABASE_READ_URLS holds ${JSON.stringify(u.replace(/\/\/[^@/]*@/, '//***@'))}, which is not a mariadb:// URL`);
    const url = new URL(u);
    if ((databaseOf(url) || name) !== name) throw new ConfigError('Invalid configuration: a URL of DATABASE_READ_URLS names another database than DATABASE_URL');
    return { ...serverOf(url), name };
  });
  return {
    env: value.NODE_ENV,
    port: value.PORT,
    host: value.HOST,
    appUrl: (value.APP_URL ?? `http://127.0.0.1:${value.PORT}`).replace(/\/+$/, ''),
    database: {
      url: value.DATABASE_URL,
      ...serverOf(db),
      name,
      poolMax: value.DATABASE_POOL_MAX,
      connectTimeoutMs: value.DATABASE_CONNECT_TIMEOUT_MS,
      acquireTimeoutMs: value.DATABASE_ACQUIRE_TIMEOUT_MS,
      socketTimeoutMs: value.DATABASE_SOCKET_TIMEOUT_MS,
      queryTimeoutMs: value.DATABASE_QUERY_TIMEOUT_MS,
      migrationLockWaitSeconds: value.DATABASE_MIGRATION_LOCK_WAIT_SECONDS,
      replicas,
      replicaMaxLagSeconds: value.DATABASE_READ_MAX_LAG_SECONDS,
      replicaCheckMs: value.DATABASE_READ_CHECK_MS,
      readYourWritesSeconds: value.DATABASE_READ_YOUR_WRITES_SECONDS,
    },
    redisUrl: value.REDIS_URL,
    redis: value.REDIS_SENTINELS.length
      ? { kind: 'sentinel', sentinels: value.REDIS_SENTINELS, name: value.REDIS_SENTINEL_NAME, sentinelPassword: value.REDIS_SENTINEL_PASSWORD }
      : value.REDIS_CLUSTER_NODES.length ? { kind: 'cluster', nodes: value.REDIS_CLUSTER_NODES } : { kind: 'single' },
    queuePrefix: value.QUEUE_PREFIX,
    bullmqPrefix: value.REDIS_CLUSTER_NODES.length ? `{${value.QUEUE_PREFIX}}` : value.QUEUE_PREFIX,
    logLevel: value.LOG_LEVEL,
    logFormat: value.LOG_FORMAT,
    trustProxy: value.TRUST_PROXY,
    searchEngine: value.SEARCH_ENGINE,
    searchGroongaUrl: value.SEARCH_GROONGA_URL,
    bodyLimit: value.BODY_LIMIT,
    largeBodies: { largeBytes: value.LARGE_BODY_BYTES, concurrency: value.LARGE_BODY_CONCURRENCY },
    apiToken: value.API_TOKEN,
    verifyTokenTtl: value.VERIFY_TOKEN_TTL,
    loginFailures: { max: value.LOGIN_FAILURES_MAX, windowSeconds: value.LOGIN_FAILURES_WINDOW_SECONDS, banSeconds: value.LOGIN_BAN_SECONDS },
    verifyAttempts: { max: value.VERIFY_ATTEMPTS_MAX, windowSeconds: value.VERIFY_ATTEMPTS_WINDOW_SECONDS },
    mail: { attempts: value.MAIL_ATTEMPTS, backoffMs: value.MAIL_BACKOFF_MS, maxBackoffMs: value.MAIL_BACKOFF_MAX_MS, concurrency: value.MAIL_CONCURRENCY },
    outbox: { sweepEveryMs: value.OUTBOX_SWEEP_EVERY_MS, sweepAfterMs: value.OUTBOX_SWEEP_AFTER_MS, republishAfterMs: value.OUTBOX_REPUBLISH_AFTER_MS },
    banExpiryEveryMs: value.BAN_EXPIRY_EVERY_MS,
    ticketSweepEveryMs: value.TICKET_SWEEP_EVERY_MS,
    schedulerConcurrency: value.SCHEDULER_CONCURRENCY,
    shutdownTimeoutMs: value.SHUTDOWN_TIMEOUT_MS,
    webConcurrency: value.WEB_CONCURRENCY,
    secrets: { key: value.SECRET_KEY, previousKeys: value.SECRET_KEY_PREVIOUS || [] },
    attachments: { maxFileBytes: value.ATTACHMENT_MAX_BYTES, maxRequestBytes: value.ATTACHMENTS_MAX_BYTES },
    attachmentStorage: { store: value.ATTACHMENTS_STORAGE, dir: value.ATTACHMENTS_DIR },
    shutdownDrainMs: value.SHUTDOWN_DRAIN_MS,
    metrics: { token: value.METRICS_TOKEN, port: value.METRICS_PORT, host: value.METRICS_HOST },
    rateLimit: { perToken: value.RATE_LIMIT_PER_TOKEN, perIp: value.RATE_LIMIT_PER_IP, windowSeconds: value.RATE_LIMIT_WINDOW_SECONDS },
    idempotency: { ttlSeconds: value.IDEMPOTENCY_TTL_SECONDS, lockSeconds: value.IDEMPOTENCY_LOCK_SECONDS, waitMs: value.IDEMPOTENCY_WAIT_MS },
    webhooks: { attempts: value.WEBHOOK_ATTEMPTS, backoffMs: value.WEBHOOK_BACKOFF_MS, timeoutMs: value.WEBHOOK_TIMEOUT_MS, concurrency: value.WEBHOOK_CONCURRENCY },
    outboundAllowHosts: value.OUTBOUND_ALLOW_HOSTS || [],
    oauth: { timeoutMs: value.OAUTH_TIMEOUT_MS, refreshBeforeSeconds: value.OAUTH_REFRESH_BEFORE_SECONDS },
    mailbox: {
      pollEveryMs: value.MAILBOX_POLL_EVERY_MS, concurrency: value.MAILBOX_CONCURRENCY, timeoutMs: value.MAILBOX_TIMEOUT_MS,
      maxBackoffSeconds: value.MAILBOX_MAX_BACKOFF_SECONDS, maxMessageBytes: value.MAILBOX_MAX_MESSAGE_BYTES,
      notifyCap: value.MAIL_NOTIFY_CAP, notifyCapWindowSeconds: value.MAIL_NOTIFY_CAP_WINDOW_SECONDS,
      floodLimit: value.MAIL_FLOOD_LIMIT, floodNewTickets: value.MAIL_FLOOD_NEW_TICKETS, floodWindowSeconds: value.MAIL_FLOOD_WINDOW_SECONDS,
      replySubaddress: value.MAIL_REPLY_SUBADDRESS, prioritiseReplyTo: value.MAIL_PRIORITISE_REPLY_TO, tlsCaFile: value.MAILBOX_TLS_CA_FILE,
      batchSize: value.MAILBOX_BATCH_SIZE, batchBytes: value.MAILBOX_BATCH_BYTES,
    },
    mailCatcher: {
      enabled: value.MAIL_CATCHER ?? value.NODE_ENV !== 'production',
      host: value.MAIL_CATCHER_HOST, port: value.MAIL_CATCHER_PORT, keep: value.MAIL_CATCHER_KEEP,
    },
    eventFeedSettleSeconds: value.EVENT_FEED_SETTLE_SECONDS,
    exportSettleSeconds: value.EXPORT_SETTLE_SECONDS,
    spamRulesMax: value.SPAM_RULES_MAX,
    exportTombstoneRetentionSeconds: value.EXPORT_TOMBSTONE_RETENTION_DAYS * 86400,
    outboxRetentionSeconds: value.OUTBOX_RETENTION_DAYS * 86400,
    eventRetentionSeconds: value.EVENT_RETENTION_DAYS * 86400,
    ticketTrashRetentionSeconds: value.TICKET_TRASH_RETENTION_DAYS * 86400,
    exportSearchSpan: value.EXPORT_SEARCH_SPAN,
    testHoldResponse: value.NODE_ENV === 'test' && value.TEST_HOLD_RESPONSE
      ? { at: value.TEST_HOLD_RESPONSE.split(':')[0], ms: Number(value.TEST_HOLD_RESPONSE.split(':')[1]) }
      : null,
  };
}

let current: Config | undefined;

/** `.env` in the project's directory (none for a build outside it). */
function dotEnvPath(): string | null {
  try {
    return join(projectRoot(), '.env');
  } catch {
    return null;
  }
}

const ENTRY = /^\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_]*\s*=\s*(.*)$/;

/**
 * Refuses a .env with a line that is not `NAME=value` (`export` allowed), a comment or blank:
 * parseEnv joins such a line to the next into one odd name, silently dropping that variable. A
 * quoted value may go on over lines up to its closing quote, as parseEnv reads it.
 */
function checkDotEnv(text: string, path: string): void {
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    if (/^\s*(#|$)/.test(lines[i])) continue;
    const entry = ENTRY.exec(lines[i]);
    if (!entry) throw new ConfigError(`Invalid configuration: ${path} line ${i + 1} is not NAME=value, a comment or blank`);
    const quote = /^["'`]/.exec(entry[1])?.[0];
    if (!quote || entry[1].indexOf(quote, 1) > 0) continue;
    const closing = lines.findIndex((l, j) => j > i && l.includes(quote));
    if (closing > 0) i = closing;
  }
}

/**
 * Loads `.env` from the project's directory into process.env when there is one (a variable the
 * environment already has wins), except under tests, whose settings are their own.
 */
export function loadDotEnv(path = dotEnvPath(), env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NODE_ENV === 'test' || !path || !existsSync(path)) return false;
  const text = readFileSync(path, 'utf8');
  checkDotEnv(text, path);
  for (const [name, value] of Object.entries(parseEnv(text))) {
    if (env[name] === undefined) env[name] = value;
  }
  return true;
}

/** The process-wide configuration, read from the environment (and `.env`) on first use. */
export function config(): Config {
  if (!current) {
    loadDotEnv();
    current = loadConfig();
  }
  return current;
}
