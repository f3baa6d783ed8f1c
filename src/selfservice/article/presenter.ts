import { Article, ArticleAttachment, ArticleCategory, ArticleTag, ArticleType, Brand, SelfServiceCategory, SelfServiceTag, SelfServiceType } from '../../db/models';
import { config } from '../../config';
import { loadById, loadLinked, loadMany } from '../../db/load';
import type { ReadContext } from '../../http/resource';
import { presentTranslated, type TranslationSpec } from '../../translations';
import { flat } from '../../lib/flatString';
import { characters } from '../../lib/validation';
import { loadUploads } from '../../storage/uploads';
import { serializeAttachment } from '../attachment';
import { serializeCategory } from '../category';
import { slugRule } from '../../db/slugs';
import { TAG_TRANSLATIONS, serializeTag } from '../tag';
import { CATEGORY_TRANSLATIONS, TYPE_TRANSLATIONS, serializeTypeSummary } from '../typesAndCategories';

export const EXCERPT_MAX = 255;
const TITLE_MAX = 255;

const maxLength = (max: number) => (value: string, key: string) => (characters(value) > max ? `The ${key} may not be greater than ${max} characters.` : null);

export const ARTICLE_TRANSLATIONS: TranslationSpec = {
  type: 'article', key: 'article_id', fields: ['title', 'slug', 'excerpt', 'text'],
  rules: { title: maxLength(TITLE_MAX), slug: slugRule, excerpt: maxLength(EXCERPT_MAX) },
  html: ['text'],
};

/** A type the article is in, with the link's pivot and what its frontend URL needs. */
interface TypeLink {
  type: SelfServiceType;
  views: number;
}

export interface ArticleRelations {
  categories: Map<number, SelfServiceCategory[]>;
  types: Map<number, TypeLink[]>;
  tags: Map<number, SelfServiceTag[]>;
  attachments: Map<number, ArticleAttachment[]>;
  /** Embedded records as their own resources present them (translated for `lang`). */
  presented: {
    categories: Map<number, Record<string, any>>;
    types: Map<number, Record<string, any>>;
    tags: Map<number, Record<string, any>>;
    attachments: Map<number, Record<string, any>>;
  };
  /** The frontend address of each brand (its system URL, else this server's). */
  brandUrls: Map<number, string>;
}

/** The records of several lists, each once. */
const distinct = <T extends { id: number }>(lists: Iterable<T[]>): T[] => [...new Map([...lists].flat().map((r) => [r.id, r])).values()];

/** Everything an article embeds, for a page of articles: a fixed number of queries whatever its size. */
export async function loadArticleRelations(articles: Article[], ctx: ReadContext): Promise<ArticleRelations> {
  const ids = articles.map((a) => a.id);
  const [categories, tags, typeLinks, attachments] = await Promise.all([
    loadLinked(ArticleCategory, 'article_id', 'category_id', ids, SelfServiceCategory),
    loadLinked(ArticleTag, 'article_id', 'tag_id', ids, SelfServiceTag),
    loadMany(ArticleType, 'article_id', ids, { order: [['article_id', 'ASC'], ['type_id', 'ASC']] }),
    loadMany(ArticleAttachment, 'article_id', ids),
  ]);
  const typeRows = await loadById(SelfServiceType, [...typeLinks.values()].flat().map((l) => l.type_id));
  const [presentedCategories, presentedTypes, presentedTags, uploads, brands] = await Promise.all([
    presentTranslated(CATEGORY_TRANSLATIONS, distinct(categories.values()), serializeCategory, ctx.lang),
    presentTranslated(TYPE_TRANSLATIONS, [...typeRows.values()], serializeTypeSummary, ctx.lang),
    presentTranslated(TAG_TRANSLATIONS, distinct(tags.values()), serializeTag, ctx.lang),
    loadUploads([...attachments.values()].flat().map((a) => a.upload_hash)),
    loadById(Brand, [...typeRows.values()].map((t) => t.brand_id), { attributes: ['id', 'system_url'] }),
  ]);
  const types = new Map<number, TypeLink[]>();
  for (const [articleId, links] of typeLinks) {
    types.set(articleId, links.flatMap((l) => {
      const type = typeRows.get(l.type_id);
      return type ? [{ type, views: l.views }] : [];
    }));
  }
  const presentedAttachments = new Map([...attachments.values()].flat().map((a) => [a.id, serializeAttachment(a, uploads.get(a.upload_hash))]));
  const fallback = config().appUrl;
  const brandUrls = new Map([...brands.values()].map((b) => [b.id, (b.system_url || fallback).replace(/\/+$/, '')]));
  return {
    categories, types, tags, attachments, brandUrls,
    presented: { categories: presentedCategories, types: presentedTypes, tags: presentedTags, attachments: presentedAttachments },
  };
}

/**
 * The article's address on the self-service frontend, in a type: `<brand URL>/<type slug>/article/<id>/<slug>`
 * (the shape of SupportPal's category URLs, `<brand URL>/<type slug>/category/<slug>`). The type is
 * the one asked for (`type_id` on show), else the article's first; null when it is in none.
 */
export function frontendUrl(article: Article, links: TypeLink[], brandUrls: Map<number, string>, typeId?: number): string | null {
  const link = links.find((l) => l.type.id === typeId) ?? links[0];
  if (!link) return null;
  const base = brandUrls.get(link.type.brand_id) ?? config().appUrl;
  return flat(base, '/', link.type.slug, '/article/', article.id, '/', article.slug);
}

/**
 * An article as its resource shows it: its columns in the spec's order, then what it
 * embeds. One object literal of fixed shape, not a spread of picked fields: a page presents fifty.
 */
export function serializeArticle(article: Article, rel: ArticleRelations, ctx: ReadContext): Record<string, any> {
  const links = rel.types.get(article.id) ?? [];
  const a = article;
  return {
    id: a.id,
    author_id: a.author_id ?? null,
    title: a.title,
    slug: a.slug,
    excerpt: a.excerpt ?? null,
    text: a.text,
    published: a.published,
    published_at: a.published_at ?? null,
    protected: a.protected,
    pinned: a.pinned,
    created_at: a.created_at,
    updated_at: a.updated_at,
    frontend_url: frontendUrl(article, links, rel.brandUrls, ctx.query.type_id),
    categories: (rel.categories.get(article.id) ?? []).map((c) => ({
      ...rel.presented.categories.get(c.id), pivot: { article_id: article.id, category_id: c.id },
    })),
    types: links.map((l) => ({
      ...rel.presented.types.get(l.type.id), pivot: { article_id: article.id, type_id: l.type.id, views: l.views },
    })),
    tags: (rel.tags.get(article.id) ?? []).map((t) => ({ ...rel.presented.tags.get(t.id), pivot: { article_id: article.id, tag_id: t.id } })),
    attachments: (rel.attachments.get(article.id) ?? []).map((a) => rel.presented.attachments.get(a.id)),
  };
}
