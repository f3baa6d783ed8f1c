import { Op, type Transaction } from 'sequelize';
import { ArticleTag, SelfServiceTag } from '../db/models';
import { duplicateOf } from '../db/uniqueKeys';
import { ValidationError } from '../errors';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { pick } from '../lib/serialize';
import type { TranslationSpec } from '../translations';
import { Joi, field } from '../lib/validation';
import { assertSlugFree, keepOrMoveSlug, slugField, slugRule, slugify, writeWithFreeSlug } from '../db/slugs';
import { touchArticles } from './article/touch';

/** Self-service tags: one per name (articles name their tags), slugs unique across the help desk. */

export const TAG_FIELDS = ['id', 'name', 'slug', 'created_at', 'updated_at'] as const;

export const TAG_TRANSLATIONS: TranslationSpec = { type: 'selfservice_tag', key: 'tag_id', fields: ['name', 'slug'], rules: { slug: slugRule } };

export const serializeTag = (t: SelfServiceTag) => pick(t, TAG_FIELDS);

const slugScope = (transaction: Transaction, exceptId: number | null = null) => ({ model: SelfServiceTag, scope: {}, exceptId, transaction });

/**
 * 422 when another tag has the name (compared as the collation does: case-insensitively). A plain
 * read: when two requests race, the unique key `name` refuses the loser's write, which the API
 * answers with the same 422 (db/uniqueKeys.ts), as for ticket tags. A locking read would lock the
 * gap where a missing name goes, and parallel creates of one name, each holding that gap and
 * waiting to insert into it, deadlock in turn (seen in CI: one of 20 parallel creates answered
 * 503, likely after five deadlocks).
 */
async function assertNameFree(name: string, exceptId: number | null, transaction: Transaction): Promise<void> {
  const other = await SelfServiceTag.findOne({
    attributes: ['id'], where: { name, ...(exceptId ? { id: { [Op.ne]: exceptId } } : {}) }, transaction,
  });
  if (other) throw new ValidationError('The name has already been taken.');
}

/**
 * The tags with these names, created when missing (with generated slugs): how articles take
 * `tag[]`. Returns them in the order of the names, without repeats.
 */
export async function tagsNamed(names: string[], transaction: Transaction): Promise<SelfServiceTag[]> {
  const out: SelfServiceTag[] = [];
  for (const name of names) {
    // The database compares names (its collation decides that `billing` is `Billing`). A plain
    // read, then an INSERT of a missing tag: no gap lock (see assertNameFree). When another request
    // inserted the tag first, the key `name` refuses ours, and a locking read, which sees the
    // latest commit, finds theirs.
    let tag = await SelfServiceTag.findOne({ where: { name }, transaction });
    if (!tag) {
      try {
        tag = await writeWithFreeSlug(slugify(name, 'tag'), slugScope(transaction), 'slug', (slug) => SelfServiceTag.create({ name, slug }, { transaction }));
      } catch (err) {
        if (duplicateOf(err)?.key !== 'name') throw err;
        tag = await SelfServiceTag.findOne({ where: { name }, transaction, lock: transaction.LOCK.SHARE });
        if (!tag) throw err;
      }
    }
    if (!out.some((t) => t.id === tag!.id)) out.push(tag);
  }
  return out;
}

export const tagResource: ResourceDef<SelfServiceTag> = {
  path: '/tag',
  model: SelfServiceTag,
  label: 'tag',
  sortable: ['name', 'slug', 'created_at', 'updated_at'],
  translations: TAG_TRANSLATIONS,
  createSchema: Joi.object({ name: field.string().required(), slug: slugField() }),
  updateSchema: Joi.object({ name: field.string(), slug: slugField() }),

  async create(input, { transaction }) {
    await assertNameFree(input.name, null, transaction);
    // No locks (see assertNameFree): the unique keys decide a race. A given slug another create
    // took first is the client's 422 (db/uniqueKeys.ts); a generated one moves on to the next free.
    const create = (slug: string) => SelfServiceTag.create({ name: input.name, slug }, { transaction });
    if (input.slug) {
      await assertSlugFree(input.slug, { ...slugScope(transaction), lock: false });
      return create(input.slug);
    }
    return writeWithFreeSlug(slugify(input.name, 'tag'), slugScope(transaction), 'slug', create);
  },

  async update(tag, input, { transaction }) {
    const values: Record<string, any> = {};
    if (input.name !== undefined) {
      await assertNameFree(input.name, tag.id, transaction);
      values.name = input.name;
    }
    if (input.slug) values.slug = await keepOrMoveSlug(input.slug, tag.slug, slugScope(transaction, tag.id));
    await tag.update(values, { transaction });
  },

  async destroy(tag, { transaction }) {
    // Its articles lose it (the links go with the tag): they changed.
    const articles = await ArticleTag.findAll({ attributes: ['article_id'], where: { tag_id: tag.id }, transaction });
    await tag.destroy({ transaction });
    await touchArticles(articles.map((a) => a.article_id), transaction);
  },

  serialize: (tag) => serializeTag(tag),
};

export const tagRouter = resourceRouter(tagResource);
