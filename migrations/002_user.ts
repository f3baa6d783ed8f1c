import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { fk, flag, id, ref, str, tableOptions, text, timestamp, timestamps } from './columns';

export const name = '002_user';

const pivot = (a: [string, string], b: [string, string]) => ({
  [a[0]]: { ...fk(a[1]), primaryKey: true },
  [b[0]]: { ...fk(b[1]), primaryKey: true },
});

/** Users and operators, organisations, groups, roles, permissions, custom fields, departments, outbox. */
export async function up(q: QueryInterface): Promise<void> {
  await q.createTable('organisations', {
    id: id(), brand_id: fk('brands', 'RESTRICT'), owner_id: ref(true), name: str(255, false), country: str(2),
    language_code: str(10), timezone: str(64), notes: text(), ...timestamps(),
  }, tableOptions);
  for (const c of ['brand_id', 'name', 'owner_id', 'created_at', 'updated_at']) await q.addIndex('organisations', [c]);

  await q.createTable('users', {
    id: id(),
    type: { type: DataTypes.STRING(8), allowNull: false },
    // No ON UPDATE action: MariaDB refuses one on a column that a generated column (email_key) reads.
    brand_id: { ...fk('brands', 'RESTRICT', true), onUpdate: 'RESTRICT' },
    firstname: str(), lastname: str(), email: str(255, false), password: str(),
    email_verified: flag(0), active: flag(1),
    organisation_id: fk('organisations', 'SET NULL', true),
    organisation_access_level: { type: DataTypes.TINYINT.UNSIGNED, allowNull: true },
    organisation_notifications: flag(1),
    country: str(2), language_code: str(10), timezone: str(64), avatar: str(),
    twofa_enabled: flag(0), twofa_secret: str(), twofa_token: str(),
    twitter_id: str(64), twitter_handle: str(64), facebook_id: str(64),
    ...timestamps(),
  }, tableOptions);
  // One account per email: users per brand, operators across the help desk.
  await q.sequelize.query("ALTER TABLE users ADD COLUMN email_key VARCHAR(300) AS (CONCAT(type, ':', IFNULL(brand_id, 0), ':', email)) PERSISTENT, ADD UNIQUE INDEX users_email_key (email_key)");
  for (const c of [['type', 'brand_id'], ['type', 'email'], ['firstname'], ['lastname'], ['organisation_id'], ['active'], ['email_verified'], ['country'], ['language_code'], ['created_at'], ['updated_at']]) {
    await q.addIndex('users', c);
  }
  await q.addConstraint('organisations', { type: 'foreign key', fields: ['owner_id'], references: { table: 'users', field: 'id' }, onDelete: 'SET NULL', onUpdate: 'CASCADE', name: 'organisations_owner_fk' });

  await q.createTable('user_emails', { id: id(), user_id: fk('users'), email: str(255, false), ...timestamps() }, tableOptions);
  await q.addIndex('user_emails', ['email']);
  await q.addIndex('user_emails', ['user_id', 'email'], { unique: true });
  await q.createTable('user_phones', { id: id(), user_id: fk('users'), number: str(20, false), ...timestamps() }, tableOptions);
  await q.addIndex('user_phones', ['number']);
  await q.addIndex('user_phones', ['user_id']);

  await q.createTable('organisation_domains', { id: id(), organisation_id: fk('organisations'), domain: str(255, false), ...timestamps() }, tableOptions);
  await q.addIndex('organisation_domains', ['domain']);
  await q.addIndex('organisation_domains', ['organisation_id']);

  await q.createTable('groups', {
    id: id(), type: str(8, false), name: str(255, false), description: text(), colour: str(16), administrator: flag(0), ...timestamps(),
  }, tableOptions);
  await q.addIndex('groups', ['type']);
  await q.createTable('user_groups', pivot(['user_id', 'users'], ['group_id', 'groups']), tableOptions);
  await q.addIndex('user_groups', ['group_id']);

  await q.createTable('permissions', {
    id: id(), code: { ...str(64, false), unique: true }, inherit_id: ref(true), module_id: ref(), name: str(255, false),
    can_view: flag(1), can_create: flag(0), can_update: flag(0), can_delete: flag(0), description: text(), ...timestamps(),
  }, tableOptions);
  await q.createTable('roles', { id: id(), name: str(255, false), slug: { ...str(255, false), unique: true }, description: text(), ...timestamps() }, tableOptions);
  await q.createTable('role_permissions', pivot(['role_id', 'roles'], ['permission_id', 'permissions']), tableOptions);
  await q.addIndex('role_permissions', ['permission_id']);
  await q.createTable('role_groups', pivot(['role_id', 'roles'], ['group_id', 'groups']), tableOptions);
  await q.addIndex('role_groups', ['group_id']);

  await q.createTable('custom_fields', {
    id: id(), kind: str(16, false), name: str(255, false), description: text(),
    type: { type: DataTypes.TINYINT.UNSIGNED, allowNull: false },
    order: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    required: flag(0), public: flag(1), encrypted: flag(0), locked: flag(0), purge: flag(0),
    depends_on_field_id: fk('custom_fields', 'SET NULL', true), depends_on_option_id: ref(true), ...timestamps(),
  }, tableOptions);
  await q.addIndex('custom_fields', ['kind', 'order']);
  await q.createTable('custom_field_options', {
    id: id(), field_id: fk('custom_fields'), value: str(255, false), order: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 }, ...timestamps(),
  }, tableOptions);
  await q.addIndex('custom_field_options', ['field_id']);
  await q.createTable('custom_field_brands', pivot(['field_id', 'custom_fields'], ['brand_id', 'brands']), tableOptions);
  await q.addIndex('custom_field_brands', ['brand_id']);
  // Values of user, organisation (and later ticket) fields; owner_id is the record of the field's kind.
  await q.createTable('custom_field_values', { id: id(), field_id: fk('custom_fields'), owner_id: ref(), value: text(), ...timestamps() }, tableOptions);
  await q.addIndex('custom_field_values', ['field_id', 'owner_id'], { unique: true });
  await q.addIndex('custom_field_values', ['owner_id']);
  await q.sequelize.query('CREATE INDEX custom_field_values_field_value ON custom_field_values (field_id, value(191))');

  await q.createTable('departments', {
    id: id(), name: str(255, false), description: text(), order: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    parent_id: fk('departments', 'RESTRICT', true), public: flag(1), registered_only: flag(0),
    ticket_number_format: str(), default_assignedto: ref(true),
    notify_frontend_ticket: flag(1), notify_email_ticket: flag(1), notify_operators: flag(1), disable_user_email_replies: flag(0),
    email_templates: text(), ...timestamps(),
  }, tableOptions);
  for (const c of ['parent_id', 'public', 'registered_only']) await q.addIndex('departments', [c]);
  await q.createTable('department_brands', pivot(['department_id', 'departments'], ['brand_id', 'brands']), tableOptions);
  await q.addIndex('department_brands', ['brand_id']);
  await q.createTable('department_groups', pivot(['department_id', 'departments'], ['group_id', 'groups']), tableOptions);
  await q.addIndex('department_groups', ['group_id']);
  await q.createTable('operator_departments', pivot(['user_id', 'users'], ['department_id', 'departments']), tableOptions);
  await q.addIndex('operator_departments', ['department_id']);
  await q.createTable('department_emails', {
    id: id(), department_id: fk('departments'), brand_id: fk('brands', 'RESTRICT'), address: str(255, false),
    type: { type: DataTypes.TINYINT.UNSIGNED, allowNull: false, defaultValue: 0 },
    protocol: { type: DataTypes.TINYINT.UNSIGNED, allowNull: false, defaultValue: 0 },
    server: str(), username: str(), password: str(), port: ref(true), encryption: str(8),
    consume_all: flag(0), delete_downloaded: flag(0), ...timestamps(),
  }, tableOptions);
  await q.addIndex('department_emails', ['department_id']);
  await q.addIndex('department_emails', ['address']);

  // Single-use tokens sent by mail (verification); only their hash is kept.
  await q.createTable('user_tokens', {
    id: id(), user_id: fk('users'), purpose: str(32, false), token_hash: { type: DataTypes.CHAR(64), allowNull: false, unique: true },
    expires_at: timestamp(false), used_at: timestamp(), ...timestamps(),
  }, tableOptions);
  await q.addIndex('user_tokens', ['user_id', 'purpose']);

  // Side effects written in the same transaction as their data, published to BullMQ after commit.
  await q.createTable('outbox', {
    // job_key: random, part of the BullMQ job id, so a job id is never reused by another database
    // (one recreated, or another install) that shares the Redis.
    id: id(), job_key: { type: DataTypes.CHAR(16), allowNull: false, unique: true }, queue: str(32, false), name: str(64, false), payload: text(false),
    published_at: timestamp(), processed_at: timestamp(), failed_at: timestamp(), created_at: timestamp(false),
  }, tableOptions);
  await q.addIndex('outbox', ['published_at', 'id']);
  await q.addIndex('outbox', ['processed_at', 'failed_at', 'published_at']);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.removeConstraint('organisations', 'organisations_owner_fk');
  for (const table of [
    'outbox', 'user_tokens', 'department_emails', 'operator_departments', 'department_groups', 'department_brands', 'departments',
    'custom_field_values', 'custom_field_brands', 'custom_field_options', 'custom_fields', 'role_groups', 'role_permissions', 'roles',
    'permissions', 'user_groups', 'groups', 'organisation_domains', 'user_phones', 'user_emails', 'users', 'organisations',
  ]) await q.dropTable(table);
}
