import { randomBytes } from 'node:crypto';
import type { Transaction } from 'sequelize';
import { Brand, Language, Setting } from './models';
import { sequelize } from './sequelize';

/**
 * Default records every install ships with. Idempotent: it only adds what is missing, and never
 * changes a value an administrator may have edited.
 */
export const DEFAULT_LANGUAGES: Array<[code: string, name: string, enabled: 0 | 1]> = [
  ['en', 'English', 1], ['fr', 'Français', 1], ['de', 'Deutsch', 1], ['es', 'Español', 1],
  ['it', 'Italiano', 0], ['nl', 'Nederlands', 0], ['pt', 'Português', 0],
];

export const CORE_SETTINGS: Record<string, () => string> = {
  active_plugins: () => '',
  admin_folder: () => 'admin',
  date_format: () => 'd/m/Y',
  default_country: () => 'GB',
  default_frontend_language: () => 'en',
  default_operator_language: () => 'en',
  default_email: () => 'support@example.com',
  default_timezone: () => 'Europe/London',
  enable_ssl: () => '0',
  force_operator_ssl: () => '0',
  frontend_language: () => 'en',
  frontend_template: () => 'default',
  is_installed: () => '1',
  language_frontend_toggle: () => '1',
  language_operator_toggle: () => '1',
  maintenance_mode: () => '0',
  operator_language: () => 'en',
  operator_template: () => 'default',
  simpleauth_key: () => randomBytes(24).toString('hex'),
  time_format: () => 'H:i',
};

/** Settings objects by scope; later areas add theirs here. */
export const SETTINGS: Record<string, Record<string, () => string>> = {
  core: CORE_SETTINGS,
};

async function seedSettings(transaction: Transaction) {
  const existing = await Setting.findAll({ transaction });
  const have = new Set(existing.map((s) => `${s.scope}.${s.name}`));
  const rows = Object.entries(SETTINGS).flatMap(([scope, values]) =>
    Object.entries(values).filter(([name]) => !have.has(`${scope}.${name}`)).map(([name, value]) => ({ scope, name, value: value() })));
  if (rows.length) await Setting.bulkCreate(rows, { transaction });
}

async function seedLanguages(transaction: Transaction) {
  const have = new Set((await Language.findAll({ transaction })).map((l) => l.code));
  const rows = DEFAULT_LANGUAGES.filter(([code]) => !have.has(code)).map(([code, name, enabled]) => ({ code, name, enabled }));
  if (rows.length) await Language.bulkCreate(rows, { transaction });
}

async function seedBrand(transaction: Transaction) {
  if ((await Brand.count({ transaction })) > 0) return;
  await Brand.create({
    name: 'Default Brand',
    enabled: 1,
    system_url: 'http://127.0.0.1:3000',
    default_email: 'support@example.com',
    global_email_header: '',
    global_email_footer: '',
    email_method: 'smtp',
    smtp_host: '127.0.0.1',
    smtp_port: 25,
    smtp_encryption: null,
  }, { transaction });
}

/** Steps run in order; later areas append theirs. */
export const seedSteps: Array<(t: Transaction) => Promise<void>> = [seedSettings, seedLanguages, seedBrand];

export async function seed(): Promise<void> {
  await sequelize().transaction(async (t) => {
    for (const step of seedSteps) await step(t);
  });
}
