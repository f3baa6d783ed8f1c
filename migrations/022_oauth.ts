import type { QueryInterface } from 'sequelize';

export const name = '022_oauth';

/**
 * OAuth2 (XOAUTH2/OAUTHBEARER) for department mailboxes and brands' SMTP (src/oauth): how the
 * account logs in (`auth_type` password or oauth2), the client and its provider, and the tokens
 * with their state. Secrets (client secret, refresh and access tokens) are stored encrypted
 * (crypto/secrets.ts), hence the room: a Microsoft refresh token runs to a few kilobytes.
 * One ALTER per table: every column in one table copy.
 */
const COLUMNS: Array<[string, string]> = [
  ['auth_type', "VARCHAR(16) NOT NULL DEFAULT 'password'"],
  ['oauth_provider', 'VARCHAR(16) NULL'],
  ['oauth_client_id', 'VARCHAR(255) NULL'],
  ['oauth_client_secret', 'VARCHAR(2048) NULL'],
  ['oauth_tenant', 'VARCHAR(255) NULL'],
  ['oauth_token_url', 'VARCHAR(2048) NULL'],
  ['oauth_scope', 'VARCHAR(1024) NULL'],
  ['oauth_refresh_token', 'TEXT NULL'],
  ['oauth_access_token', 'TEXT NULL'],
  ['oauth_expires_at', 'INTEGER UNSIGNED NULL'],
  ['oauth_last_refreshed_at', 'INTEGER UNSIGNED NULL'],
  ['oauth_last_error', 'TEXT NULL'],
  ['oauth_last_error_at', 'INTEGER UNSIGNED NULL'],
];

const TABLES = ['department_emails', 'brands'];

export async function up(q: QueryInterface): Promise<void> {
  for (const table of TABLES) {
    await q.sequelize.query(`ALTER TABLE ${table} ${COLUMNS.map(([c, type]) => `ADD COLUMN ${c} ${type}`).join(', ')}`);
  }
}

export async function down(q: QueryInterface): Promise<void> {
  for (const table of TABLES) {
    await q.sequelize.query(`ALTER TABLE ${table} ${COLUMNS.map(([c]) => `DROP COLUMN ${c}`).join(', ')}`);
  }
}
