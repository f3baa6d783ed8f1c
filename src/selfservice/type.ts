import { Op, type Transaction } from 'sequelize';
import { ArticleType, Brand, SelfServiceCategory, SelfServiceType, Translation } from '../db/models';
import { presentBrand } from '../core/brand';
import { ValidationError, invalid } from '../errors';
import { equals, flagFilter } from '../http/listQuery';
import { loadById } from '../db/load';
import { nextOrder } from '../db/order';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { pick, sent } from '../lib/serialize';
import { Joi, field } from '../lib/validation';
import { CATEGORY_TRANSLATIONS, TYPE_TRANSLATIONS } from './typesAndCategories';
import { chooseSlug, keepOrMoveSlug, slugField } from '../db/slugs';
import { touchArticles } from './article/touch';

/**
 * Self-service types: what a brand's self-service offers (a knowledge base, announcements...),
 * either articles (content 0) or a link elsewhere (content 1).
 */

export const TYPE_FIELDS = [
  'id', 'brand_id', 'name', 'slug', 'description', 'order', 'enabled', 'protected', 'internal', 'content', 'view', 'icon',
  'article_ordering', 'show_on_dashboard', 'external_link', 'created_at', 'updated_at',
] as const;

/** What the list leaves out (the spec). */
export const LIST_OMITS = new Set(['content', 'external_link']);

const ICON_PREFIX = 'fa-';

/** `fa-book`: an icon class prefixed `fa-`; empty is not given (the default on create, unchanged on update). */
const icon = () => Joi.string().trim().empty('').max(64).custom((value: string) => {
  if (!value.startsWith(ICON_PREFIX)) throw new Error(`The icon must start with one of the following: ${ICON_PREFIX}.`);
  if (!/^fa-[a-z0-9-]+$/.test(value)) throw new Error('The icon format is invalid.');
  return value;
});

const fields = {
  slug: slugField(),
  description: field.multiline(65535),
  enabled: field.flag(),
  protected: field.flag(),
  internal: field.flag(),
  order: field.order(),
  icon: icon(),
  view: field.flag(),
  article_ordering: Joi.number().integer().valid(0, 1, 2, 3),
  show_on_dashboard: field.flag(),
  external_link: Joi.string().trim().max(2048).uri({ scheme: ['http', 'https'] }).allow('', null),
};

/** Input fields stored as they are (the slug is chosen). */
const COLUMNS = [
  'brand_id', 'name', 'description', 'enabled', 'protected', 'internal', 'content', 'view', 'order', 'icon', 'article_ordering',
  'show_on_dashboard', 'external_link',
] as const;

export const typeCreateSchema = Joi.object({
  brand_id: field.id().required(),
  name: field.string().required(),
  content: field.flag().required(),
  ...fields,
  // The hierarchical or list view of articles: only a type of articles has one.
  view: field.flag().when('content', { is: 0, then: Joi.required() }),
  enabled: field.flag().default(1),
  protected: field.flag().default(0),
  internal: field.flag().default(0),
  icon: icon().default('fa-book'),
  article_ordering: fields.article_ordering.default(0),
  show_on_dashboard: field.flag().default(1),
});

export const typeUpdateSchema = Joi.object({ brand_id: field.id(), name: field.string(), content: field.flag(), ...fields });

type CrossFields = Pick<SelfServiceType, 'protected' | 'internal' | 'description' | 'content' | 'external_link'>;

/** Rules across fields, on the values the type will have. */
function checkType(t: CrossFields) {
  // A public type (visible to everyone, not internal) introduces itself on the self-service page.
  if (!t.protected && !t.internal && !t.description) throw new ValidationError('The description field is required.');
  if (t.content === 1 && !t.external_link) throw new ValidationError('The external link field is required.');
}

/**
 * `external_link` means something only for a link type (content 1). Sent (not empty) for a type of
 * articles, it is refused rather than stored unused; a type that is (or becomes) one of articles
 * has none, so an update that makes a link type one of articles drops its link.
 */
function linkOnlyForLinks(values: { content?: number; external_link?: string | null }, content: number): void {
  if (content !== 0) return;
  if (values.external_link) throw new ValidationError('The external link field is prohibited when content is 0.');
  values.external_link = null;
}

const slugScope = (brandId: number, transaction: Transaction, exceptId: number | null = null) =>
  ({ model: SelfServiceType, scope: { brand_id: brandId }, exceptId, transaction });

async function assertBrand(brandId: number, transaction: Transaction) {
  if (!(await Brand.findByPk(brandId, { attributes: ['id'], transaction }))) throw invalid('brand_id');
}

interface Related {
  brands: Map<number, Brand>;
}

export const typeResource: ResourceDef<SelfServiceType, Related> = {
  path: '/type',
  model: SelfServiceType,
  label: 'type',
  sortable: ['name', 'slug', 'order', 'brand_id', 'enabled', 'internal', 'content', 'view', 'article_ordering', 'show_on_dashboard', 'created_at', 'updated_at'],
  filters: {
    brand_id: equals('brand_id', field.id()),
    enabled: flagFilter('enabled'),
    internal: flagFilter('internal'),
    content: flagFilter('content'),
    view: flagFilter('view'),
    article_ordering: equals('article_ordering', Joi.number().integer().valid(0, 1, 2, 3)),
    show_on_dashboard: flagFilter('show_on_dashboard'),
  },
  translations: TYPE_TRANSLATIONS,
  createSchema: typeCreateSchema,
  updateSchema: typeUpdateSchema,

  async create(input, { transaction }) {
    const values = sent(input, COLUMNS);
    linkOnlyForLinks(values, values.content);
    checkType({ description: null, external_link: null, ...values } as CrossFields);
    await assertBrand(values.brand_id, transaction);
    const slug = await chooseSlug(input.slug, values.name, 'type', slugScope(values.brand_id, transaction));
    const order = values.order ?? (await nextOrder(SelfServiceType, transaction, { brand_id: values.brand_id }));
    return SelfServiceType.create({ ...values, order, slug }, { transaction });
  },

  async update(type, input, { transaction }) {
    const values = sent(input, COLUMNS);
    linkOnlyForLinks(values, values.content ?? type.content);
    checkType({ ...pick(type, TYPE_FIELDS), ...values } as CrossFields);
    if (values.brand_id !== undefined && values.brand_id !== type.brand_id) await assertBrand(values.brand_id, transaction);
    const brandId = values.brand_id ?? type.brand_id;
    if (input.slug || brandId !== type.brand_id) values.slug = await keepOrMoveSlug(input.slug, type.slug, slugScope(brandId, transaction, type.id));
    await type.update(values, { transaction });
  },

  async destroy(type, { transaction }) {
    // Its categories go with it (their links to articles too); the articles stay, changed.
    const categories = await SelfServiceCategory.findAll({ attributes: ['id'], where: { type_id: type.id }, transaction });
    const articles = await ArticleType.findAll({ attributes: ['article_id'], where: { type_id: type.id }, transaction });
    if (categories.length) {
      await Translation.destroy({ where: { record_type: CATEGORY_TRANSLATIONS.type, record_id: { [Op.in]: categories.map((c) => c.id) } }, transaction });
    }
    await type.destroy({ transaction });
    await touchArticles(articles.map((a) => a.article_id), transaction);
  },

  async load(types) {
    return { brands: await loadById(Brand, types.map((t) => t.brand_id)) };
  },

  serialize(type, related, ctx) {
    const out: Record<string, any> = {};
    for (const k of TYPE_FIELDS) if (!(ctx.view === 'list' && LIST_OMITS.has(k))) out[k] = (type as unknown as Record<string, unknown>)[k] ?? null;
    const brand = related.brands.get(type.brand_id);
    out.brand = brand ? presentBrand(brand, ctx.grants('core:read')) : null;
    return out;
  },
};

export const typeRouter = resourceRouter(typeResource);
