import { Op, type Transaction } from 'sequelize';
import { ArticleCategory, SelfServiceCategory, SelfServiceType } from '../db/models';
import { ValidationError, invalid } from '../errors';
import { equals, flagFilter } from '../http/listQuery';
import { loadById, lockById } from '../db/load';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { sent } from '../lib/serialize';
import { presentTranslated } from '../translations';
import { Joi, MAX_ID, field } from '../lib/validation';
import { reslugMovedArticles, syncArticleTypes } from './article/service';
import { touchArticles } from './article/touch';
import { keepOrMoveSlug, chooseSlug, slugField, uniqueSlug } from '../db/slugs';
import { CATEGORY_TRANSLATIONS, TYPE_TRANSLATIONS, serializeTypeSummary } from './typesAndCategories';

/**
 * Categories of a type, in a tree: a parent is a category of the same type. `parent_public` is
 * derived and stored (so lists filter on it): 1 when every ancestor is public.
 */

export const CATEGORY_FIELDS = ['id', 'type_id', 'parent_id', 'name', 'slug', 'public', 'parent_public', 'created_at', 'updated_at'] as const;

/** A category without its type. The spec names the parent's id `parent`. */
export function serializeCategory(c: SelfServiceCategory): Record<string, any> {
  const out: Record<string, any> = {};
  for (const k of CATEGORY_FIELDS) out[k === 'parent_id' ? 'parent' : k] = (c as unknown as Record<string, unknown>)[k] ?? null;
  return out;
}

/** `parent_id`: a category, or 0 / empty for none. */
const parentRef = () => Joi.number().integer().min(0).max(MAX_ID).allow(null, '');

const fields = { slug: slugField(), parent_id: parentRef(), public: field.flag() };

const slugScope = (typeId: number, transaction: Transaction, exceptId: number | null = null) =>
  ({ model: SelfServiceCategory, scope: { type_id: typeId }, exceptId, transaction });

/** The type, locked: slugs of its categories are chosen one writer at a time. */
async function lockType(typeId: number, transaction: Transaction): Promise<SelfServiceType> {
  const type = await lockById(SelfServiceType, typeId, transaction, 'update');
  if (!type) throw invalid('type_id');
  return type;
}

/**
 * A category goes only into a type of articles (`content` 0): a link type (1) shows no categories.
 * (Categories a type had before it became a link stay, unseen, and come back if it is made one of
 * articles again: nothing is lost.)
 */
function assertHoldsCategories(type: SelfServiceType): void {
  if (type.content === 1) throw new ValidationError(LINK_TYPE_HOLDS_NO_CATEGORIES);
}
export const LINK_TYPE_HOLDS_NO_CATEGORIES = 'The selected type id is invalid: a type that links elsewhere (content 1) holds no categories.';

/**
 * Recomputes `parent_public` for every category of the given types (a tree of one type is small;
 * only rows whose value changes are written).
 */
export async function refreshParentPublic(typeIds: number[], transaction: Transaction): Promise<void> {
  if (!typeIds.length) return;
  const all = await SelfServiceCategory.findAll({
    attributes: ['id', 'parent_id', 'public', 'parent_public'], where: { type_id: { [Op.in]: [...new Set(typeIds)] } }, transaction,
  });
  const byId = new Map(all.map((c) => [c.id, c]));
  const memo = new Map<number, number>();
  const reachable = (c: SelfServiceCategory, depth = 0): number => {
    if (memo.has(c.id)) return memo.get(c.id)!;
    const parent = c.parent_id ? byId.get(c.parent_id) : undefined;
    const value = !parent || depth > all.length ? 1 : parent.public && reachable(parent, depth + 1) ? 1 : 0;
    memo.set(c.id, value);
    return value;
  };
  const changed: Record<0 | 1, number[]> = { 0: [], 1: [] };
  for (const c of all) {
    const v = reachable(c) as 0 | 1;
    if (v !== c.parent_public) changed[v].push(c.id);
  }
  for (const v of [0, 1] as const) {
    if (changed[v].length) await SelfServiceCategory.update({ parent_public: v }, { where: { id: { [Op.in]: changed[v] } }, transaction });
  }
}

/** The ids of a category and all its descendants. */
async function subtree(category: SelfServiceCategory, transaction: Transaction): Promise<number[]> {
  const all = await SelfServiceCategory.findAll({ attributes: ['id', 'parent_id'], where: { type_id: category.type_id }, transaction });
  const children = new Map<number, number[]>();
  for (const c of all) if (c.parent_id) children.set(c.parent_id, [...(children.get(c.parent_id) ?? []), c.id]);
  const out: number[] = [];
  const queue = [category.id];
  while (queue.length) {
    const id = queue.shift()!;
    if (out.includes(id)) continue;
    out.push(id);
    queue.push(...(children.get(id) ?? []));
  }
  return out;
}

/** The parent a request names: a category of `typeId` (never `selfAndBelow`), or null. */
async function parentFor(parentId: number | null | undefined, typeId: number, selfAndBelow: number[], transaction: Transaction): Promise<number | null> {
  if (!parentId) return null;
  const parent = await SelfServiceCategory.findOne({ attributes: ['id'], where: { id: parentId, type_id: typeId }, transaction });
  if (!parent || selfAndBelow.includes(parentId)) throw invalid('parent_id');
  return parentId;
}

interface Related {
  types: Map<number, Record<string, any>>;
}

export const categoryResource: ResourceDef<SelfServiceCategory, Related> = {
  path: '/category',
  model: SelfServiceCategory,
  label: 'category',
  sortable: ['name', 'slug', 'type_id', 'parent_id', 'public', 'parent_public', 'created_at', 'updated_at'],
  filters: {
    type_id: equals('type_id', field.id()),
    /** 0: top-level categories only. */
    parent_id: { schema: Joi.number().integer().min(0).max(MAX_ID), where: (id: number) => ({ parent_id: id === 0 ? null : id }) },
    public: flagFilter('public'),
    parent_public: flagFilter('parent_public'),
  },
  translations: CATEGORY_TRANSLATIONS,
  createSchema: Joi.object({ type_id: field.id().required(), name: field.string().required(), ...fields, public: field.flag().default(0) }),
  updateSchema: Joi.object({ type_id: field.id(), name: field.string(), ...fields }),

  async create(input, { transaction }) {
    assertHoldsCategories(await lockType(input.type_id, transaction));
    const parent_id = await parentFor(input.parent_id, input.type_id, [], transaction);
    const slug = await chooseSlug(input.slug, input.name, 'category', slugScope(input.type_id, transaction));
    const category = await SelfServiceCategory.create({ ...sent(input, ['type_id', 'name', 'public']), parent_id, slug }, { transaction });
    await refreshParentPublic([category.type_id], transaction);
    return category;
  },

  async update(category, input, { transaction }) {
    const values: Record<string, any> = sent(input, ['name', 'public']);
    const oldType = category.type_id;
    const typeId = input.type_id ?? oldType;
    const moving = typeId !== oldType;
    const type = await lockType(typeId, transaction);
    if (moving) assertHoldsCategories(type);
    const below = await subtree(category, transaction);
    if (input.parent_id !== undefined) values.parent_id = await parentFor(input.parent_id, typeId, below, transaction);
    else if (moving) values.parent_id = null; // its parent stays behind in the old type
    if (input.slug || moving) values.slug = await keepOrMoveSlug(input.slug, category.slug, slugScope(typeId, transaction, category.id));
    await category.update({ ...values, type_id: typeId }, { transaction });
    if (moving) {
      // The subcategories move along, each with a slug that is free in the new type.
      const descendants = await SelfServiceCategory.findAll({ where: { id: { [Op.in]: below.filter((id) => id !== category.id) } }, transaction });
      for (const d of descendants) {
        await d.update({ type_id: typeId, slug: await uniqueSlug(d.slug, slugScope(typeId, transaction, d.id)) }, { transaction });
      }
      const articles = await ArticleCategory.findAll({ attributes: ['article_id'], where: { category_id: { [Op.in]: below } }, transaction });
      await syncArticleTypes(articles.map((a) => a.article_id), transaction);
      await reslugMovedArticles(articles.map((a) => a.article_id), transaction);
      await touchArticles(articles.map((a) => a.article_id), transaction);
    }
    await refreshParentPublic(moving ? [oldType, typeId] : [typeId], transaction);
  },

  async destroy(category, { transaction }) {
    if (await SelfServiceCategory.count({ where: { parent_id: category.id }, transaction })) {
      throw new ValidationError('The category cannot be deleted while it has subcategories: move or delete them first.');
    }
    // Articles stay; they leave this category (and its type, when no other category keeps them there).
    const articles = await ArticleCategory.findAll({ attributes: ['article_id'], where: { category_id: category.id }, transaction });
    await category.destroy({ transaction });
    await syncArticleTypes(articles.map((a) => a.article_id), transaction);
    await touchArticles(articles.map((a) => a.article_id), transaction);
  },

  async load(categories, ctx) {
    const types = await loadById(SelfServiceType, categories.map((c) => c.type_id));
    return { types: await presentTranslated(TYPE_TRANSLATIONS, [...types.values()], serializeTypeSummary, ctx.lang) };
  },

  serialize(category, related) {
    return { ...serializeCategory(category), type: related.types.get(category.type_id) ?? null };
  },
};

export const categoryRouter = resourceRouter(categoryResource);
