import { randomBytes } from 'node:crypto';
import type { Transaction } from 'sequelize';
import { Brand, Department, DepartmentBrand, DepartmentEmail, DepartmentGroup, Group, Language, Permission, Setting } from '../db/models';
import { config, type Config } from '../config';
import { sequelize } from '../db/sequelize';
import { ticketConfigSeedSteps } from './ticketConfig';

/** Where to connect to a server listening on `host` (a wildcard address is reached on loopback). */
const connectHost = (host: string) => (host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host);

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

export const USER_SETTINGS: Record<string, () => string> = {
  ldap_enabled: () => '0',
  registration_captcha: () => '1',
  registration_enabled: () => '1',
  user_name_format: () => '1',
};

/**
 * The self-service settings object with the keys SupportPal's official client reads
 * (`GET /api/selfservice/settings`): comments on articles and ratings. Served for clients to read;
 * the API itself acts on none of them (comments are moderated as src/selfservice/comment.ts says).
 */
export const SELFSERVICE_SETTINGS: Record<string, () => string> = {
  comment_captcha: () => '1',
  comment_moderation: () => '1',
  comment_ordering: () => '0',
  comment_ratings: () => '1',
  comment_threshold: () => '0',
  comment_write: () => '0',
  comments_enabled: () => '1',
  rating_post: () => '0',
  ratings_enabled: () => '1',
};

/** Settings objects by scope; later areas add theirs here. */
export const SETTINGS: Record<string, Record<string, () => string>> = {
  core: CORE_SETTINGS,
  user: USER_SETTINGS,
  selfservice: SELFSERVICE_SETTINGS,
};

/**
 * Permissions by module (1 core, 2 user, 3 ticket, 4 self-service): code, name and the actions
 * the permission covers (view, create, update, delete).
 */
export const PERMISSIONS: Array<[module: number, code: string, name: string, actions: string]> = [
  [1, 'core.brands', 'Brands', 'vcud'], [1, 'core.ipbans', 'IP Bans', 'vcud'], [1, 'core.ipwhitelist', 'IP Whitelist', 'vcud'],
  [1, 'core.languages', 'Languages', 'vcud'], [1, 'core.spamrules', 'Spam Rules', 'vcud'], [1, 'core.settings', 'Core Settings', 'vu'],
  [2, 'user.users', 'Users', 'vcud'], [2, 'user.operators', 'Operators', 'vcud'], [2, 'user.organisations', 'Organisations', 'vcud'],
  [2, 'user.customfields', 'User Custom Fields', 'vcud'], [2, 'user.organisationcustomfields', 'Organisation Custom Fields', 'vcud'],
  [2, 'user.roles', 'Roles', 'vcud'], [2, 'user.settings', 'User Settings', 'vu'],
  [3, 'ticket.tickets', 'Tickets', 'vcud'], [3, 'ticket.departments', 'Departments', 'vcud'], [3, 'ticket.statuses', 'Statuses', 'vcud'],
  [3, 'ticket.priorities', 'Priorities', 'vcud'], [3, 'ticket.tags', 'Tags', 'vcud'], [3, 'ticket.cannedresponses', 'Canned Responses', 'vcud'],
  [3, 'ticket.filters', 'Filters', 'vcud'], [3, 'ticket.feedback', 'Feedback', 'vu'], [3, 'ticket.settings', 'Ticket Settings', 'vu'],
  [4, 'selfservice.types', 'Self-service Types', 'vcud'], [4, 'selfservice.categories', 'Categories', 'vcud'],
  [4, 'selfservice.articles', 'Articles', 'vcud'], [4, 'selfservice.tags', 'Self-service Tags', 'vcud'],
];

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

const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '::1']);
const LOCAL_URL = /^https?:\/\/(127\.0\.0\.1|localhost)(:\d+)?\/?$/i;

/**
 * What `npm start` says of brands that point at ports of this machine it no longer uses: the seed
 * gave the first brand the mail catcher's port and APP_URL of the first start, and a later start
 * with another MAIL_CATCHER_PORT or PORT (as a port in use tells one to do) left it sending to the
 * old port (its mail waits in retries, never caught) and linking to the old address.
 */
export async function stalePortWarnings(cfg: Config): Promise<string[]> {
  const brands = await Brand.findAll({ attributes: ['id', 'name', 'email_method', 'smtp_host', 'smtp_port', 'system_url'], order: [['id', 'ASC']] });
  const catcher = cfg.mailCatcher;
  const catcherHost = connectHost(catcher.host);
  const warnings: string[] = [];
  for (const b of brands) {
    const local = b.smtp_host !== null && (LOCAL_HOSTS.has(b.smtp_host) || b.smtp_host === catcherHost);
    // Port 25 is what the seed gives a brand without the catcher: a local MTA's, not a catcher's.
    if (catcher.enabled && b.email_method === 'smtp' && local && b.smtp_port !== catcher.port && b.smtp_port !== 25) {
      warnings.push(`Brand ${b.id} (${b.name}) sends its mail to ${b.smtp_host}:${b.smtp_port}, but the mail catcher listens on port ${catcher.port} now: `
        + `if that was the catcher's port, set the brand's (PUT /api/core/brand/${b.id} smtp_port=${catcher.port}) or start with MAIL_CATCHER_PORT=${b.smtp_port}.`);
    }
    const url = (b.system_url ?? '').replace(/\/+$/, '');
    if (LOCAL_URL.test(url) && url !== cfg.appUrl.replace(/\/+$/, '')) {
      warnings.push(`Brand ${b.id} (${b.name}) links to ${url} (its system_url), but this server is at ${cfg.appUrl} now: `
        + `set it (PUT /api/core/brand/${b.id} system_url=${cfg.appUrl}) if it was this server's address.`);
    }
  }
  return warnings;
}

/**
 * The first brand's values. Its URL is APP_URL (by default http://127.0.0.1:PORT). It sends mail
 * by SMTP to the local mail catcher when that runs (MAIL_CATCHER, on outside production), else to
 * port 25 of this machine; an administrator points it at a real server (PUT /api/core/brand/1).
 */
export function defaultBrand(cfg: Config) {
  const catcher = cfg.mailCatcher.enabled;
  return {
    name: 'Default Brand',
    enabled: 1,
    system_url: cfg.appUrl,
    default_email: 'support@example.com',
    global_email_header: '',
    global_email_footer: '',
    email_method: 'smtp',
    smtp_host: catcher ? connectHost(cfg.mailCatcher.host) : '127.0.0.1',
    smtp_port: catcher ? cfg.mailCatcher.port : 25,
    smtp_encryption: null,
  };
}

async function seedBrand(transaction: Transaction) {
  if ((await Brand.count({ transaction })) > 0) return;
  await Brand.create(defaultBrand(config()), { transaction });
}

async function seedPermissions(transaction: Transaction) {
  const have = new Set((await Permission.findAll({ transaction })).map((p) => p.code));
  const rows = PERMISSIONS.filter(([, code]) => !have.has(code)).map(([module_id, code, name, a]) => ({
    module_id, code, name, description: `${name}`,
    can_view: a.includes('v') ? 1 : 0, can_create: a.includes('c') ? 1 : 0, can_update: a.includes('u') ? 1 : 0, can_delete: a.includes('d') ? 1 : 0,
  }));
  if (rows.length) await Permission.bulkCreate(rows, { transaction });
}

/** The administrator operator group and a default user group (groups have no API of their own). */
async function seedGroups(transaction: Transaction) {
  if (!(await Group.findOne({ where: { type: 'operator' }, transaction }))) {
    await Group.create({ type: 'operator', name: 'Administrators', description: 'Full access to the help desk.', colour: '#e74c3c', administrator: 1 }, { transaction });
  }
  if (!(await Group.findOne({ where: { type: 'user' }, transaction }))) {
    await Group.create({ type: 'user', name: 'Registered', description: 'Users who registered an account.', colour: '#3498db', administrator: 0 }, { transaction });
  }
}

/** A first department of the default brand, with an email address, handled by the administrators. */
async function seedDepartment(transaction: Transaction) {
  if ((await Department.count({ transaction })) > 0) return;
  const brand = await Brand.findOne({ order: [['id', 'ASC']], transaction });
  const admins = await Group.findOne({ where: { type: 'operator', administrator: 1 }, order: [['id', 'ASC']], transaction });
  const dept = await Department.create({ name: 'General Enquiries', description: 'Questions of every kind.', order: 1, public: 1 }, { transaction });
  await DepartmentBrand.create({ department_id: dept.id, brand_id: brand!.id }, { transaction });
  if (admins) await DepartmentGroup.create({ department_id: dept.id, group_id: admins.id }, { transaction });
  await DepartmentEmail.create({ department_id: dept.id, brand_id: brand!.id, address: brand!.default_email ?? 'support@example.com' }, { transaction });
}

/** Steps run in order; later areas append theirs. */
export const seedSteps: Array<(t: Transaction) => Promise<void>> = [
  seedSettings, seedLanguages, seedBrand, seedPermissions, seedGroups, seedDepartment, ...ticketConfigSeedSteps,
];

export async function seed(): Promise<void> {
  await sequelize().transaction(async (t) => {
    for (const step of seedSteps) await step(t);
  });
}
