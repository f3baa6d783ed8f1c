import { Op } from 'sequelize';
import { EmailTemplate } from '../db/models';
import { equals, type Filter } from '../http/listQuery';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { pick } from '../lib/serialize';
import type { TranslationSpec } from '../translations';
import { Joi, field } from '../lib/validation';
import { templateProblem } from '../ticket/mail/render';

/**
 * Email templates (beyond the spec): the mails of the help desk, which departments map by id
 * (`email_templates`) and feedback forms name. They ship with the install and can be listed,
 * shown and edited (subject and contents, per language too), not created or deleted. The merge
 * fields in them (`{{ ticket.number }}`) are kept as written; mail rendering fills them, and only
 * them: a subject or contents with what it would send as written (Twig's tags and comments, a `{{`
 * without its `}}`: templateProblem) is refused.
 */

export const EMAIL_TEMPLATE_FIELDS = ['id', 'brand_id', 'name', 'description', 'subject', 'contents', 'created_at', 'updated_at'] as const;

export const serializeEmailTemplate = (t: EmailTemplate) => pick(t, EMAIL_TEMPLATE_FIELDS);

/** A template the renderer would send part of as written (Twig's `{% if %}`, an unclosed `{{`) is refused: `field` names it. */
const renderable = (field: string) => (value: string) => {
  const problem = templateProblem(value, field);
  if (problem) throw new Error(problem);
  return value;
};

export const EMAIL_TEMPLATE_TRANSLATIONS: TranslationSpec = {
  type: 'email_template', key: 'template_id', fields: ['subject', 'contents'], multiline: ['contents'], max: { contents: 1_000_000 },
  rules: { subject: templateProblem, contents: templateProblem },
};

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
  updateSchema: Joi.object({ subject: field.string(255).custom(renderable('subject')), contents: contents().custom(renderable('contents')) }),
  serialize: serializeEmailTemplate,
};

export const emailTemplateRouter = resourceRouter(emailTemplateResource);
