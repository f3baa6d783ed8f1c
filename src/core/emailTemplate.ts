import { Op } from 'sequelize';
import { EmailTemplate } from '../db/models';
import { equals, type Filter } from '../http/listQuery';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { pick } from '../lib/serialize';
import type { TranslationSpec } from '../translations';
import { Joi, field } from '../lib/validation';

/**
 * Email templates (beyond the spec): the mails of the help desk, which departments map by id
 * (`email_templates`) and feedback forms name. They ship with the install and can be listed,
 * shown and edited (subject and contents, per language too), not created or deleted. The merge
 * fields in them (`{{ ticket.number }}`) are kept as written; mail rendering fills them.
 */

export const EMAIL_TEMPLATE_FIELDS = ['id', 'brand_id', 'name', 'description', 'subject', 'contents', 'created_at', 'updated_at'] as const;

export const serializeEmailTemplate = (t: EmailTemplate) => pick(t, EMAIL_TEMPLATE_FIELDS);

export const EMAIL_TEMPLATE_TRANSLATIONS: TranslationSpec = { type: 'email_template', key: 'template_id', fields: ['subject', 'contents'], multiline: ['contents'], max: { contents: 1_000_000 } };

const filters: Record<string, Filter> = {
  /** The templates that apply to a brand: its own and those of every brand (brand_id null). */
  brand_id: { schema: field.id(), where: (brandId: number) => ({ [Op.or]: [{ brand_id: brandId }, { brand_id: null }] }) },
  name: equals('name', field.string(64)),
};

/** Contents kept as written (markup and spacing); blank is missing. */
const contents = () => Joi.string().max(1_000_000).custom((value: string, helpers) => (value.trim() ? value : helpers.error('any.required')));

export const emailTemplateResource: ResourceDef<EmailTemplate> = {
  path: '/emailtemplate',
  model: EmailTemplate,
  label: 'email template',
  actions: ['list', 'show', 'update'],
  sortable: ['name', 'brand_id', 'created_at', 'updated_at'],
  filters,
  translations: EMAIL_TEMPLATE_TRANSLATIONS,
  updateSchema: Joi.object({ subject: field.string(255), contents: contents() }),
  serialize: serializeEmailTemplate,
};

export const emailTemplateRouter = resourceRouter(emailTemplateResource);
