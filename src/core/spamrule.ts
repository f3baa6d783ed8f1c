import { config } from '../config';
import { SpamRule } from '../db/models';
import { ValidationError } from '../errors';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { pick } from '../lib/serialize';
import { Joi, field } from '../lib/validation';
import { SPAM_RULE_MAX_LENGTH, ruleRefusal } from './spam';

// Kept as sent, not trimmed: the text is a regular expression, whose spaces match. A text of
// nothing but whitespace is refused like an empty one. A pattern is bounded in length and in the
// size it compiles to (spam.ts: what one rule may cost on one text).
const text = () => Joi.string().max(SPAM_RULE_MAX_LENGTH)
  .custom((v: string, helpers) => (v.trim() ? v : helpers.error('any.required')))
  .custom((v: string) => {
    const refusal = ruleRefusal(v);
    if (refusal) throw new Error(refusal);
    return v;
  });
const type = () => Joi.number().integer().valid(0, 1, 2);

/** The fields of every response (the OpenAPI document describes the same list). */
export const SPAM_RULE_FIELDS = ['id', 'text', 'event_message', 'event_comment', 'type', 'created_at', 'updated_at'] as const;

export const spamRuleResource: ResourceDef<SpamRule> = {
  path: '/spamrule',
  model: SpamRule,
  label: 'spam rule',
  sortable: ['type', 'created_at', 'updated_at'],
  createSchema: Joi.object({
    text: text().required(),
    type: type().required(),
    event_message: field.flag().default(1),
    event_comment: field.flag().default(1),
  }),
  updateSchema: Joi.object({ text: text(), type: type(), event_message: field.flag(), event_comment: field.flag() }),
  // At most SPAM_RULES_MAX rules (every mail runs each). The count is read locking the rules, so two
  // creates at once cannot both take the last place.
  create: async (input, { transaction }) => {
    const rules = await SpamRule.findAll({ attributes: ['id'], transaction, lock: transaction.LOCK.UPDATE });
    const max = config().spamRulesMax;
    if (rules.length >= max) throw new ValidationError(`There may be at most ${max} spam rules (SPAM_RULES_MAX): delete or edit one instead.`);
    return SpamRule.create(input, { transaction });
  },
  serialize: (r) => pick(r, SPAM_RULE_FIELDS),
};

export const spamRuleRouter = resourceRouter(spamRuleResource);
