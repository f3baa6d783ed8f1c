import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { flag, id, ref, str, tableOptions, text, timestamp, timestamps } from './columns';

export const name = '001_core';

export async function up(q: QueryInterface): Promise<void> {
  await q.createTable('api_tokens', {
    id: id(), name: str(100, false), token_hash: { type: DataTypes.CHAR(64), allowNull: false, unique: true },
    last_used_at: timestamp(), ...timestamps(),
  }, tableOptions);

  await q.createTable('brands', {
    id: id(), name: str(255, false), enabled: flag(1), system_url: str(), frontend_logo: str(),
    frontend_template: { ...str(64, false), defaultValue: 'default' }, default_email: str(),
    global_email_header: text(), global_email_footer: text(),
    email_method: { ...str(16, false), defaultValue: 'smtp' }, smtp_host: str(), smtp_port: ref(true),
    smtp_encryption: str(8), smtp_requires_auth: flag(0), smtp_username: str(), smtp_password: str(),
    default_country: { ...str(64, false), defaultValue: 'default' }, default_timezone: { ...str(64, false), defaultValue: 'default' },
    date_format: { ...str(64, false), defaultValue: 'default' }, time_format: { ...str(64, false), defaultValue: 'default' },
    default_language: { ...str(64, false), defaultValue: 'default' },
    language_toggle: { type: DataTypes.INTEGER, allowNull: false, defaultValue: -1 }, ...timestamps(),
  }, tableOptions);
  await q.addIndex('brands', ['enabled']);

  await q.createTable('languages', {
    id: id(), name: str(100, false), code: { ...str(10, false), unique: true }, enabled: flag(1), ...timestamps(),
  }, tableOptions);
  await q.addIndex('languages', ['enabled']);

  await q.createTable('translations', {
    id: id(), record_type: str(32, false), record_id: ref(), locale: str(10, false), field: str(32, false),
    value: text(false), ...timestamps(),
  }, tableOptions);
  await q.addIndex('translations', ['record_type', 'record_id', 'locale', 'field'], { unique: true, name: 'translations_record_locale_field' });

  const events = { event_user: flag(1), event_operator: flag(1), event_api: flag(1) };
  await q.createTable('ip_bans', {
    id: id(), ip: str(45, false), reason: text(), ...events, type: flag(1), expiry: timestamp(), ...timestamps(),
  }, tableOptions);
  await q.addIndex('ip_bans', ['ip']);
  await q.addIndex('ip_bans', ['type', 'expiry']);

  await q.createTable('ip_whitelist', { id: id(), ip: str(45, false), description: text(), ...events, ...timestamps() }, tableOptions);
  await q.addIndex('ip_whitelist', ['ip']);

  await q.createTable('spam_rules', {
    id: id(), text: text(false), event_message: flag(1), event_comment: flag(1),
    type: { type: DataTypes.TINYINT.UNSIGNED, allowNull: false }, ...timestamps(),
  }, tableOptions);

  await q.createTable('settings', { id: id(), scope: str(32, false), name: str(64, false), value: text(false), ...timestamps() }, tableOptions);
  await q.addIndex('settings', ['scope', 'name'], { unique: true });
}

export async function down(q: QueryInterface): Promise<void> {
  for (const table of ['settings', 'spam_rules', 'ip_whitelist', 'ip_bans', 'translations', 'languages', 'brands', 'api_tokens']) {
    await q.dropTable(table);
  }
}
