import {
  Article, ArticleAttachment, ArticleComment, Brand, CannedResponse, CaughtMail, Channel, CustomField, CustomFieldOption,
  CustomFieldValue, Department, DepartmentEmail, EmailTemplate, FeedbackField, FeedbackForm, Group, IncomingMail, IpBan,
  IpWhitelist, Language, MailDelivery, Organisation, OutboxEntry, Permission, Role, SelfServiceCategory, SelfServiceTag,
  SelfServiceType, SlaPlan, SlaPlanTarget, SpamRule, Ticket, TicketAttachment, TicketFeedback, TicketFeedbackValue,
  TicketFilter, TicketFilterCondition, TicketMessage, TicketPriority, TicketStatus, TicketTag, Upload, User, UserEmail,
  UserPhone, Webhook, WebhookDelivery,
} from '../../db/models';
import { EVENT_NAMES } from '../../events';
import type { ResourceDef, View } from '../../http/resource';
import { BRAND_FIELDS } from '../../core/brand';
import { EMAIL_TEMPLATE_FIELDS } from '../../core/emailTemplate';
import { IPBAN_FIELDS } from '../../core/ipban';
import { IPWHITELIST_FIELDS } from '../../core/ipwhitelist';
import { LANGUAGE_FIELDS } from '../../core/language';
import { SPAM_RULE_FIELDS } from '../../core/spamrule';
import { WEBHOOK_FIELDS } from '../../core/webhook';
import { CUSTOM_FIELD_FIELDS, CUSTOM_FIELD_OPTION_FIELDS, OPTION_TRANSLATIONS } from '../../customfields/fields';
import { INCOMING_MAIL_FIELDS } from '../../mailbox/resource';
import { ATTACHMENT_FIELDS } from '../../selfservice/attachment';
import { CATEGORY_FIELDS } from '../../selfservice/category';
import { COMMENT_FIELDS } from '../../selfservice/comment';
import { TAG_FIELDS as SELFSERVICE_TAG_FIELDS, TAG_TRANSLATIONS as SELFSERVICE_TAG_TRANSLATIONS } from '../../selfservice/tag';
import { LIST_OMITS as TYPE_LIST_OMITS, TYPE_FIELDS } from '../../selfservice/type';
import { CATEGORY_TRANSLATIONS, TYPE_SUMMARY_FIELDS, TYPE_TRANSLATIONS } from '../../selfservice/typesAndCategories';
import { TICKET_ATTACHMENT_FIELDS } from '../../ticket/attachment';
import { CANNED_RESPONSE_FIELDS, CANNED_RESPONSE_LIST_FIELDS } from '../../ticket/cannedResponse';
import { CHANNEL_FIELDS } from '../../ticket/channel';
import { DEPARTMENT_FIELDS, DEPARTMENT_TRANSLATIONS, EMAIL_TEMPLATE_KEYS } from '../../ticket/department';
import { DEPARTMENT_EMAIL_FIELDS } from '../../ticket/departmentEmail';
import {
  FEEDBACK_FIELDS, FEEDBACK_FIELD_TRANSLATIONS, FEEDBACK_FORM_FIELDS, FEEDBACK_FORM_FIELD_FIELDS, FEEDBACK_FORM_TRANSLATIONS, FEEDBACK_VALUE_FIELDS,
} from '../../ticket/feedback';
import { FILTER_FIELDS } from '../../ticket/filter';
import { MESSAGE_FIELDS } from '../../ticket/messages/presenter';
import { PRIORITY_FIELDS, PRIORITY_TRANSLATIONS } from '../../ticket/priority';
import { SLA_PLAN_FIELDS, SLA_PLAN_TRANSLATIONS } from '../../ticket/slaplan';
import { STATUS_FIELDS, STATUS_TRANSLATIONS } from '../../ticket/status';
import { TAG_FIELDS as TICKET_TAG_FIELDS, TAG_TRANSLATIONS as TICKET_TAG_TRANSLATIONS } from '../../ticket/tag';
import { OPERATOR_FIELDS } from '../../ticket/tickets/presenter';
import { OPERATOR_GROUP_FIELDS, GROUP_FIELDS } from '../../user/groupFields';
import { CREATE_OMITS, ORGANISATION_FIELDS, PERSON_FIELDS, USER_ONLY, USER_SUMMARY_FIELDS } from '../../user/people/presenter';
import { ROLE_FIELDS } from '../../user/role';
import {
  ANY, FLAG, INT, STR, array, column, columns, extend, nullable, object, picked, translated, withPivot, type Json,
} from './schema';

/**
 * The records the resources present, one builder per resource (by its mounted path), mirroring
 * its presenter: the presenter's own field list and the model's column types, plus what the
 * presenter computes or embeds. test/http/openapi-responses.test.ts checks each against real
 * responses, both ways (a field missing here, or here and not in the response, fails it).
 */

/** Builds the record of a resource for a view; `def` is the resource behind the route. */
export type RecordBuilder = (view: View, def: ResourceDef<any, any, any>) => Json;

// ---------------------------------------------------------------------------------------------
// Records embedded in several responses (each as its presenter builds it).

/** src/oauth/settings.ts oauthView: the OAuth2 fields of a brand or a department address, secrets masked. */
const oauthView = (model: typeof Brand | typeof DepartmentEmail): Json => ({
  ...columns(model, ['auth_type', 'oauth_provider', 'oauth_client_id']),
  oauth_client_secret: nullable(STR),
  oauth_tenant: column(model, 'oauth_tenant'),
  oauth_token_url: nullable(STR),
  oauth_scope: column(model, 'oauth_scope'),
  oauth_refresh_token: nullable(STR),
  oauth_state: nullable(object({
    expires_at: column(model, 'oauth_expires_at'), last_refreshed_at: column(model, 'oauth_last_refreshed_at'),
    last_error: column(model, 'oauth_last_error'), last_error_at: column(model, 'oauth_last_error_at'),
  })),
});

/** core/brand.ts presentBrand (SMTP login masked, as a string, when embedded without the core scope). */
const brand = () => object({ ...columns(Brand, BRAND_FIELDS), ...oauthView(Brand) });

/** user/people/presenter.ts serializeUserSummary. */
const userSummary = () => extend(picked(User, USER_SUMMARY_FIELDS), { formatted_name: STR });

/** customfields/values.ts serializeCustomFieldValue. */
const customFieldValue = (ownerKey: string) => object({
  id: column(CustomFieldValue, 'id'), field_id: column(CustomFieldValue, 'field_id'), [ownerKey]: column(CustomFieldValue, 'owner_id'),
  value: column(CustomFieldValue, 'value'), created_at: column(CustomFieldValue, 'created_at'), updated_at: column(CustomFieldValue, 'updated_at'),
});

const groupOf = (fields: readonly string[]) => picked(Group, fields);

/** storage/uploads.ts serializeUpload: the attachment's name, type and times, the human size. */
const upload = () => nullable(object({
  id: column(Upload, 'id'), hash: column(Upload, 'hash'), filename: STR, folder: STR, mime: STR,
  size: { type: 'string', description: 'Human readable (`12.5 KB`).' }, created_at: INT, updated_at: INT,
}));

const ticketAttachment = () => extend(picked(TicketAttachment, TICKET_ATTACHMENT_FIELDS), { upload: upload() });
const articleAttachment = () => extend(picked(ArticleAttachment, ATTACHMENT_FIELDS), { upload: upload() });

const EMAIL_LIST: Json = { ...array(STR), description: 'Email addresses.' };

// ---------------------------------------------------------------------------------------------
// People

/** user/people/presenter.ts serializePerson. */
function person(view: View, operator: boolean): Json {
  const fields = PERSON_FIELDS.filter((k) => !(operator && USER_ONLY.has(k)) && !(view === 'create' && CREATE_OMITS.has(k)));
  const phone = object({ ...columns(UserPhone, ['id', 'user_id', 'number', 'created_at', 'updated_at']) });
  const props: Json = {
    ...columns(User, fields),
    formatted_name: STR,
    phonenumbers: array(phone),
    ...(operator ? {} : { customfields: array(customFieldValue('user_id')) }),
    groups: array(withPivot(groupOf(OPERATOR_GROUP_FIELDS), ['user_id', 'group_id'])),
  };
  if (!operator && view !== 'list') {
    props.organisation = nullable(picked(Organisation, ORGANISATION_FIELDS));
    props.additional_emails = array(picked(UserEmail, ['id', 'user_id', 'email', 'created_at', 'updated_at']));
  }
  return object(props);
}

/** customfields/fields.ts: the shared custom field, the kind's columns and `present`, its options. */
function customField(kind: 'user' | 'organisation' | 'ticket'): Json {
  const base = extend(picked(CustomField, CUSTOM_FIELD_FIELDS), {
    ...columns(CustomField, ['depends_on_field_id', 'depends_on_option_id']),
    brand: { ...array(INT), description: 'Brand ids (none: every brand).' },
  });
  if (kind === 'ticket') return extend(base, { purge: column(CustomField, 'purge'), depts: { ...array(INT), description: 'Department ids (none: every department).' } });
  return extend(base, { options: array(translated(picked(CustomFieldOption, CUSTOM_FIELD_OPTION_FIELDS), OPTION_TRANSLATIONS)) });
}

/** user/permission.ts serializePermission. */
const permission = () => object({
  ...columns(Permission, ['id', 'inherit_id', 'module_id', 'name']),
  slug: { ...object({ view: FLAG, create: FLAG, update: FLAG, delete: FLAG }), description: 'Which actions the permission covers.' },
  ...columns(Permission, ['description', 'created_at', 'updated_at']),
});

// ---------------------------------------------------------------------------------------------
// Tickets

const status = () => translated(picked(TicketStatus, STATUS_FIELDS), STATUS_TRANSLATIONS);
const priority = () => translated(picked(TicketPriority, PRIORITY_FIELDS), PRIORITY_TRANSLATIONS);
const ticketTag = () => translated(picked(TicketTag, TICKET_TAG_FIELDS), TICKET_TAG_TRANSLATIONS);

/** ticket/department.ts serializeDepartment. */
const departmentBase = () => object({
  ...columns(Department, DEPARTMENT_FIELDS),
  email_templates: {
    ...object(Object.fromEntries(EMAIL_TEMPLATE_KEYS.map((k) => [k, INT]))),
    description: 'Email template id per template key (-1: none).',
  },
  ...columns(Department, ['created_at', 'updated_at']),
});

/** ticket/departmentEmail.ts serializeDepartmentEmail: protocol and encryption as codes, the password masked. */
const departmentEmail = () => object({
  ...columns(DepartmentEmail, DEPARTMENT_EMAIL_FIELDS),
  protocol: { type: 'integer', description: 'The protocol code.' },
  encryption: { type: 'integer', description: 'The encryption code.' },
  password: nullable(STR),
  ...oauthView(DepartmentEmail),
});

/** ticket/slaplan.ts serializeSlaPlan. */
const slaPlan = () => object({
  ...columns(SlaPlan, SLA_PLAN_FIELDS),
  schedule: array(object({ day: INT, start: { type: 'string', description: '`HH:MM`' }, end: { type: 'string', description: '`HH:MM`' } })),
  targets: array(picked(SlaPlanTarget, ['priority_id', 'first_reply', 'resolution'])),
  ...columns(SlaPlan, ['created_at', 'updated_at']),
});

/** ticket/tickets/presenter.ts operatorSummary (assigned, watching). */
const operatorSummary = () => extend(picked(User, OPERATOR_FIELDS), { formatted_name: STR });

/** ticket/tickets/presenter.ts serializeTicket. */
function ticket(): Json {
  const own = columns(Ticket, [
    'id', 'number', 'department_id', 'department_email_id', 'brand_id', 'channel_id', 'user_id', 'status_id', 'priority_id',
    'sla_plan_id', 'subject', 'due_time', 'resolved_time',
  ]);
  return object({
    ...own,
    cc: EMAIL_LIST,
    ...columns(Ticket, ['locked', 'merged', 'internal', 'created_at', 'updated_at', 'deleted_at']),
    frontend_url: STR,
    operator_url: STR,
    token: column(Ticket, 'token'),
    department: nullable(translated(extend(departmentBase(), { parent: nullable(INT) }), DEPARTMENT_TRANSLATIONS)),
    channel: nullable(picked(Channel, CHANNEL_FIELDS)),
    user: nullable(userSummary()),
    status: nullable(status()),
    priority: nullable(priority()),
    slaplan: nullable(translated(slaPlan(), SLA_PLAN_TRANSLATIONS)),
    ...columns(Ticket, ['reply_due_time', 'resolve_due_time', 'reopened_time', 'last_reply_time', 'merged_into_id']),
    tags: array(withPivot(ticketTag(), ['ticket_id', 'tag_id'])),
    assigned: array(operatorSummary()),
    watching: array(operatorSummary()),
    customfields: array(customFieldValue('ticket_id')),
    linked: { ...array(INT), description: 'Ids of linked tickets.' },
  });
}

/** ticket/messages/presenter.ts serializeMessage (`extra` on forwards only). */
const message = () => object({
  ...columns(TicketMessage, MESSAGE_FIELDS),
  ...columns(TicketMessage, ['pinned', 'original_ticket_id']),
  cc: EMAIL_LIST,
  extra: object({
    to_address: nullable(EMAIL_LIST), cc_address: nullable(EMAIL_LIST), bcc_address: nullable(EMAIL_LIST),
    subject: nullable(STR), from_address: nullable(STR),
  }),
  user: nullable(userSummary()),
  attachments: array(ticketAttachment()),
}, ['extra']);

/** ticket/feedback.ts: the feedback, its form (translated, with its fields) and its answers. */
const feedback = () => object({
  ...columns(TicketFeedback, FEEDBACK_FIELDS),
  form: nullable(translated(extend(picked(FeedbackForm, FEEDBACK_FORM_FIELDS), {
    fields: array(translated(picked(FeedbackField, FEEDBACK_FORM_FIELD_FIELDS), FEEDBACK_FIELD_TRANSLATIONS)),
  }), FEEDBACK_FORM_TRANSLATIONS)),
  values: array(picked(TicketFeedbackValue, FEEDBACK_VALUE_FIELDS)),
});

/** ticket/filter.ts: list items carry the counts only; the other views add groups and conditions. */
function filter(view: View): Json {
  const base = extend(picked(TicketFilter, FILTER_FIELDS), { ticket_count: { ...nullable(INT), description: 'Open tickets the filter matches for the operator given.' } });
  if (view === 'list') return base;
  return extend(base, {
    groups: array(withPivot(groupOf(OPERATOR_GROUP_FIELDS), ['filter_id', 'group_id'])),
    conditions: array(object({
      type: column(TicketFilterCondition, 'group_type'),
      rules: array(object({
        item: column(TicketFilterCondition, 'item'),
        field_id: column(TicketFilterCondition, 'field_id'),
        operator: column(TicketFilterCondition, 'operator'),
        value: { type: ['string', 'integer', 'null'], description: 'Ids, flags, dates and hours as integers; text as text.' },
      }, ['field_id'])),
    })),
  });
}

/** ticket/cannedResponse.ts: list items are the spec's other shape (tags as a string of names). */
function cannedResponse(view: View): Json {
  if (view === 'list') {
    const { created_at, updated_at, ...rest } = columns(CannedResponse, CANNED_RESPONSE_LIST_FIELDS);
    return object({ ...rest, tags: { type: 'string', description: 'Tag names, comma-separated.' }, created_at, updated_at });
  }
  return object({
    ...columns(CannedResponse, CANNED_RESPONSE_FIELDS),
    tags: array(picked(TicketTag, TICKET_TAG_FIELDS)),
    groups: array(withPivot(groupOf(OPERATOR_GROUP_FIELDS), ['response_id', 'group_id'])),
  });
}

/** ticket/department.ts: the department, its addresses, operator groups and operators. */
const department = () => extend(departmentBase(), {
  emails: array(departmentEmail()),
  groups: array(withPivot(groupOf(OPERATOR_GROUP_FIELDS), ['department_id', 'group_id'])),
  operators: array(withPivot(object({
    ...columns(User, ['id', 'firstname', 'lastname', 'email']), formatted_name: STR, avatar: column(User, 'avatar'),
  }), ['department_id', 'user_id'])),
});

// ---------------------------------------------------------------------------------------------
// Self-service

const typeSummary = () => translated(picked(SelfServiceType, TYPE_SUMMARY_FIELDS), TYPE_TRANSLATIONS);

/** selfservice/category.ts serializeCategory: `parent_id` is named `parent`. */
const categoryBase = () => object(Object.fromEntries(CATEGORY_FIELDS.map((k) => [k === 'parent_id' ? 'parent' : k, column(SelfServiceCategory, k)])));

/** selfservice/article/presenter.ts serializeArticle. */
const article = () => object({
  ...columns(Article, ['id', 'author_id', 'title', 'slug', 'excerpt', 'text', 'published', 'published_at', 'protected', 'pinned', 'created_at', 'updated_at']),
  frontend_url: { ...nullable(STR), description: 'Null while the article is in no type.' },
  categories: array(withPivot(translated(categoryBase(), CATEGORY_TRANSLATIONS), ['article_id', 'category_id'])),
  types: array(withPivot(typeSummary(), ['article_id', 'type_id', 'views'])),
  tags: array(withPivot(translated(picked(SelfServiceTag, SELFSERVICE_TAG_FIELDS), SELFSERVICE_TAG_TRANSLATIONS), ['article_id', 'tag_id'])),
  attachments: array(articleAttachment()),
});

// ---------------------------------------------------------------------------------------------
// Core

/** core/mail.ts: an outbox entry of the mail queue and what became of it. */
const mail = () => object({
  id: column(OutboxEntry, 'id'),
  type: column(OutboxEntry, 'name'),
  payload: { ...ANY, description: 'The job\'s payload (ids, never secrets).' },
  status: { type: 'string', enum: ['queued', 'sent', 'failed', 'skipped', 'bounced'] },
  recipients: {
    ...nullable(column(MailDelivery, 'recipients')),
    description: 'Every recipient of the envelope (To, Cc, Bcc), comma-separated; past 1024 characters cut between two addresses, ending `and <n> more`.',
  },
  subject: nullable(column(MailDelivery, 'subject')),
  message_id: nullable(column(MailDelivery, 'message_id')),
  smtp_response: nullable(column(MailDelivery, 'smtp_response')),
  error: { ...nullable(column(MailDelivery, 'error')), description: 'The last error; of a mail sent, the recipients the SMTP server refused and why (null: none).' },
  attempts: INT,
  queued_at: column(OutboxEntry, 'created_at'),
  published_at: column(OutboxEntry, 'published_at'),
  sent_at: nullable(INT),
  failed_at: nullable(INT),
  created_at: column(OutboxEntry, 'created_at'),
  updated_at: INT,
});

/** mailcatcher/resource.ts serializeCaughtMail: `from` and `to` are the SMTP envelope's. */
const caughtMail = () => object({
  id: column(CaughtMail, 'id'), from: column(CaughtMail, 'mail_from'), to: EMAIL_LIST,
  ...columns(CaughtMail, ['subject', 'message_id', 'headers', 'text', 'html', 'size', 'created_at', 'updated_at']),
});

/** core/webhook.ts: `secret` is shown once, in the create response. */
const webhook = (view: View) => extend(picked(Webhook, WEBHOOK_FIELDS), {
  events: array({ type: 'string', enum: ['*', ...EVENT_NAMES] }),
  ...(view === 'create' ? { secret: { ...nullable(STR), description: 'The signing secret: shown in this response only.' } } : {}),
});

const delivery = () => object({
  ...columns(WebhookDelivery, ['id', 'webhook_id', 'event_id']),
  event: column(WebhookDelivery, 'event_name'),
  delivery: { ...column(WebhookDelivery, 'uuid'), description: 'The `X-Helpdesk-Delivery` id.' },
  ...columns(WebhookDelivery, ['status', 'attempts', 'response_code', 'error', 'last_attempt_at', 'delivered_at', 'created_at', 'updated_at']),
});

// ---------------------------------------------------------------------------------------------

/**
 * Component name and builder per resource, by the resource's path under /api. Translations that
 * `present()` adds (ResourceDef.translations) are added by the caller, from the definition itself.
 */
export const RECORDS: Record<string, { name: string; build: RecordBuilder }> = {
  'core/brand': { name: 'Brand', build: brand },
  'core/ipban': { name: 'IpBan', build: () => picked(IpBan, IPBAN_FIELDS) },
  'core/ipwhitelist': { name: 'IpWhitelistEntry', build: () => picked(IpWhitelist, IPWHITELIST_FIELDS) },
  'core/language': { name: 'Language', build: () => picked(Language, LANGUAGE_FIELDS) },
  'core/spamrule': { name: 'SpamRule', build: () => picked(SpamRule, SPAM_RULE_FIELDS) },
  'core/emailtemplate': { name: 'EmailTemplate', build: () => picked(EmailTemplate, EMAIL_TEMPLATE_FIELDS) },
  'core/webhook': { name: 'Webhook', build: webhook },
  'core/webhook/:webhook/delivery': { name: 'WebhookDelivery', build: delivery },
  'core/mail': { name: 'Mail', build: mail },
  'core/mailcatcher': { name: 'CaughtMail', build: caughtMail },

  'user/user': { name: 'User', build: (view) => person(view, false) },
  'user/operator': { name: 'Operator', build: (view) => person(view, true) },
  'user/organisation': {
    name: 'Organisation',
    build: () => extend(picked(Organisation, ORGANISATION_FIELDS), {
      users: array(userSummary()), customfields: array(customFieldValue('organisation_id')), domains: { ...array(STR), description: 'Email domains of the organisation.' },
    }),
  },
  'user/organisationcustomfield': { name: 'OrganisationCustomField', build: () => customField('organisation') },
  'user/customfield': { name: 'UserCustomField', build: () => customField('user') },
  'user/role': { name: 'Role', build: () => extend(picked(Role, ROLE_FIELDS), {
    permissions: array(withPivot(permission(), ['role_id', 'permission_id'])),
    groups: array(withPivot(groupOf(OPERATOR_GROUP_FIELDS), ['role_id', 'group_id'])),
  }) },
  'user/permission': { name: 'Permission', build: permission },
  'user/usergroup': { name: 'UserGroup', build: () => groupOf(GROUP_FIELDS) },
  'user/operatorgroup': { name: 'OperatorGroup', build: () => groupOf(OPERATOR_GROUP_FIELDS) },

  'ticket/ticket': { name: 'Ticket', build: ticket },
  'ticket/message': { name: 'Message', build: message },
  'ticket/forward': { name: 'Message', build: message },
  'ticket/attachment': { name: 'TicketAttachment', build: ticketAttachment },
  'ticket/department': { name: 'Department', build: department },
  'ticket/department/:department/email': { name: 'DepartmentEmail', build: departmentEmail },
  'ticket/status': { name: 'TicketStatus', build: () => picked(TicketStatus, STATUS_FIELDS) },
  'ticket/priority': { name: 'TicketPriority', build: () => picked(TicketPriority, PRIORITY_FIELDS) },
  'ticket/tag': { name: 'TicketTag', build: () => picked(TicketTag, TICKET_TAG_FIELDS) },
  'ticket/cannedresponse': { name: 'CannedResponse', build: cannedResponse },
  'ticket/feedback': { name: 'TicketFeedback', build: feedback },
  'ticket/slaplan': { name: 'SlaPlan', build: slaPlan },
  'ticket/filter': { name: 'TicketFilter', build: filter },
  'ticket/customfield': { name: 'TicketCustomField', build: () => customField('ticket') },
  'ticket/customfield/:customfield/option': { name: 'TicketCustomFieldOption', build: () => picked(CustomFieldOption, CUSTOM_FIELD_OPTION_FIELDS) },
  'ticket/incomingmail': { name: 'IncomingMail', build: () => picked(IncomingMail, INCOMING_MAIL_FIELDS) },

  'selfservice/type': {
    name: 'SelfServiceType',
    build: (view) => {
      const fields = TYPE_FIELDS.filter((k) => !(view === 'list' && TYPE_LIST_OMITS.has(k)));
      return object({ ...columns(SelfServiceType, fields), brand: nullable(brand()) });
    },
  },
  'selfservice/tag': { name: 'SelfServiceTag', build: () => picked(SelfServiceTag, SELFSERVICE_TAG_FIELDS) },
  'selfservice/category': { name: 'SelfServiceCategory', build: () => extend(categoryBase(), { type: nullable(typeSummary()) }) },
  'selfservice/article': { name: 'Article', build: article },
  'selfservice/attachment': { name: 'ArticleAttachment', build: articleAttachment },
  'selfservice/comment': { name: 'ArticleComment', build: () => picked(ArticleComment, COMMENT_FIELDS) },
};
