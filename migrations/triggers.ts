import type { QueryInterface } from 'sequelize';

/** Triggers by name: each one's definition after `CREATE TRIGGER <name>`. */
export type TriggerSql = Record<string, string>;

export async function createTriggers(q: QueryInterface, triggers: TriggerSql): Promise<void> {
  for (const [name, sql] of Object.entries(triggers)) await q.sequelize.query(`CREATE TRIGGER ${name} ${sql}`);
}

export async function dropTriggers(q: QueryInterface, triggers: TriggerSql): Promise<void> {
  for (const name of Object.keys(triggers)) await q.sequelize.query(`DROP TRIGGER IF EXISTS ${name}`);
}
