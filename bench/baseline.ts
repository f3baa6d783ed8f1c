import * as mariadb from 'mariadb';
import { config } from '../src/config';
import { now } from '../src/db/entity';

/**
 * The floor under each read scenario: the statements its request runs, sent with the raw `mariadb`
 * driver over a pool of the same size as Sequelize's. No HTTP, no express, no ORM (models, type
 * casting, instances), no JSON: what is left is the database and the driver.
 *
 * Each operation runs the same SQL as the request, in the same shape: the ban check and the token
 * look-up first, as the middleware does, then count and page together (findAndCountAll), then the
 * embedded relations together (the `load` of the resource), then what depends on them (groups of
 * the user-group links). run.ts compares the statement counts and reports a difference loudly:
 * this file has to follow the app when the app changes what a request runs.
 */

/** Runs statements and counts them (the count of one operation is reported next to the request's). */
export interface Db {
  query<T = any>(sql: string, params?: unknown[]): Promise<T[]>;
}

export interface BaselineContext {
  tokenHash: string;
  showUserId: number;
  email: string;
  banIp: string;
}

export type BaselineOp = (db: Db, ctx: BaselineContext) => Promise<void>;

export function createPool(): mariadb.Pool {
  const db = config().database;
  return mariadb.createPool({
    host: db.host, port: db.port, user: db.user, password: db.password, database: db.name,
    connectionLimit: db.poolMax, connectTimeout: 5000,
  });
}

/** A Db over the pool that counts the statements sent through it. */
export function countingDb(pool: mariadb.Pool): Db & { statements: number } {
  const db = {
    statements: 0,
    query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
      db.statements++;
      return pool.query(sql, params) as Promise<T[]>;
    },
  };
  return db;
}

// The columns the models select (Sequelize names every attribute; `SELECT *` would read email_key too).
const USER_COLUMNS = 'id, created_at, updated_at, type, brand_id, firstname, lastname, email, password, email_verified, active, organisation_id, '
  + 'organisation_access_level, organisation_notifications, country, language_code, timezone, avatar, twofa_enabled, twofa_secret, '
  + 'twofa_token, twitter_id, twitter_handle, facebook_id';
/** Users embedded in organisations: the same without the password. */
const MEMBER_COLUMNS = USER_COLUMNS.replace(' password,', '');
const ORGANISATION_COLUMNS = 'id, created_at, updated_at, brand_id, owner_id, name, country, language_code, timezone, notes';
const BAN_COLUMNS = 'id, created_at, updated_at, ip, reason, event_user, event_operator, event_api, type, expiry';
const PAGE = 50;

const unique = (ids: Array<number | null>) => [...new Set(ids.filter((id): id is number => id !== null))];

/** refuseBanned, then authenticate (both run before every API route). */
async function guard(db: Db, ctx: BaselineContext) {
  await db.query(
    `SELECT EXISTS(SELECT 1 FROM ip_bans WHERE ip = ? AND event_api = 1 AND (type = 1 OR expiry IS NULL OR expiry > ?)) AS banned,
            EXISTS(SELECT 1 FROM ip_whitelist WHERE ip = ? AND event_api = 1) AS whitelisted`,
    ['127.0.0.1', now(), '127.0.0.1'],
  );
  await db.query('SELECT id, created_at, updated_at, name, token_hash, last_used_at FROM api_tokens WHERE token_hash = ?', [ctx.tokenHash]);
}

/** A page and the total, together (as findAndCountAll runs them). */
function countAndPage<T>(db: Db, table: string, columns: string, where: string, params: unknown[]) {
  const condition = where ? ` WHERE ${where}` : '';
  return Promise.all([
    db.query(`SELECT count(*) AS count FROM ${table}${condition}`, params),
    db.query<T>(`SELECT ${columns} FROM ${table}${condition} ORDER BY id ASC LIMIT ?, ?`, [...params, 0, PAGE]),
  ]);
}

/** loadCustomFieldValues: the values of the kind's fields for the owners (one join). */
const customFieldValues = (db: Db, kind: string, ownerIds: number[]) => db.query(
  `SELECT v.* FROM custom_field_values v JOIN custom_fields f ON f.id = v.field_id
   WHERE f.kind = ? AND v.owner_id IN (?) ORDER BY v.owner_id, v.field_id`,
  [kind, [...new Set(ownerIds)]],
);

/** loadPeople: phones, group links and custom field values (plus emails and organisations for show), then the groups. */
async function loadPeople(db: Db, users: Array<{ id: number; organisation_id: number | null }>, detail: boolean) {
  const ids = users.map((u) => u.id);
  if (!ids.length) return;
  const orgIds = unique(users.map((u) => u.organisation_id));
  const [, links] = await Promise.all([
    db.query('SELECT id, created_at, updated_at, user_id, number FROM user_phones WHERE user_id IN (?) ORDER BY id ASC', [ids]),
    db.query<{ group_id: number }>('SELECT user_id, group_id FROM user_groups WHERE user_id IN (?)', [ids]),
    customFieldValues(db, 'user', ids),
    detail ? db.query('SELECT id, created_at, updated_at, user_id, email FROM user_emails WHERE user_id IN (?) ORDER BY id ASC', [ids]) : null,
    detail && orgIds.length ? db.query(`SELECT ${ORGANISATION_COLUMNS} FROM organisations WHERE id IN (?)`, [orgIds]) : null,
  ]);
  const groupIds = unique(links.map((l) => l.group_id));
  if (groupIds.length) await db.query('SELECT id, created_at, updated_at, type, name, description, colour, administrator FROM `groups` WHERE id IN (?)', [groupIds]);
}

/** The baseline of each read scenario, by scenario key. */
export const baselines: Record<string, BaselineOp> = {
  async users(db, ctx) {
    await guard(db, ctx);
    const [, users] = await countAndPage<any>(db, 'users', USER_COLUMNS, 'type = ?', ['user']);
    await loadPeople(db, users, false);
  },
  async usersByEmail(db, ctx) {
    await guard(db, ctx);
    // The email filter: the primary address, or the owner of an additional one.
    const extra = await db.query<{ user_id: number }>('SELECT user_id FROM user_emails WHERE email = ?', [ctx.email]);
    const [where, params] = extra.length
      ? ['type = ? AND (email = ? OR id IN (?))', ['user', ctx.email, extra.map((e) => e.user_id)]]
      : ['type = ? AND email = ?', ['user', ctx.email]];
    const [, users] = await countAndPage<any>(db, 'users', USER_COLUMNS, where, params);
    await loadPeople(db, users, false);
  },
  async showUser(db, ctx) {
    await guard(db, ctx);
    const users = await db.query<any>(`SELECT ${USER_COLUMNS} FROM users WHERE type = ? AND id = ? LIMIT 1`, ['user', ctx.showUserId]);
    await loadPeople(db, users, true);
  },
  async organisations(db, ctx) {
    await guard(db, ctx);
    const [, orgs] = await countAndPage<{ id: number }>(db, 'organisations', ORGANISATION_COLUMNS, '', []);
    const ids = orgs.map((o) => o.id);
    if (!ids.length) return;
    await Promise.all([
      db.query(`SELECT ${MEMBER_COLUMNS} FROM users WHERE type = ? AND organisation_id IN (?) ORDER BY id ASC`, ['user', ids]),
      customFieldValues(db, 'organisation', ids),
      db.query('SELECT id, created_at, updated_at, organisation_id, domain FROM organisation_domains WHERE organisation_id IN (?) ORDER BY id ASC', [ids]),
    ]);
  },
  async ipBans(db, ctx) {
    await guard(db, ctx);
    await countAndPage(db, 'ip_bans', BAN_COLUMNS, '', []);
  },
  async ipBansByIp(db, ctx) {
    await guard(db, ctx);
    await countAndPage(db, 'ip_bans', BAN_COLUMNS, 'ip = ?', [ctx.banIp]);
  },
};
