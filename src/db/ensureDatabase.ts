import * as mariadb from 'mariadb';
import { config } from '../config';

/** Creates the configured database if it does not exist (its name is validated by config.ts). */
export async function ensureDatabase(db = config().database): Promise<void> {
  const conn = await mariadb.createConnection({
    host: db.host, port: db.port, user: db.user, password: db.password, connectTimeout: db.connectTimeoutMs,
  });
  try {
    await conn.query(`CREATE DATABASE IF NOT EXISTS \`${db.name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  } finally {
    await conn.end();
  }
}
