import type { QueryInterface } from 'sequelize';
import * as m001 from './001_core';
import * as m002 from './002_user';

export interface Migration {
  name: string;
  up(q: QueryInterface): Promise<void>;
  down(q: QueryInterface): Promise<void>;
}

/** Every migration, in the order it runs. A new migration is a new file, added at the end here. */
export const migrations: Migration[] = [m001, m002];
