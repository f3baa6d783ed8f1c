import { Op, type Order, type WhereOptions } from 'sequelize';
import { recordDeletions } from '../../export/tombstones';
import { Article } from '../../db/models';
import { emit } from '../../events';
import { ValidationError, fieldLabel } from '../../errors';
import { flagFilter, langParam, listSchema, parseListQuery, type Condition, type Filter, type ListSpec } from '../../http/listQuery';
import { LOCALE, isLocale } from '../../lib/validation';
import { resourceRouter, type CustomAction, type ResourceDef } from '../../http/resource';
import { isBound, sqlCondition } from '../../db/sql';
import { Joi, field } from '../../lib/validation';
import { MAX_UPLOAD_BYTES } from '../../storage/uploads';
import { slugField } from '../../db/slugs';
import { ARTICLE_TRANSLATIONS, EXCERPT_MAX, loadArticleRelations, serializeArticle, type ArticleRelations } from './presenter';
import { searchCondition, searchQuery, searchScore } from './search';
import { richText } from '../../content/html';
import {
  assertInType, createArticle, incrementViews, rebuildSearch, updateArticle, type ArticleInput, type ArticleUpdate,
} from './service';

/** Self-service articles: the spec's list, show and create, plus update, delete and search. */

const MAX_ATTACHMENTS = 20;
/** The text the search index reads (service.ts): list, show and search never present it. */
const UNREAD = ['search_text'] as const;
const TEXT_MAX = 1_000_000;

const attachmentItem = Joi.object({
  filename: field.filename().required(),
  contents: field.base64File(MAX_UPLOAD_BYTES).required(),
  locale: Joi.string().trim().pattern(LOCALE, 'locale').custom((v: string, helpers) => {
    if (!isLocale(v)) throw new Error(`The ${fieldLabel(helpers.state.path ?? ['locale'])} is not a valid ISO-639 code.`);
    return v;
  }).allow('', null),
});

const fields = {
  slug: slugField(),
  excerpt: field.nullable(EXCERPT_MAX),
  // Full tag names, not ids; an empty value clears the tags (update).
  tag: Joi.array().items(field.string().required()).single().max(100).allow('', null),
  published: field.flag(),
  // A publication date is never cleared: empty (or null) is not given, the default on create (now
  // when published) and unchanged on update (form builders send every field, the empty ones too).
  published_at: field.timestamp().empty(Joi.valid('', null)),
  protected: field.flag(),
  pinned: field.flag(),
  attachment: Joi.array().items(attachmentItem).single().max(MAX_ATTACHMENTS),
};

const categories = () => field.idArray().min(1).empty('');

export const articleCreateSchema = Joi.object({
  author_id: field.id().required(),
  title: field.string().required(),
  text: richText(TEXT_MAX).required(),
  category: categories().required(),
  ...fields,
  published: field.flag().default(0),
  protected: field.flag().default(0),
  pinned: field.flag().default(0),
});

export const articleUpdateSchema = Joi.object({
  author_id: field.id(),
  title: field.string(),
  text: richText(TEXT_MAX),
  // Sent empty it is refused as on create (an article is in at least one category), not ignored.
  category: field.idArray().min(1).allow('', null),
  ...fields,
});

/** Articles in a category, or (with `include_subcategories`) in it or any category below it. */
function inCategory(categoryId: number, withSubcategories: boolean): Condition {
  if (!withSubcategories) return sqlCondition`id IN (SELECT article_id FROM article_categories WHERE category_id = ${categoryId})`;
  return sqlCondition`id IN (SELECT article_id FROM article_categories WHERE category_id IN (
    WITH RECURSIVE tree AS (
      SELECT id FROM selfservice_categories WHERE id = ${categoryId}
      UNION SELECT c.id FROM selfservice_categories c JOIN tree ON c.parent_id = tree.id
    ) SELECT id FROM tree))`;
}

const filters: Record<string, Filter> = {
  type_id: { schema: field.id(), where: (id: number) => sqlCondition`id IN (SELECT article_id FROM article_types WHERE type_id = ${id})` },
  tag_id: { schema: field.id(), where: (id: number) => sqlCondition`id IN (SELECT article_id FROM article_tags WHERE tag_id = ${id})` },
  published: flagFilter('published'),
  protected: flagFilter('protected'),
  pinned: flagFilter('pinned'),
};

/** `category_id` reads `include_subcategories` too, so it is a list parameter, applied by `listScope`. */
const listParams = { category_id: field.id(), include_subcategories: field.flag().default(0) };
const listScope = (p: Record<string, any>): Condition => (p.category_id ? inCategory(p.category_id, p.include_subcategories === 1) : {});

const sortable = ['title', 'slug', 'published', 'published_at', 'protected', 'pinned', 'author_id', 'created_at', 'updated_at'] as const;

/** The search takes the list's filters (and PAGING, DATES), plus the words to look for. */
const searchSpec: ListSpec = {
  sortable, filters, dates: true,
  params: { ...listParams, term: field.string(255).required() },
};

/**
 * `GET /article/search?term=`: articles whose title, excerpt or text contain every word of the
 * term (as a word or the start of one), most relevant first (or in the `order_column` sent); with
 * `lang`, also those whose translation in that locale does. A MariaDB FULLTEXT search with the term
 * bound, never inlined.
 */
const search: CustomAction<Article> = {
  name: 'search',
  method: 'GET',
  path: '/search',
  view: 'list',
  // What the route records (the OpenAPI document) show; run reads the query again as a list does.
  schema: listSchema(searchSpec),
  async run({ req }) {
    const q = await parseListQuery(searchSpec, req.query);
    const words = searchQuery(q.params.term);
    if (!q.possible || !words) return { rows: [], count: 0 };
    const match = searchCondition(words, q.lang);
    const scope = listScope(q.params);
    const parts: WhereOptions[] = [match.literal as WhereOptions, q.where];
    const replacements = { ...q.replacements, ...match.replacements };
    if (isBound(scope)) {
      parts.push(scope.literal as WhereOptions);
      Object.assign(replacements, scope.replacements);
    }
    const score = searchScore(words, q.lang);
    const where = { [Op.and]: parts };
    // Most relevant first, unless the client orders by a column (`order_column` sent: PAGING).
    const order = req.query.order_column === undefined ? [[score.literal, 'DESC'], ['id', 'ASC']] : q.order;
    return Article.findAndCountAll({
      attributes: { exclude: [...UNREAD] },
      where, replacements: { ...replacements, ...score.replacements }, order: order as Order, offset: q.offset, limit: q.limit,
    });
  },
};

/**
 * Show, with the spec's `type_id` (the type the article is read in: its frontend URL, and where a
 * view counts) and `increment_views`.
 */
const show: CustomAction<Article> = {
  name: 'show',
  method: 'GET',
  path: '/:id',
  schema: Joi.object({ lang: langParam(), type_id: field.id(), increment_views: field.flag().default(0) }),
  async run({ record, input }) {
    if (input.increment_views === 1 && !input.type_id) throw new ValidationError('The type id field is required when increment views is 1.');
    if (input.type_id) {
      await assertInType(record!.id, input.type_id);
      if (input.increment_views === 1) await incrementViews(record!.id, input.type_id);
    }
    return record;
  },
};

export const articleResource: ResourceDef<Article, ArticleRelations> = {
  path: '/article',
  model: Article,
  label: 'article',
  unread: UNREAD,
  // Show is the custom action below (it reads `type_id` and counts views).
  actions: ['list', 'create', 'update', 'delete'],
  sortable,
  filters,
  dates: true,
  listParams,
  listScope,
  translations: ARTICLE_TRANSLATIONS,
  createSchema: articleCreateSchema,
  updateSchema: articleUpdateSchema,
  create: (input, { transaction }) => createArticle(input as ArticleInput, transaction),
  update: (article, input, { transaction, writesBefore }) => updateArticle(article, input as ArticleUpdate, transaction, writesBefore),
  afterWrite: (article, { transaction }) => rebuildSearch(article, transaction),
  destroy: async (article, { transaction }) => {
    await recordDeletions('articles', [article.id], transaction);
    await article.destroy({ transaction });
    await emit(transaction, 'article.deleted', { articleId: article.id });
  },
  load: loadArticleRelations,
  serialize: serializeArticle,
  // Search before show, so that `/search` is not read as an id.
  custom: [search, show],
};

export const articleRouter = resourceRouter(articleResource);
