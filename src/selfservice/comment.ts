import { convert as htmlToText } from 'html-to-text';
import type { Transaction } from 'sequelize';
import { Article, ArticleComment, ArticleType, SelfServiceType, SpamRule, User } from '../db/models';
import { spamMatch } from '../core/spam';
import { ValidationError, invalid } from '../errors';
import { equals, type Filter } from '../http/listQuery';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { pick, sent } from '../lib/serialize';
import { Joi, MAX_ID, field } from '../lib/validation';
import { formattedName } from '../user/people/presenter';
import { isMarkup, richText } from '../content/html';

/**
 * Comments on articles, and their moderation. Status: 0 awaiting moderation, 1 published, 2 spam.
 * A new comment is checked against the spam rules that apply to comments (`event_comment`): a
 * match refuses it, as SupportPal does ("The comment was blocked due to spam."), and nothing is
 * stored. Status 2 is a moderator's verdict, set with an update.
 */

export const COMMENT_FIELDS = [
  'id', 'article_id', 'type_id', 'author_id', 'name', 'text', 'parent_id', 'root_parent_id', 'rating', 'status', 'notify_reply',
  'created_at', 'updated_at',
] as const;

export const COMMENT_STATUS = { AWAITING: 0, PUBLISHED: 1, SPAM: 2 } as const;

export const SPAM_MESSAGE = 'The comment was blocked due to spam.';

const status = () => Joi.number().integer().valid(0, 1, 2);
const TEXT_MAX = 65535;

/**
 * Whether a spam rule for comments matches the text or the sender (name, or the author's email).
 * Rich text is matched as written and as a reader sees it (`vi<b>agra</b>` reads `viagra`,
 * `cheap&nbsp;pills` `cheap pills`), as a mail's HTML is read as text before its rules run.
 */
async function isSpam(text: string, senders: string[], transaction: Transaction): Promise<boolean> {
  const rules = await SpamRule.findAll({ where: { event_comment: 1 }, transaction });
  const contents = isMarkup(text) ? [text, htmlToText(text, { wordwrap: false, selectors: [{ selector: 'img', format: 'skip' }] })] : [text];
  return spamMatch(rules, [...contents.map((content) => ({ content })), ...senders.map((sender) => ({ sender }))]) !== undefined;
}

const filters: Record<string, Filter> = {
  article_id: equals('article_id', field.id()),
  type_id: equals('type_id', field.id()),
  author_id: equals('author_id', field.id()),
  status: equals('status', status()),
  /** 0: comments that are not replies. */
  parent_id: { schema: Joi.number().integer().min(0).max(MAX_ID), where: (id: number) => ({ parent_id: id === 0 ? null : id }) },
};

export const commentResource: ResourceDef<ArticleComment> = {
  path: '/comment',
  model: ArticleComment,
  label: 'comment',
  // All comments (or a status's); one article's (or its status's: the published ones a page shows).
  counted: [{ kind: 'comment', byValue: ['status'] }, { kind: 'article_comment', scopeFilter: 'article_id', byValue: ['status'] }],
  sortable: ['article_id', 'status', 'rating', 'created_at', 'updated_at'],
  // An article's published comments beside `parent_id=0` (its top-level ones): the article's, the
  // status's and the parent's indexes intersected and every match sorted, where (article_id,
  // status, <order>) reads the page (migration 078; 0.22 s against 0.7 ms for an article of
  // 100,000 comments, and its count 0.11 s against 24 ms).
  noIndexIntersections: true,
  filters,
  dates: true,
  createSchema: Joi.object({
    article_id: field.id().required(),
    // A guest names themself; a user's or operator's comment takes their name when none is given.
    name: field.string().when('author_id', { is: Joi.exist(), otherwise: Joi.required() }),
    text: richText(TEXT_MAX).required(),
    parent_id: field.id().allow(null, ''),
    author_id: field.id(),
    type_id: field.id(),
    status: status(),
    notify_reply: field.flag().default(0),
  }),
  // Moderation: the text, the name, the status.
  updateSchema: Joi.object({ name: field.string(), text: richText(TEXT_MAX), status: status(), notify_reply: field.flag() }),

  async create(input, { transaction }) {
    const article = await Article.findByPk(input.article_id, { attributes: ['id'], transaction });
    if (!article) throw invalid('article_id');
    const author = input.author_id ? await User.findByPk(input.author_id, { transaction }) : null;
    if (input.author_id && !author) throw invalid('author_id');
    const parent = input.parent_id ? await ArticleComment.findOne({ where: { id: input.parent_id, article_id: article.id }, transaction }) : null;
    if (input.parent_id && !parent) throw invalid('parent_id');
    // The type the comment was made in: one of the article's (its first when not given). A user
    // comments in their own brand's self-service (the same address in another brand is another
    // person, as for a ticket's messages): only its types; operators have no brand.
    const all = await ArticleType.findAll({ attributes: ['type_id'], where: { article_id: article.id }, order: [['type_id', 'ASC']], transaction });
    if (input.type_id && !all.some((t) => t.type_id === input.type_id)) throw invalid('type_id');
    const brandOf = author?.type === 'user'
      ? new Map((await SelfServiceType.findAll({ attributes: ['id', 'brand_id'], where: { id: all.map((t) => t.type_id) }, transaction })).map((t) => [t.id, t.brand_id]))
      : null;
    const types = brandOf ? all.filter((t) => brandOf.get(t.type_id) === author!.brand_id) : all;
    if (brandOf && (!types.length || (input.type_id && !types.some((t) => t.type_id === input.type_id)))) throw invalid('author_id');
    const name: string = input.name ?? formattedName(author!).slice(0, 255);
    if (await isSpam(input.text, [name, ...(author ? [author.email] : [])], transaction)) throw new ValidationError(SPAM_MESSAGE);
    return ArticleComment.create({
      ...sent(input, ['article_id', 'text', 'notify_reply']),
      name,
      author_id: author?.id ?? null,
      type_id: input.type_id ?? (types.some((t) => t.type_id === parent?.type_id) ? parent!.type_id : types[0]?.type_id) ?? null,
      parent_id: parent?.id ?? null,
      root_parent_id: parent ? parent.root_parent_id ?? parent.id : null,
      // Operators' comments need no moderation; others wait for it unless the request says otherwise.
      status: input.status ?? (author?.type === 'operator' ? COMMENT_STATUS.PUBLISHED : COMMENT_STATUS.AWAITING),
    }, { transaction });
  },

  serialize: (c) => pick(c, COMMENT_FIELDS),
};

export const commentRouter = resourceRouter(commentResource);
