import { ConfigError, loadConfig } from '../../src/config';

function configError(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('applies the defaults to an empty environment', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      env: 'development',
      port: 3000,
      host: '0.0.0.0',
      appUrl: 'http://127.0.0.1:3000',
      redisUrl: 'redis://127.0.0.1:6379',
      queuePrefix: 'helpdesk',
      logLevel: 'info',
      trustProxy: '',
      bodyLimit: '25mb',
      apiToken: undefined,
      database: { url: 'mariadb://root@127.0.0.1:3306/helpdesk', host: '127.0.0.1', port: 3306, user: 'root', password: '', name: 'helpdesk', poolMax: 10 },
    });
    expect(Number.isInteger(c.banExpiryEveryMs)).toBe(true);
    expect(c.banExpiryEveryMs).toBeGreaterThan(0);
  });

  it('reads the values given', () => {
    const c = loadConfig({
      NODE_ENV: 'production', PORT: '8080', DATABASE_URL: 'mysql://app:p%40ss@db.internal:3307/desk_1', BODY_LIMIT: '10mb',
      APP_URL: 'https://help.example.com/', TRUST_PROXY: 'loopback', QUEUE_PREFIX: 'hd-prod',
    });
    expect(c).toMatchObject({
      env: 'production', port: 8080, bodyLimit: '10mb', appUrl: 'https://help.example.com', trustProxy: 'loopback', queuePrefix: 'hd-prod',
      database: { host: 'db.internal', port: 3307, user: 'app', password: 'p@ss', name: 'desk_1' },
    });
  });

  it('reads the read replicas of DATABASE_READ_URLS, with the primary\'s database name by default', () => {
    const c = loadConfig({ DATABASE_URL: 'mariadb://app:pw@db1:3306/desk', DATABASE_READ_URLS: 'mariadb://reader:r%40w@db2:3307, mysql://db3/desk' });
    expect(c.database.replicas).toEqual([
      { host: 'db2', port: 3307, user: 'reader', password: 'r@w', name: 'desk' },
      { host: 'db3', port: 3306, user: 'root', password: '', name: 'desk' },
    ]);
    expect(loadConfig({}).database.replicas).toEqual([]);
  });

  it.each([
    ['http://db2/desk', 'not a mariadb:// URL'],
    ['mariadb://db2/other', 'another database'],
  ])('refuses DATABASE_READ_URLS=%s', (url, why) => {
    const message = configError({ DATABASE_URL: 'mariadb://db1/desk', DATABASE_READ_URLS: `mariadb://db9/desk,${url}` }).message;
    expect(message).toContain('DATABASE_READ_URLS');
    expect(message).toContain(why);
  });

  it('never repeats a password of DATABASE_READ_URLS in its error', () => {
    expect(configError({ DATABASE_READ_URLS: 'http://reader:hunter2@db2/desk' }).message).not.toContain('hunter2');
  });

  it.each(['abc', '70000', '-1', '80.5'])('refuses PORT=%s, naming the variable', (port) => {
    expect(configError({ PORT: port }).message).toContain('PORT');
  });

  it.each([
    ['not a URL', 'not a url'],
    ['another scheme', 'postgres://root@127.0.0.1/helpdesk'],
    ['a database name that is no identifier', 'mariadb://root@127.0.0.1:3306/help-desk;drop'],
    ['no database name', 'mariadb://root@127.0.0.1:3306/'],
  ])('refuses a DATABASE_URL with %s, naming the variable', (_name, url) => {
    expect(configError({ DATABASE_URL: url }).message).toContain('DATABASE_URL');
  });

  it.each(['abc', 'loopback,abc', '10.0.0.0/33', '::1/129', '10.0.0.1/abc'])('refuses TRUST_PROXY=%s, naming the variable', (value) => {
    expect(configError({ TRUST_PROXY: value }).message).toMatch(/^Invalid configuration: TRUST_PROXY has an entry that is not true, a hop count, an IP address/);
  });

  // A custom check's message follows the variable's name, as Joi's own do (not 'failed custom validation because').
  it.each([
    ['SECRET_KEY', 'abc', 'SECRET_KEY must be 32 bytes written as 64 hex characters or as base64'],
    ['SECRET_KEY_PREVIOUS', 'abc', 'SECRET_KEY_PREVIOUS must be 32 bytes written as 64 hex characters or as base64'],
    ['ATTACHMENTS_DIR', 'relative/dir', 'ATTACHMENTS_DIR must be an absolute path'],
    ['OUTBOUND_ALLOW_HOSTS', 'a b', 'OUTBOUND_ALLOW_HOSTS has an entry that is not a host name, IP or CIDR: a b'],
    ['REDIS_SENTINELS', 'host', 'REDIS_SENTINELS has an entry that is not host:port: host'],
  ])('refuses %s=%s with its own message', (name, value, message) => {
    expect(configError({ [name]: value }).message).toBe(`Invalid configuration: ${message}`);
  });

  it.each(['', 'true', '2', 'loopback', 'loopback, 10.0.0.0/8, ::1, fd00::/8, 192.168.0.0/255.255.0.0'])('accepts TRUST_PROXY=%j', (value) => {
    expect(loadConfig({ TRUST_PROXY: value }).trustProxy).toBe(value);
  });

  it('refuses SHUTDOWN_DRAIN_MS not below SHUTDOWN_TIMEOUT_MS, naming both', () => {
    expect(configError({ SHUTDOWN_DRAIN_MS: '5000', SHUTDOWN_TIMEOUT_MS: '1000' }).message)
      .toBe('Invalid configuration: SHUTDOWN_DRAIN_MS (5000) must be below SHUTDOWN_TIMEOUT_MS (1000)');
    expect(loadConfig({ SHUTDOWN_DRAIN_MS: '999', SHUTDOWN_TIMEOUT_MS: '1000' }).shutdownDrainMs).toBe(999);
  });

  it('refuses a MAILBOX_TLS_CA_FILE that cannot be read, naming the variable', () => {
    expect(configError({ MAILBOX_TLS_CA_FILE: '/nonexistent.pem' }).message)
      .toBe('Invalid configuration: MAILBOX_TLS_CA_FILE /nonexistent.pem cannot be read (ENOENT)');
    expect(loadConfig({ MAILBOX_TLS_CA_FILE: __filename }).mailbox.tlsCaFile).toBe(__filename);
  });

  it('names every bad variable at once', () => {
    const message = configError({ PORT: 'x', REDIS_URL: 'http://nope', BODY_LIMIT: 'lots' }).message;
    expect(message).toContain('PORT');
    expect(message).toContain('REDIS_URL');
    expect(message).toContain('BODY_LIMIT');
  });

  it.each([
    ['NODE_ENV', 'staging'],
    ['LOG_LEVEL', 'loud'],
    ['API_TOKEN', 'short'],
    ['DATABASE_POOL_MAX', '0'],
  ])('refuses %s=%s, naming the variable', (name, value) => {
    expect(configError({ [name]: value }).message).toContain(name);
  });

  it.each(['1e3', '1.0', '+5', ' 5'])('reads integers as plain digits only: PORT=%j is refused', (value) => {
    expect(configError({ PORT: value }).message).toContain('PORT must be an integer');
    expect(loadConfig({ PORT: '1000' }).port).toBe(1000);
  });

  it('reads a switch as 1 or 0 (or true/false, yes/no, on/off), and says so of anything else', () => {
    for (const on of ['1', 'true', 'yes', 'on']) expect(loadConfig({ MAIL_REPLY_SUBADDRESS: on }).mailbox.replySubaddress).toBe(true);
    for (const off of ['0', 'false', 'no', 'off']) expect(loadConfig({ MAIL_REPLY_SUBADDRESS: off }).mailbox.replySubaddress).toBe(false);
    expect(configError({ MAIL_CATCHER: 'maybe' }).message).toContain('MAIL_CATCHER must be 1 or 0');
  });

  it('reads the limits of failed logins and verification attempts, and the log format', () => {
    expect(loadConfig({})).toMatchObject({
      logFormat: 'auto', loginFailures: { max: 10, windowSeconds: 600, banSeconds: 3600 }, verifyAttempts: { max: 20, windowSeconds: 600 },
    });
    expect(loadConfig({
      LOG_FORMAT: 'pretty', LOGIN_FAILURES_MAX: '0', LOGIN_FAILURES_WINDOW_SECONDS: '60', LOGIN_BAN_SECONDS: '86400', VERIFY_ATTEMPTS_MAX: '5', VERIFY_ATTEMPTS_WINDOW_SECONDS: '30',
    })).toMatchObject({
      logFormat: 'pretty', loginFailures: { max: 0, windowSeconds: 60, banSeconds: 86400 }, verifyAttempts: { max: 5, windowSeconds: 30 },
    });
  });

  it.each([
    ['LOG_FORMAT', 'fancy'],
    ['LOGIN_FAILURES_MAX', '-1'],
    ['LOGIN_FAILURES_MAX', 'ten'],
    ['LOGIN_FAILURES_WINDOW_SECONDS', '0'],
    ['LOGIN_BAN_SECONDS', '1.5'],
    ['VERIFY_ATTEMPTS_MAX', '0'],
    ['VERIFY_ATTEMPTS_WINDOW_SECONDS', 'x'],
  ])('refuses %s=%s, naming the variable', (name, value) => {
    expect(configError({ [name]: value }).message).toContain(name);
  });

  it('reads a Redis of one server, Sentinels or a cluster; BullMQ\'s prefix is hash-tagged on a cluster only', () => {
    expect(loadConfig({ QUEUE_PREFIX: 'hd' })).toMatchObject({ redis: { kind: 'single' }, queuePrefix: 'hd', bullmqPrefix: 'hd' });
    expect(loadConfig({ REDIS_SENTINELS: '10.0.0.1:26379, [::1]:26380', REDIS_SENTINEL_NAME: 'desk', REDIS_SENTINEL_PASSWORD: 's' })).toMatchObject({
      redis: { kind: 'sentinel', sentinels: [{ host: '10.0.0.1', port: 26379 }, { host: '::1', port: 26380 }], name: 'desk', sentinelPassword: 's' },
      bullmqPrefix: 'helpdesk',
    });
    expect(loadConfig({ REDIS_SENTINELS: 'a:1' })).toMatchObject({ redis: { name: 'mymaster' } });
    expect(loadConfig({ REDIS_CLUSTER_NODES: 'r1:7000,r2:7001', QUEUE_PREFIX: 'hd' })).toMatchObject({
      redis: { kind: 'cluster', nodes: [{ host: 'r1', port: 7000 }, { host: 'r2', port: 7001 }] }, queuePrefix: 'hd', bullmqPrefix: '{hd}',
    });
  });

  it.each([
    ['REDIS_SENTINELS', { REDIS_SENTINELS: 'sentinel-without-port' }],
    ['REDIS_CLUSTER_NODES', { REDIS_CLUSTER_NODES: 'r1:70000' }],
    ['REDIS_SENTINEL_NAME', { REDIS_SENTINELS: 'a:1', REDIS_SENTINEL_NAME: 'a b' }],
    ['not both', { REDIS_SENTINELS: 'a:1', REDIS_CLUSTER_NODES: 'b:2' }],
    ['does not have', { REDIS_CLUSTER_NODES: 'b:2', REDIS_URL: 'redis://127.0.0.1:6379/3' }],
  ])('refuses a bad Redis topology, saying %s', (words, env) => {
    expect(configError(env).message).toContain(words);
  });
});
