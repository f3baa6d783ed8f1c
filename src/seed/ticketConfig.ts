import type { Transaction } from 'sequelize';
import { EMAIL_TEMPLATE_KEYS } from '../ticket/templateMapping';
import { DEFAULT_EMAIL_TEMPLATES, type EmailTemplateName } from './emailTemplates';
import {
  Channel, Department, EmailTemplate, FeedbackField, FeedbackForm, Setting, TicketPriority, TicketStatus,
} from '../db/models';

/**
 * Default ticket configuration: statuses, priorities, the ticket and channel settings, channels,
 * email templates (mapped in the first department) and a feedback form. Idempotent like the rest
 * of the seed: statuses, priorities and the feedback form only on an install that has none, the
 * other records and settings when missing by name; nothing an administrator edited is changed.
 */

/** SupportPal's defaults: `auto_close` is "close inactive tickets", so it belongs to the status that waits on the user. */
export const DEFAULT_STATUSES: Array<[name: string, colour: string, autoClose: 0 | 1]> = [
  ['Open', '#35a600', 0], ['In Progress', '#f39c12', 0], ['Awaiting Reply', '#3498db', 1], ['Resolved', '#7f8c8d', 0],
];
export const OPEN_STATUS = 'Open';
export const RESOLVED_STATUS = 'Resolved';

export const DEFAULT_PRIORITIES: Array<[name: string, colour: string]> = [
  ['Low', '#3498db'], ['Medium', '#f1c40f'], ['High', '#e67e22'], ['Urgent', '#e74c3c'],
];

/** The ticket settings other than the default statuses (their ids are known once the statuses exist). */
export const TICKET_SETTINGS: Record<string, string> = {
  allowed_files: 'jpg|jpeg|png|gif|bmp|webp|pdf|txt|log|csv|rtf|doc|docx|xls|xlsx|ppt|pptx|odt|ods|odp|xml|json|eml|msg|zip|rar|7z|gz|tar',
  inactive_close_time: '604800',
  ticket_notes_position: '0',
  ticket_number_format: '%N{7}',
  ticket_reply_order: '0',
  // SupportPal's: remind the user of a ticket in an auto-close status after 4 days without a reply (0: never).
  waiting_response_time: '345600',
};

export const DEFAULT_CHANNELS: Array<{ name: string; class: string; settings: Record<string, string> }> = [
  { name: 'Web', class: 'WebChannel', settings: { unauthenticated_users: '1', show_captcha: '1', show_related_articles: '1' } },
  { name: 'Email', class: 'EmailChannel', settings: { unauthenticated_users: '1', show_captcha: '0', show_related_articles: '0' } },
  { name: 'API', class: 'ApiChannel', settings: { unauthenticated_users: '1', show_captcha: '0', show_related_articles: '0' } },
];

/** The settings scope of a channel. */
export const channelScope = (channelId: number) => `channel.${channelId}`;

export const DEFAULT_FEEDBACK_FORM = {
  name: 'Customer satisfaction',
  description: 'Sent one day after a ticket is resolved; it can be answered for seven days.',
  expiry_time: 604800,
  time_after_resolved: 86400,
  fields: [
    ['What did we do well?', 9], ['What could we have done better?', 9], ['May we contact you about your feedback?', 0],
  ] as Array<[name: string, type: number]>,
};

async function seedStatuses(transaction: Transaction) {
  if ((await TicketStatus.count({ transaction })) > 0) return;
  await TicketStatus.bulkCreate(DEFAULT_STATUSES.map(([name, colour, auto_close], i) => ({ name, colour, auto_close, order: i + 1 })), { transaction });
}

async function seedPriorities(transaction: Transaction) {
  if ((await TicketPriority.count({ transaction })) > 0) return;
  await TicketPriority.bulkCreate(DEFAULT_PRIORITIES.map(([name, colour], i) => ({ name, colour, order: i + 1 })), { transaction });
}

async function missingSettings(scope: string, values: Record<string, string>, transaction: Transaction) {
  const have = new Set((await Setting.findAll({ where: { scope }, transaction })).map((s) => s.name));
  const rows = Object.entries(values).filter(([name]) => !have.has(name)).map(([name, value]) => ({ scope, name, value }));
  if (rows.length) await Setting.bulkCreate(rows, { transaction });
}

async function seedTicketSettings(transaction: Transaction) {
  const statuses = await TicketStatus.findAll({ order: [['order', 'ASC'], ['id', 'ASC']], transaction });
  const named = (name: string) => statuses.find((s) => s.name === name);
  const open = named(OPEN_STATUS) ?? statuses[0];
  const resolved = named(RESOLVED_STATUS) ?? statuses[statuses.length - 1];
  await missingSettings('ticket', {
    ...TICKET_SETTINGS,
    default_open_status: open ? String(open.id) : '',
    default_resolved_status: resolved ? String(resolved.id) : '',
  }, transaction);
}

async function seedChannels(transaction: Transaction) {
  for (const def of DEFAULT_CHANNELS) {
    const channel = (await Channel.findOne({ where: { name: def.name }, transaction }))
      ?? (await Channel.create({ name: def.name, class: def.class, enabled: 1 }, { transaction }));
    await missingSettings(channelScope(channel.id), def.settings, transaction);
  }
}

/** Templates for every brand (brand_id null) that are missing by name; the first department maps them when it maps none. */
async function seedEmailTemplates(transaction: Transaction) {
  const have = new Map((await EmailTemplate.findAll({ where: { brand_id: null }, transaction })).map((t) => [t.name, t.id]));
  const missing = (Object.keys(DEFAULT_EMAIL_TEMPLATES) as EmailTemplateName[]).filter((name) => !have.has(name));
  if (!missing.length) return;
  const created = await EmailTemplate.bulkCreate(missing.map((name) => ({ name, brand_id: null, ...DEFAULT_EMAIL_TEMPLATES[name] })), { transaction });
  for (const t of created) have.set(t.name, t.id);
  const first = await Department.findOne({ order: [['id', 'ASC']], transaction });
  if (first && !first.email_templates) {
    const mapping = Object.fromEntries(EMAIL_TEMPLATE_KEYS.map((key) => [key, have.get(key) ?? -1]));
    await first.update({ email_templates: JSON.stringify(mapping) }, { transaction });
  }
}

async function seedFeedbackForm(transaction: Transaction) {
  if ((await FeedbackForm.count({ transaction })) > 0) return;
  const template = await EmailTemplate.findOne({ where: { name: 'user_feedback_request', brand_id: null }, transaction });
  const { fields, ...values } = DEFAULT_FEEDBACK_FORM;
  const form = await FeedbackForm.create({ ...values, order: 1, condition_group_type: 0, email_template_id: template?.id ?? null }, { transaction });
  await FeedbackField.bulkCreate(fields.map(([name, type], i) => ({ form_id: form.id, name, type, order: i + 1 })), { transaction });
}

export const ticketConfigSeedSteps: Array<(t: Transaction) => Promise<void>> = [
  seedStatuses, seedPriorities, seedTicketSettings, seedChannels, seedEmailTemplates, seedFeedbackForm,
];
