import * as mariadb from 'mariadb';
import IORedis from 'ioredis';

/**
 * Once per run: checks that MariaDB and Redis answer (with a message that says which does not),
 * and drops the previous run's test databases so every run starts from a fresh install.
 */
export default async function globalSetup(): Promise<void> {
  const server = new URL((process.env.TEST_DATABASE_SERVER ?? 'mariadb://root@127.0.0.1:3306').replace(/\/+$/, ''));
  let conn: mariadb.Connection;
  try {
    conn = await mariadb.createConnection({
      host: server.hostname, port: Number(server.port || 3306), user: decodeURIComponent(server.username || 'root'),
      password: decodeURIComponent(server.password), connectTimeout: 5000,
    });
  } catch (err) {
    throw new Error(`Tests need MariaDB at ${server.host}: ${(err as Error).message}`);
  }
  const rows: Array<{ name: string }> = await conn.query("SELECT SCHEMA_NAME AS name FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE 'helpdesk\\_test\\_%'");
  for (const { name } of rows) {
    if (/^helpdesk_test_\d+$/.test(name)) await conn.query(`DROP DATABASE \`${name}\``);
  }
  await conn.end();

  const redis = new IORedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 3000 });
  try {
    await redis.connect();
    // Old jobs of earlier runs would be picked up by this run's workers.
    for (const pattern of ['helpdesk_test_*']) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        if (keys.length) await redis.del(...keys);
      } while (cursor !== '0');
    }
  } catch (err) {
    throw new Error(`Tests need Redis at ${process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'}: ${(err as Error).message}`);
  } finally {
    redis.disconnect();
  }
}
