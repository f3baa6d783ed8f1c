import * as mariadb from 'mariadb';
import IORedis from 'ioredis';
import { readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { likePrefix, testPrefix } from './testPrefix';

/** Marks a worker's database as created, migrated and seeded (name: helpdesk_t<run>_<worker>). */
export const preparedMarker = (name: string) => join(tmpdir(), `${name}.prepared`);

/** Test databases and Redis prefixes are named <TEST_PREFIX><run pid>_<worker> (helpdesk_t123_1). */
const nameOf = () => new RegExp(`^${testPrefix()}(\\d+)_\\d+$`);

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

export const serverUrl = () => new URL((process.env.TEST_DATABASE_SERVER ?? 'mariadb://root@127.0.0.1:3306').replace(/\/+$/, ''));
export const redisUrl = () => process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Drops the test databases and Redis keys of `which` runs: this run's own, or those of runs whose
 * process is gone (a run killed before its teardown).
 */
export async function dropTestResources(which: { run: string } | 'dead'): Promise<void> {
  const NAME = nameOf();
  const keep = (name: string) => {
    const m = NAME.exec(name);
    if (!m) return true;
    return which === 'dead' ? alive(Number(m[1])) : m[1] !== which.run;
  };
  const server = serverUrl();
  let conn: mariadb.Connection;
  try {
    conn = await mariadb.createConnection({
      host: server.hostname, port: Number(server.port || 3306), user: decodeURIComponent(server.username || 'root'),
      password: decodeURIComponent(server.password), connectTimeout: 5000,
    });
  } catch (err) {
    throw new Error(`Tests need MariaDB at ${server.host}: ${(err as Error).message}`);
  }
  try {
    const rows: Array<{ name: string }> = await conn.query('SELECT SCHEMA_NAME AS name FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE ?', [likePrefix(testPrefix())]);
    for (const { name } of rows) if (!keep(name)) await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
    for (const file of readdirSync(tmpdir()).filter((f) => f.endsWith('.prepared'))) {
      if (!keep(file.replace(/\.prepared$/, ''))) rmSync(join(tmpdir(), file), { force: true });
    }
  } finally {
    await conn.end();
  }

  const redis = new IORedis(redisUrl(), { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 3000 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${testPrefix()}*`, 'COUNT', 1000);
      cursor = next;
      const drop = keys.filter((k) => !keep(k.split(':')[0]));
      if (drop.length) await redis.del(...drop);
    } while (cursor !== '0');
  } catch (err) {
    throw new Error(`Tests need Redis at ${redisUrl()}: ${(err as Error).message}`);
  } finally {
    redis.disconnect();
  }
}
