import { Op, type Transaction } from 'sequelize';
import { FeedbackField, FeedbackForm, TicketFeedback, TicketFeedbackValue } from '../db/models';
import { ValidationError, invalid } from '../errors';
import { equals, langParam, type Filter } from '../http/listQuery';
import { loadById, loadMany } from '../db/load';
import { resourceRouter, type ReadContext, type ResourceDef } from '../http/resource';
import { pick } from '../lib/serialize';
import { presentTranslated, type TranslationSpec } from '../translations';
import { Joi, field, toFlag } from '../lib/validation';
import { TYPE } from '../customfields/values';

/**
 * Ticket feedback: the feedback requests of resolved tickets (created by the ticket flow, not by
 * the API), their rating and the answers to the fields of their form. List, show (the spec's
 * sample: `data` is an array of one record) and update (rating and answers).
 */

export const FEEDBACK_FIELDS = [
  'id', 'ticket_id', 'form_id', 'rating', 'token', 'fields_answered', 'expiry_time', 'created_at', 'updated_at',
] as const;
export const FEEDBACK_FORM_FIELDS = [
  'id', 'name', 'description', 'order', 'email_template_id', 'expiry_time', 'time_after_resolved', 'condition_group_type',
  'created_at', 'updated_at',
] as const;
export const FEEDBACK_FORM_FIELD_FIELDS = ['id', 'form_id', 'name', 'type', 'created_at', 'updated_at'] as const;
export const FEEDBACK_VALUE_FIELDS = ['id', 'feedback_id', 'field_id', 'value', 'created_at', 'updated_at'] as const;

export const FEEDBACK_FORM_TRANSLATIONS: TranslationSpec = { type: 'feedback_form', key: 'form_id', fields: ['name', 'description'] };
export const FEEDBACK_FIELD_TRANSLATIONS: TranslationSpec = { type: 'feedback_field', key: 'field_id', fields: ['name'] };

/** Ratings: 0 bad, 1 good, 2 neutral. */
export const RATINGS = [0, 1, 2] as const;


const rating = () => Joi.number().integer().valid(...RATINGS);

/** `values[<feedback field id>]=answer`: an object keyed by field id; an empty answer removes it. */
const valueMap = () => Joi.any().custom((value) => {
  if (value === '' || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new Error('The values must be an array keyed by feedback field id (values[<id>]=answer).');
  const out: Record<string, string | null> = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (!/^\d{1,10}$/.test(key)) throw new Error(`The selected values.${key} is invalid.`);
    if (v === null || v === '') out[key] = null;
    else if (typeof v === 'number' || typeof v === 'boolean') out[key] = String(typeof v === 'boolean' ? Number(v) : v);
    else if (typeof v === 'string') {
      if (v.length > 65535) throw new Error(`The values.${key} may not be greater than 65535 characters.`);
      out[key] = v.trim() === '' ? null : v;
    } else throw new Error(`The values.${key} must be a string.`);
  }
  return out;
});

/** An answer as its field's type takes it: a Boolean or Checkbox `1`/`0`, a Date a UNIX timestamp, text as it is. */
function typedAnswer(type: number, name: string, answer: string | null): string | null {
  if (answer === null) return null;
  if (type === TYPE.BOOLEAN || type === TYPE.CHECKBOX) {
    const flag = toFlag(answer.trim());
    if (flag === null) throw new ValidationError(`The ${name} field must be true or false.`);
    return String(flag);
  }
  if (type === TYPE.DATE && !/^\d{1,10}$/.test(answer.trim())) throw new ValidationError(`The ${name} must be a date as a UNIX timestamp (an integer).`);
  return type === TYPE.DATE ? answer.trim() : answer;
}

/** Stores the answers (each key a field of the feedback's form) and counts the fields answered. */
async function saveValues(feedback: TicketFeedback, values: Record<string, string | null>, transaction: Transaction) {
  const fieldIds = Object.keys(values).map(Number);
  if (!fieldIds.length) return;
  const fields = new Map((await FeedbackField.findAll({
    attributes: ['id', 'type'], where: { form_id: feedback.form_id, id: { [Op.in]: fieldIds } }, transaction,
  })).map((f) => [f.id, f]));
  const unknown = Object.keys(values).find((key) => !fields.has(Number(key)));
  if (unknown !== undefined) throw invalid(`values.${unknown}`);
  for (const id of fieldIds) values[id] = typedAnswer(fields.get(id)!.type, `values.${id}`, values[id]);
  const cleared = fieldIds.filter((id) => values[id] === null);
  const answered = fieldIds.filter((id) => values[id] !== null);
  if (cleared.length) await TicketFeedbackValue.destroy({ where: { feedback_id: feedback.id, field_id: { [Op.in]: cleared } }, transaction });
  if (answered.length) {
    await TicketFeedbackValue.bulkCreate(answered.map((field_id) => ({ feedback_id: feedback.id, field_id, value: values[field_id]! })), {
      transaction, updateOnDuplicate: ['value', 'updated_at'],
    });
  }
  await feedback.update({ fields_answered: await TicketFeedbackValue.count({ where: { feedback_id: feedback.id }, transaction }) }, { transaction });
}

const filters: Record<string, Filter> = {
  ticket_id: equals('ticket_id', field.id()),
  user_id: equals('user_id', field.id()),
  rating: equals('rating', rating()),
};

interface Related {
  forms: Map<number, Record<string, any>>;
  values: Map<number, TicketFeedbackValue[]>;
}

/** The forms of a page of feedback, with their fields, each translated (or with its translations). */
async function loadForms(feedback: TicketFeedback[], ctx: ReadContext): Promise<Map<number, Record<string, any>>> {
  const forms = [...(await loadById(FeedbackForm, feedback.map((f) => f.form_id))).values()];
  const fieldRows = await loadMany(FeedbackField, 'form_id', forms.map((f) => f.id), { order: [['form_id', 'ASC'], ['order', 'ASC'], ['id', 'ASC']] });
  const [formsOut, fieldsOut] = await Promise.all([
    presentTranslated(FEEDBACK_FORM_TRANSLATIONS, forms, (f) => pick(f, FEEDBACK_FORM_FIELDS), ctx.lang),
    presentTranslated(FEEDBACK_FIELD_TRANSLATIONS, [...fieldRows.values()].flat(), (f) => pick(f, FEEDBACK_FORM_FIELD_FIELDS), ctx.lang),
  ]);
  const out = new Map<number, Record<string, any>>();
  for (const form of forms) {
    const { translations, ...data } = formsOut.get(form.id)!;
    const fields = (fieldRows.get(form.id) ?? []).map((f) => fieldsOut.get(f.id)!);
    out.set(form.id, { ...data, fields, ...(translations ? { translations } : {}) });
  }
  return out;
}

export const feedbackResource: ResourceDef<TicketFeedback, Related> = {
  path: '/feedback',
  model: TicketFeedback,
  label: 'ticket feedback',
  // Show is the custom action below: the spec's sample holds `data` as an array of one record.
  actions: ['list', 'update'],
  counted: { kind: 'feedback', scopeFilter: 'rating' },
  sortable: ['ticket_id', 'rating', 'expiry_time', 'created_at', 'updated_at'],
  filters,
  updateSchema: Joi.object({ rating: rating(), values: valueMap() }),

  custom: [{
    name: 'show',
    method: 'GET',
    path: '/:id',
    schema: Joi.object({ lang: langParam() }),
    asArray: true,
    run: async ({ record }) => record,
  }],

  async update(feedback, input, { transaction }) {
    if (input.rating !== undefined && input.rating !== null) await feedback.update({ rating: input.rating }, { transaction });
    if (input.values) await saveValues(feedback, input.values, transaction);
  },

  async load(feedback, ctx) {
    const [forms, values] = await Promise.all([
      loadForms(feedback, ctx),
      loadMany(TicketFeedbackValue, 'feedback_id', feedback.map((f) => f.id), { order: [['feedback_id', 'ASC'], ['field_id', 'ASC']] }),
    ]);
    return { forms, values };
  },

  serialize(f, rel) {
    return {
      ...pick(f, FEEDBACK_FIELDS),
      form: rel.forms.get(f.form_id) ?? null,
      values: (rel.values.get(f.id) ?? []).map((v) => pick(v, FEEDBACK_VALUE_FIELDS)),
    };
  },
};

export const feedbackRouter = resourceRouter(feedbackResource);
