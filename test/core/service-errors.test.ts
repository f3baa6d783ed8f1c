/**
 * Start-up and readiness errors name the service, where it is (no password), why and what to
 * check; a process that loses Redis says so once, and once again when it is back.
 */
import IORedis from 'ioredis';
import * as mariadb from 'mariadb';
import { Sequelize } from 'sequelize';
import { startupErrorMessage } from '../../src/lib/exitOnStartupError';
import { config } from '../../src/config';
import { logger } from '../../src/logger';
import { noteRedisReady, redisIsDown, watchRedis } from '../../src/redis/outage';
import { mariadbProblem, withoutPassword } from '../../src/lib/serviceErrors';
import { PrivateRedis } from '../helpers/privateRedis';
import { freePort } from '../helpers/ports';
import { waitFor } from '../helpers/smtp';

const connectError = (opts: mariadb.ConnectionConfig) => mariadb.createConnection({ connectTimeout: 3000, ...opts }).then(
  (c) => { void c.end(); throw new Error('connected'); },
  (err: unknown) => err,
);

describe('MariaDB unreachable', () => {
  it('names MariaDB, DATABASE_URL without its password, the reason and what to check', async () => {
    const port = await freePort();
    const url = `mariadb://app:s3cret@127.0.0.1:${port}/helpdesk`;
    const err = await connectError({ host: '127.0.0.1', port });
    expect(mariadbProblem(err, url)).toBe(`MariaDB at mariadb://app:****@127.0.0.1:${port}/helpdesk (DATABASE_URL) is unreachable (connection refused): `
      + 'check that MariaDB is running and listening there, or set DATABASE_URL.');
    expect(mariadbProblem(err, url)).not.toContain('s3cret');
  });

  it('says so for sequelize\'s wrapped error too, as the start-up line', async () => {
    const port = await freePort();
    const url = `mariadb://root@127.0.0.1:${port}/helpdesk`;
    const s = new Sequelize(url, { logging: false });
    const err = await s.authenticate().then(() => null, (e: unknown) => e);
    await s.close();
    const previous = process.env.DATABASE_URL;
    process.env.DATABASE_URL = url;
    try {
      expect(startupErrorMessage(err)).toBe(`Startup failed: MariaDB at ${url} (DATABASE_URL) is unreachable (connection refused): `
        + 'check that MariaDB is running and listening there, or set DATABASE_URL.');
    } finally {
      process.env.DATABASE_URL = previous;
    }
  });

  it('tells an unknown host and a refused login apart', async () => {
    const unknown = await connectError({ host: 'nonexistent.invalid', port: 3306 });
    expect(mariadbProblem(unknown, 'mariadb://root@nonexistent.invalid/x')).toContain('is unreachable (host not found)');
    const denied = await connectError({ host: '127.0.0.1', port: 3306, user: `nobody_${process.pid}`, password: 'wrong' });
    expect(mariadbProblem(denied, 'mariadb://nobody:wrong@127.0.0.1/x')).toBe(
      'MariaDB at mariadb://nobody:****@127.0.0.1/x (DATABASE_URL) refused the login: check the user and password in DATABASE_URL.');
  });

  it('is not blamed for another service\'s error', async () => {
    const redis = new IORedis(`redis://127.0.0.1:${await freePort()}`, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    const err = await redis.connect().then(() => null, (e: unknown) => e);
    redis.disconnect();
    expect(err).toBeTruthy();
    expect(mariadbProblem(err, 'mariadb://root@127.0.0.1/x')).toBeNull();
  });

  it('hides a password in a URL', () => {
    expect(withoutPassword('redis://:pw@h:1')).toBe('redis://:****@h:1');
    expect(withoutPassword('not a url')).toBe('(an invalid URL)');
  });
});

describe('Redis lost and back', () => {
  let own: PrivateRedis | undefined;
  let client: IORedis | undefined;
  let errors = 0;

  afterAll(async () => {
    client?.disconnect();
    await own?.stop();
  });

  it('is said once while every retry fails, and once when it answers again', async () => {
    const port = await freePort();
    own = new PrivateRedis(port);
    await own.start();
    const errorLog = jest.spyOn(logger, 'error');
    const infoLog = jest.spyOn(logger, 'info');
    try {
      const c = new IORedis(own.url, { retryStrategy: () => 20, maxRetriesPerRequest: null });
      client = c;
      watchRedis(c); // the lines name the configured Redis (REDIS_URL), whichever connection lost it
      c.on('error', () => { errors += 1; });
      await waitFor(() => c.status === 'ready', 10000, 'the connection');
      await own.stop();
      await waitFor(() => errors >= 10, 20000, 'ten failed reconnections');
      expect(redisIsDown()).toBe(true);
      const outages = errorLog.mock.calls.filter(([, msg]) => msg === 'Redis is unreachable; retrying until it answers');
      expect(outages).toHaveLength(1);
      expect(outages[0][0]).toEqual({
        problem: `Redis at ${withoutPassword(config().redisUrl)} (REDIS_URL) is unreachable (connection refused): check that Redis is running and listening there, or set REDIS_URL.`,
      });

      await own.start();
      await waitFor(() => infoLog.mock.calls.some(([, msg]) => msg === 'Redis answers again'), 20000, 'the line saying Redis is back');
      expect(redisIsDown()).toBe(false);
      noteRedisReady(); // a second connection becoming ready: nothing more to say
      expect(infoLog.mock.calls.filter(([, msg]) => msg === 'Redis answers again')).toHaveLength(1);
    } finally {
      errorLog.mockRestore();
      infoLog.mockRestore();
    }
  });
});
