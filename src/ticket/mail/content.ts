import { Op } from 'sequelize';
import { config } from '../../config';
import {
  Department, EmailTemplate, IncomingMail, TicketPriority, TicketStatus, Translation, type Brand, type Ticket, type TicketMessage, type User,
} from '../../db/models';
import { BY } from '../../db/models/TicketMessage';
import { readSettings } from '../../db/settings';
import { formattedName } from '../../user/people/presenter';
import { htmlToText } from '../../content/html';
import { oneLine, renderTemplate, richText, type TemplateContext } from './render';

/**
 * What a ticket mail says: the email template (the brand's own version when it has one, in the
 * recipient's language when translated) rendered with a context built from whitelisted fields.
 */

/** Translation record types (the `type` of the resources' TranslationSpecs; literal here so the mail worker loads no routers). */
const RECORD = { template: 'email_template', department: 'department', status: 'ticket_status', priority: 'ticket_priority' } as const;

/** Locales to try for a language code, most specific first: `pt_BR` → [`pt_BR`, `pt`]. */
export function localesOf(languageCode: string | null | undefined): string[] {
  const code = (languageCode ?? '').trim().replace('-', '_');
  if (!code || code === 'default') return [];
  const base = code.split('_')[0];
  return base && base !== code ? [code, base] : [code];
}

/**
 * The language the stored (untranslated) text of templates and names is written in: the system's
 * default language of the audience, the core settings `default_frontend_language` (users) and
 * `default_operator_language` (operators) that new people get, `en` (the shipped text's) unset.
 */
export async function storedLanguage(audience: 'user' | 'operator'): Promise<string> {
  const core = await readSettings('core');
  return (audience === 'operator' ? core.default_operator_language : core.default_frontend_language) || 'en';
}

/**
 * The locales to read a recipient's mail in: their own language, else the brand's default (unless
 * `default`: the system's), each most specific first. A language the stored text is written in
 * ends the list (its own translation, when there is one, else the stored text): a recipient who
 * reads that language never gets the brand default's translation.
 */
export async function recipientLocales(person: Pick<User, 'language_code'> | null, brand: Pick<Brand, 'default_language'>, audience: 'user' | 'operator'): Promise<string[]> {
  const stored = new Set(localesOf(await storedLanguage(audience)));
  const locales: string[] = [];
  for (const code of [person?.language_code, brand.default_language]) {
    const own = localesOf(code);
    locales.push(...own);
    if (own.some((l) => stored.has(l))) break;
  }
  return [...new Set(locales)];
}

/**
 * The template a mapping names, for a brand: a template of every brand (brand_id null) is
 * replaced by the brand's own version of the same name when it has one. Null when there is none.
 */
export async function templateFor(templateId: number | null | undefined, brandId: number): Promise<EmailTemplate | null> {
  if (!templateId || templateId < 1) return null;
  const template = await EmailTemplate.findByPk(templateId);
  if (!template || template.brand_id !== null) return template;
  return (await EmailTemplate.findOne({ where: { name: template.name, brand_id: brandId } })) ?? template;
}

/** The id of the shipped template of a name (every brand's: brand_id null), for a mail no mapping names. */
export async function shippedTemplateId(name: string): Promise<number | null> {
  const shipped = await EmailTemplate.findOne({ attributes: ['id'], where: { name, brand_id: null } });
  return shipped?.id ?? null;
}

/** Subject and contents of a template in the first of `locales` it is translated to (field by field), else as stored. */
export async function translatedTemplate(template: EmailTemplate, locales: string[]): Promise<{ subject: string; contents: string }> {
  const out = { subject: template.subject, contents: template.contents };
  if (!locales.length) return out;
  const rows = await Translation.findAll({
    attributes: ['locale', 'field', 'value'],
    where: { record_type: RECORD.template, record_id: template.id, locale: { [Op.in]: locales }, field: { [Op.in]: ['subject', 'contents'] } },
  });
  for (const field of ['subject', 'contents'] as const) {
    const best = locales.map((l) => rows.find((r) => r.locale === l && r.field === field)).find(Boolean);
    if (best?.value.trim()) out[field] = best.value;
  }
  return out;
}

/** Names of the ticket's department, status and priority in the first of `locales` translated, else as stored. */
async function ticketNames(ticket: Ticket, locales: string[]): Promise<{ department: string; status: string; priority: string }> {
  const [department, status, priority, rows] = await Promise.all([
    Department.findByPk(ticket.department_id, { attributes: ['id', 'name'] }),
    TicketStatus.findByPk(ticket.status_id, { attributes: ['id', 'name'] }),
    TicketPriority.findByPk(ticket.priority_id, { attributes: ['id', 'name'] }),
    locales.length ? Translation.findAll({
      attributes: ['record_type', 'record_id', 'locale', 'value'],
      where: {
        field: 'name', locale: { [Op.in]: locales },
        [Op.or]: [
          { record_type: RECORD.department, record_id: ticket.department_id },
          { record_type: RECORD.status, record_id: ticket.status_id },
          { record_type: RECORD.priority, record_id: ticket.priority_id },
        ],
      },
    }) : Promise.resolve([] as Translation[]),
  ]);
  const name = (type: string, id: number, fallback: string | undefined) =>
    locales.map((l) => rows.find((r) => r.record_type === type && r.record_id === id && r.locale === l)).find(Boolean)?.value ?? fallback ?? '';
  return {
    department: name(RECORD.department, ticket.department_id, department?.name),
    status: name(RECORD.status, ticket.status_id, status?.name),
    priority: name(RECORD.priority, ticket.priority_id, priority?.name),
  };
}

/** The frontend and operator panel addresses of a brand (as the ticket presenter builds them). */
export async function brandUrls(brand: Pick<Brand, 'system_url'>): Promise<{ frontend: string; operator: string }> {
  const core = await readSettings('core');
  const base = (brand.system_url || config().appUrl).replace(/\/+$/, '');
  const adminFolder = (core.admin_folder || 'admin').replace(/^\/+|\/+$/g, '');
  return { frontend: base, operator: `${base}/${adminFolder}` };
}

export const ticketFrontendUrl = (base: string, ticket: Pick<Ticket, 'number' | 'token'>) =>
  `${base}/tickets/view/${encodeURIComponent(ticket.number)}?token=${ticket.token}`;

export const feedbackUrl = (base: string, token: string) => `${base}/tickets/feedback/${encodeURIComponent(token)}`;

/** A person's fields a template may name; an operator's address only in mails to operators. */
export function person(u: User | null | undefined, withEmail: boolean): TemplateContext {
  if (!u) return {};
  return {
    firstname: u.firstname ?? '', lastname: u.lastname ?? '', formatted_name: formattedName(u), ...(withEmail ? { email: u.email } : {}),
  };
}

/** What a template names a message's author by once that person is deleted, when the address the message came from is unknown. */
export const DELETED_AUTHOR = 'Deleted user';

/**
 * A message's author for a template: the person, or once they are deleted (the message keeps no
 * `user_id`), the address the message was sent from when it came by mail (the ingestion ledger
 * keeps it), else DELETED_AUTHOR; so `{{ message.user.formatted_name }}` never renders empty. An
 * operator's address is shown only where a person's would be (mails to operators).
 */
async function authorOf(message: TicketMessage, author: User | null | undefined, toOperator: boolean): Promise<TemplateContext> {
  if (author) return person(author, toOperator || author.type !== 'operator');
  const withEmail = toOperator || message.by !== BY.OPERATOR;
  const line = withEmail ? await IncomingMail.findOne({
    attributes: ['id', 'from_address'], order: [['id', 'ASC']], where: {
      // The ticket it was filed into (a merged message keeps it as original_ticket_id): the ledger's index.
      ticket_id: { [Op.in]: [message.ticket_id, message.original_ticket_id ?? message.ticket_id] }, ticket_message_id: message.id, from_address: { [Op.ne]: null },
    },
  }) : null;
  const address = line?.from_address ?? null;
  return { firstname: '', lastname: '', formatted_name: address ?? DELETED_AUTHOR, ...(address ? { email: address } : {}) };
}

export interface ContextInput {
  audience: 'user' | 'operator';
  ticket: Ticket;
  brand: Brand;
  /** The ticket's user (an operator on an internal ticket). */
  owner: User | null;
  /** The operator the mail is to (operator mails), or the operator who wrote the message (user mails). */
  operator?: User | null;
  message?: TicketMessage | null;
  /** The author of `message`. */
  author?: User | null;
  feedbackToken?: string;
  locales: string[];
}

/**
 * The context of a ticket mail, from whitelisted fields only. Mails to users never carry the
 * operator panel's address, nor operators' email addresses.
 */
export async function mailContext(input: ContextInput): Promise<TemplateContext> {
  const { ticket, brand, audience } = input;
  const [urls, names] = await Promise.all([brandUrls(brand), ticketNames(ticket, input.locales)]);
  const toOperator = audience === 'operator';
  return {
    ticket: {
      id: ticket.id, number: ticket.number, subject: ticket.subject, frontend_url: ticketFrontendUrl(urls.frontend, ticket),
      ...(toOperator ? { operator_url: `${urls.operator}/ticket/view/${ticket.id}` } : {}),
      department: { name: names.department }, status: { name: names.status }, priority: { name: names.priority },
    },
    user: person(input.owner, true),
    operator: person(input.operator, toOperator),
    // The message's text is stored rich text (HTML or plain text); `message.user` is its author (not the ticket's `user`).
    message: input.message ? { text: richText(input.message.text), user: await authorOf(input.message, input.author, toOperator) } : {},
    brand: { name: brand.name, frontend_url: urls.frontend },
    feedback: input.feedbackToken ? { url: feedbackUrl(urls.frontend, input.feedbackToken) } : {},
  };
}

/** A template's subject, HTML and text filled from the context. */
export function renderMail(template: { subject: string; contents: string }, context: TemplateContext): { subject: string; html: string; text: string } {
  return {
    subject: oneLine(renderTemplate(template.subject, context, 'text')),
    html: renderTemplate(template.contents, context, 'html'),
    text: renderTemplate(htmlToText(template.contents), context, 'text'),
  };
}
