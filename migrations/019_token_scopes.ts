import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { timestamp } from './columns';

export const name = '019_token_scopes';

/**
 * API token scopes and expiry: `scopes` is a JSON array (`["ticket:write","user:read"]`), null for
 * full access (every token made before this migration keeps it); `expires_at` null: never.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.addColumn('api_tokens', 'scopes', { type: DataTypes.STRING(1024), allowNull: true });
  await q.addColumn('api_tokens', 'expires_at', timestamp());
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE api_tokens DROP COLUMN expires_at, DROP COLUMN scopes');
}
