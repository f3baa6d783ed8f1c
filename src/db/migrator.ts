import * as mariadb from 'mariadb';
import { Umzug, SequelizeStorage } from 'umzug';
import { config } from '../config';
import type { QueryInterface } from 'sequelize';
import { migrations } from '../../migrations';
import { logger } from '../logger';
import type { Sequelize } from 'sequelize-typescript';
import { migrationSequelize, sequelize } from './sequelize';

export function migrator(s: Sequelize = sequelize()) {
  return new Umzug<QueryInterface>({
    migrations: migrations.map((m) => ({ name: m.name, up: ({ context }) => m.up(context), down: ({ context }) => m.down(context) })),
    context: s.getQueryInterface(),
    storage: new SequelizeStorage({ sequelize: s, tableName: 'migrations' }),
    logger: { info: (m) => logger.info(m), warn: (m) => logger.warn(m), error: (m) => logger.error(m), debug: (m) => logger.debug(m) },
  });
}

/**
 * Applies every pending migration. A named lock, held on a connection of its own (a pooled one
 * could be handed back and keep it), keeps two processes from migrating at once.
 */
export async function migrate(): Promise<void> {
  const db = config().database;
  const lock = await mariadb.createConnection({ host: db.host, port: db.port, user: db.user, password: db.password, database: db.name });
  try {
    const [row] = await lock.query('SELECT GET_LOCK(?, 60) AS got', [`migrate_${db.name}`]);
    if (!row || Number(row.got) !== 1) throw new Error('Could not take the migration lock within 60 seconds');
    const s = migrationSequelize();
    try {
      await migrator(s).up();
    } finally {
      await s.close();
    }
  } finally {
    await lock.end();
  }
}
