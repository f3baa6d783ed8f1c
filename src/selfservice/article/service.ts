import { Op, QueryTypes, type Transaction, type WhereOptions } from 'sequelize';
import {
  Article, ArticleAttachment, ArticleCategory, ArticleSearch, ArticleTag, ArticleType, SelfServiceCategory, SelfServiceType, Translation, User,
} from '../../db/models';
import { setLinks, setRows } from '../../db/links';
import { now } from '../../db/entity';
import { sequelize } from '../../db/sequelize';
import { ValidationError, invalid } from '../../errors';
import { assertExist } from '../../db/exists';
import { writeCount } from '../../db/writes';
import type { Condition } from '../../http/listQuery';
import { sent } from '../../lib/serialize';
import { sqlCondition } from '../../db/sql';
import { put } from '../../storage/uploads';
import { cleanFileName } from '../../storage/uploads';
import { assertAttachments } from '../../ticket/attachmentFiles';
import { cachedTicketSettings } from '../../ticket/ticketSettings';
import { chooseSlug, keepOrMoveSlug, type SlugScope } from '../../db/slugs';
import { tagsNamed } from '../tag';
import { emit } from '../../events';
import { readableText } from '../../content/html';

/** The domain rules of articles: authors, categories and the types they imply, tags by name, slugs, attachments, search documents. */

export interface AttachmentInput {
  filename: string;
  /** The decoded bytes of `attachment[n][contents]`. */
  contents: Buffer;
  locale?: string | null;
}

export interface ArticleInput {
  author_id: number;
  title: string;
  text: string;
  /** Category ids (at least one). */
  category: number[];
  slug?: string | null;
  excerpt?: string | null;
  /** Tag names: existing tags are reused, missing ones created. */
  tag?: string[] | null;
  published: 0 | 1;
  published_at?: number | null;
  protected: 0 | 1;
  pinned: 0 | 1;
  attachment?: AttachmentInput[];
}

/** An update: every field optional; `category` and `tag` replace the article's, attachments are added. */
export type ArticleUpdate = Partial<ArticleInput>;

const COLUMNS = ['author_id', 'title', 'text', 'excerpt', 'published', 'published_at', 'protected', 'pinned'] as const;

/** The article's author must be an operator. */
async function assertOperator(id: number, transaction: Transaction): Promise<void> {
  if (!(await User.findOne({ attributes: ['id'], where: { id, type: 'operator' }, transaction }))) throw invalid('author_id');
}

/**
 * The types of the given categories (which must exist, in types of articles: a category a type
 * kept when it became a link holds none), locked: article slugs of a type are chosen one writer
 * at a time.
 */
async function typesOf(categoryIds: number[], transaction: Transaction): Promise<number[]> {
  await assertExist(SelfServiceCategory, 'category', categoryIds, transaction);
  const rows = await SelfServiceCategory.findAll({ attributes: ['id', 'type_id'], where: { id: { [Op.in]: categoryIds } }, transaction });
  const typeIds = [...new Set(rows.map((r) => r.type_id))].sort((a, b) => a - b);
  const types = await SelfServiceType.findAll({ attributes: ['id', 'content'], where: { id: { [Op.in]: typeIds } }, order: [['id', 'ASC']], transaction, lock: transaction.LOCK.UPDATE });
  const links = new Set(types.filter((t) => t.content === 1).map((t) => t.id));
  const inLink = categoryIds.findIndex((id) => links.has(rows.find((r) => r.id === id)!.type_id));
  if (inLink >= 0) throw new ValidationError(`The selected category.${inLink} is invalid: its type links elsewhere (content 1) and holds no articles.`);
  return typeIds;
}

/**
 * The articles an article's slug must differ from: those sharing one of its types. The subquery is
 * a locking read, as the slugs' read is: without, it reads the transaction's snapshot, taken
 * before the types' lock was granted, and misses the article its previous holder committed (two
 * articles created at once took one slug).
 */
function slugScope(typeIds: number[], transaction: Transaction, exceptId: number | null = null): SlugScope<Article> {
  const scope: Condition = typeIds.length
    ? sqlCondition`id IN (SELECT article_id FROM article_types WHERE type_id IN (${typeIds}) LOCK IN SHARE MODE)`
    : ({ id: { [Op.in]: [] } } as WhereOptions);
  return { model: Article, scope, exceptId, transaction };
}

/**
 * Makes `article_types` follow the articles' categories: a type an article has a category in is
 * linked (views 0 when new, kept otherwise), a type it has none in any more is unlinked, and its
 * comments made in that type have none.
 */
export async function syncArticleTypes(articleIds: number[], transaction: Transaction): Promise<void> {
  const ids = [...new Set(articleIds)];
  if (!ids.length) return;
  const wanted = `SELECT DISTINCT ac.article_id, c.type_id FROM article_categories ac
    JOIN selfservice_categories c ON c.id = ac.category_id WHERE ac.article_id IN (:ids)`;
  await sequelize().query(
    `DELETE FROM article_types WHERE article_id IN (:ids) AND (article_id, type_id) NOT IN (${wanted})`,
    { replacements: { ids }, transaction, type: QueryTypes.DELETE },
  );
  await sequelize().query(
    `INSERT INTO article_types (article_id, type_id, views) SELECT w.article_id, w.type_id, 0 FROM (${wanted}) w
     ON DUPLICATE KEY UPDATE views = article_types.views`,
    { replacements: { ids }, transaction, type: QueryTypes.INSERT },
  );
  // A comment made in a type the article is no longer in has no type, as when the type is deleted.
  await sequelize().query(
    `UPDATE article_comments SET type_id = NULL, updated_at = :at
      WHERE article_id IN (:ids) AND type_id IS NOT NULL AND (article_id, type_id) NOT IN (${wanted})`,
    { replacements: { ids, at: now() }, transaction, type: QueryTypes.UPDATE },
  );
}

/**
 * The articles of categories that moved into another type (a category's move, after
 * syncArticleTypes): each keeps its slug where that is free in every type it is in now, else takes
 * the first free `-<n>`, as an article an update moves does; the articles already there keep theirs.
 */
export async function reslugMovedArticles(articleIds: number[], transaction: Transaction): Promise<void> {
  const articles = await Article.findAll({ attributes: ['id', 'slug'], where: { id: { [Op.in]: [...new Set(articleIds)] } }, order: [['id', 'ASC']], transaction });
  for (const article of articles) {
    const typeIds = (await ArticleType.findAll({ attributes: ['type_id'], where: { article_id: article.id }, transaction })).map((t) => t.type_id);
    const slug = await keepOrMoveSlug(undefined, article.slug, slugScope(typeIds, transaction, article.id));
    if (slug === article.slug) continue;
    await article.update({ slug }, { transaction }); // its event: touchArticles, which the move calls
  }
}

async function replaceCategories(articleId: number, categoryIds: number[], transaction: Transaction, fresh = false): Promise<void> {
  const before = await setLinks(ArticleCategory, { article_id: articleId }, 'category_id', categoryIds, transaction, { fresh });
  if (before) await syncArticleTypes([articleId], transaction);
}

async function replaceTags(articleId: number, names: string[], transaction: Transaction, fresh = false): Promise<void> {
  const tags = await tagsNamed(names, transaction);
  await setLinks(ArticleTag, { article_id: articleId }, 'tag_id', tags.map((t) => t.id), transaction, { fresh });
}

/**
 * Stores each file (once per content) and attaches it to the article under the name it came with.
 * The files obey the same rules as ticket attachments (`allowed_files`, sizes): 422 naming the file.
 */
export async function addAttachments(articleId: number, items: AttachmentInput[], transaction: Transaction): Promise<void> {
  assertAttachments(items, await cachedTicketSettings(transaction));
  for (const item of items) {
    const name = cleanFileName(item.filename);
    const upload = await put(item.contents, name, transaction);
    await ArticleAttachment.create({ article_id: articleId, upload_hash: upload.hash, original_name: name, locale: item.locale ? item.locale.replace('-', '_') : null }, { transaction });
  }
}

export async function createArticle(input: ArticleInput, transaction: Transaction): Promise<Article> {
  await assertOperator(input.author_id, transaction);
  const typeIds = await typesOf(input.category, transaction);
  const slug = await chooseSlug(input.slug, input.title, 'article', slugScope(typeIds, transaction));
  const values: Record<string, any> = { ...sent(input, COLUMNS), search_text: readableText(input.text) };
  // First published now, unless the request says when.
  values.published_at = input.published_at ?? (input.published ? now() : null);
  const article = await Article.create({ ...values, slug }, { transaction });
  await replaceCategories(article.id, input.category, transaction, true);
  if (input.tag?.length) await replaceTags(article.id, input.tag, transaction, true);
  if (input.attachment?.length) await addAttachments(article.id, input.attachment, transaction);
  await emit(transaction, 'article.created', { articleId: article.id });
  return article;
}

/** `writesBefore`: the transaction's writeCount before the update began (translations included): nothing written, no event. */
export async function updateArticle(article: Article, input: ArticleUpdate, transaction: Transaction, writesBefore = writeCount(transaction)): Promise<void> {
  if ((input.category as unknown) === '' || input.category === null) throw new ValidationError('The category field is required.');
  if (input.author_id !== undefined) await assertOperator(input.author_id, transaction);
  const values: Record<string, any> = sent(input, COLUMNS);
  if (input.text !== undefined) values.search_text = readableText(input.text);
  if (input.category !== undefined || input.slug) {
    const categoryIds = input.category ?? (await ArticleCategory.findAll({ where: { article_id: article.id }, transaction })).map((c) => c.category_id);
    const typeIds = input.category !== undefined
      ? await typesOf(categoryIds, transaction)
      : (await ArticleType.findAll({ where: { article_id: article.id }, transaction })).map((t) => t.type_id);
    // Moved into other types, the slug must still be unique in each of them.
    values.slug = await keepOrMoveSlug(input.slug, article.slug, slugScope(typeIds, transaction, article.id));
  }
  if (values.published === 1 && !article.published_at && input.published_at === undefined) values.published_at = now();
  await article.update(values, { transaction });
  if (input.category !== undefined) await replaceCategories(article.id, input.category, transaction);
  if (input.tag !== undefined) await replaceTags(article.id, input.tag ?? [], transaction);
  if (input.attachment?.length) await addAttachments(article.id, input.attachment, transaction);
  if (writeCount(transaction) > writesBefore) await emit(transaction, 'article.updated', { articleId: article.id });
}

/** `GET /article/{id}?type_id=`: the article must be in that type. */
export async function assertInType(articleId: number, typeId: number): Promise<void> {
  if (!(await ArticleType.findOne({ attributes: ['article_id'], where: { article_id: articleId, type_id: typeId } }))) throw invalid('type_id');
}

/** One more view of the article in the type (one atomic statement: concurrent views all count). */
export async function incrementViews(articleId: number, typeId: number): Promise<void> {
  await ArticleType.increment('views', { by: 1, where: { article_id: articleId, type_id: typeId } });
}

/**
 * Rebuilds the article's search documents: one per locale it has translations in, holding what a
 * reader of that locale sees (each translated field, else the default). Runs after every write,
 * once the translations are saved.
 */
export async function rebuildSearch(article: Article, transaction: Transaction): Promise<void> {
  const rows = await Translation.findAll({ where: { record_type: 'article', record_id: article.id }, transaction });
  const docs = new Map<string, { title: string; excerpt: string | null; text: string }>();
  for (const r of rows) {
    const doc = docs.get(r.locale) ?? { title: article.title, excerpt: article.excerpt, text: article.text };
    if (r.field === 'title' || r.field === 'excerpt' || r.field === 'text') doc[r.field] = r.value;
    docs.set(r.locale, doc);
  }
  // The text as a reader of the locale sees it (the index finds words, not markup).
  for (const doc of docs.values()) doc.text = readableText(doc.text);
  // As stored already (an update that changed no text): nothing written.
  await setRows(ArticleSearch, { article_id: article.id }, ['locale', 'title', 'excerpt', 'text'], [...docs].map(([locale, doc]) => ({ locale, ...doc })), transaction);
}
