import { Op, type Transaction, type WhereOptions } from 'sequelize';
import type { ModelCtor } from 'sequelize-typescript';
import type { Entity } from './entity';
import { ValidationError } from '../errors';
import type { Condition } from '../http/listQuery';
import { isBound } from './sql';
import { Joi } from '../lib/validation';
import { duplicateOf } from './uniqueKeys';

/**
 * Slugs: lowercase letters, digits and hyphens, generated from the name (or title) when none is
 * given, and unique within their scope (roles and self-service tags across the help desk,
 * self-service types per brand, categories and articles per type) with `-2`, `-3`... A slug that
 * is given must be free in its scope.
 */

export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const SLUG_MAX = 255;
/** Room left for a `-<n>` suffix. */
const BASE_MAX = 240;

/** The `slug` body field: its format is checked, it is never rewritten; empty means "make one". */
export const slugField = () => Joi.string().trim().max(SLUG_MAX).pattern(SLUG_PATTERN, 'slug').allow('', null);

/** The rule of a translated slug (`slug:<locale>`), for a `TranslationSpec`. */
export const slugRule = (value: string, key: string): string | null => {
  if (value.length > SLUG_MAX) return `The ${key} may not be greater than ${SLUG_MAX} characters.`;
  return SLUG_PATTERN.test(value) ? null : `The ${key} format is invalid.`;
};

/** `Café & Crème: FAQ` → `cafe-creme-faq`; `fallback` when nothing is left (a name of symbols). */
export function slugify(text: string, fallback: string): string {
  const slug = text.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase()
    .replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, BASE_MAX).replace(/-+$/, '');
  return slug || fallback;
}

export interface SlugScope<M extends Entity> {
  model: ModelCtor<M>;
  /** The records the slug must differ from: `{ brand_id }`, or a subquery (articles sharing a type). */
  scope: Condition;
  /** The record itself, on an update. */
  exceptId?: number | null;
  transaction: Transaction;
  /** false: the scope's slugs are read without a lock (as writeWithFreeSlug always reads them). Default: a locking read (below). */
  lock?: boolean;
}

/** What a suffix is added to: short enough that `-<n>` still fits the column. */
const stemOf = (base: string) => (base.length > BASE_MAX ? base.slice(0, BASE_MAX).replace(/-+$/, '') : base);

/**
 * The slugs of the scope that are `base` or `<stem>-<anything>`, read with a lock: the index range
 * is locked, so two writers cannot both take the same free slug (one waits, or InnoDB reports a
 * deadlock and the request's transaction runs again).
 */
async function takenSlugs<M extends Entity>(base: string, s: SlugScope<M>): Promise<Set<string>> {
  const own: WhereOptions = { [Op.or]: [{ slug: base }, { slug: { [Op.like]: `${stemOf(base)}-%` } }] };
  const scope = isBound(s.scope) ? (s.scope.literal as WhereOptions) : s.scope;
  const rows = await (s.model as any).findAll({
    attributes: ['id', 'slug'],
    where: { [Op.and]: [scope, own, ...(s.exceptId ? [{ id: { [Op.ne]: s.exceptId } }] : [])] },
    replacements: isBound(s.scope) ? s.scope.replacements : undefined,
    transaction: s.transaction,
    ...(s.lock === false ? {} : { lock: s.transaction.LOCK.UPDATE }),
  });
  return new Set(rows.map((r: { slug: string }) => r.slug));
}

/** The first of `base`, `base-2`, `base-3`... not in `taken`. */
function firstFree(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base;
  const stem = stemOf(base);
  for (let n = 2; ; n++) if (!taken.has(`${stem}-${n}`)) return `${stem}-${n}`;
}

/** The first of `base`, `base-2`, `base-3`... that no record of the scope has. */
export async function uniqueSlug<M extends Entity>(base: string, s: SlugScope<M>): Promise<string> {
  return firstFree(base, await takenSlugs(base, s));
}

/** How many slugs writeWithFreeSlug tries before it gives the error up. */
const SLUG_TRIES = 50;

/**
 * Writes a record with the first free slug of `base` in the scope, without locking the scope's
 * slugs: `write(slug)` stores it, and when the slug's unique key (`key`) refuses it (another
 * writer committed it after this transaction read the scope), the next one is tried, in the same
 * transaction (a refused INSERT undoes only itself). Locking the range instead makes parallel
 * writers that find it empty each hold its gap while waiting to insert into it: they deadlock in
 * turn, and a request can lose every retry.
 */
export async function writeWithFreeSlug<M extends Entity, T>(base: string, s: SlugScope<M>, key: string, write: (slug: string) => Promise<T>): Promise<T> {
  const taken = new Set(await takenSlugs(base, { ...s, lock: false }));
  for (let tries = 1; ; tries++) {
    const slug = firstFree(base, taken);
    try {
      return await write(slug);
    } catch (err) {
      if (tries >= SLUG_TRIES || duplicateOf(err)?.key !== key) throw err;
      taken.add(slug);
    }
  }
}

/** A slug that was given: 422 when a record of the scope has it. */
export async function assertSlugFree<M extends Entity>(slug: string, s: SlugScope<M>): Promise<void> {
  if ((await takenSlugs(slug, s)).has(slug)) throw new ValidationError('The slug has already been taken.');
}

/** The slug to store: the given one when free (else 422), or one generated from `name`. */
export async function chooseSlug<M extends Entity>(given: string | null | undefined, name: string, fallback: string, s: SlugScope<M>): Promise<string> {
  if (given) {
    await assertSlugFree(given, s);
    return given;
  }
  return uniqueSlug(slugify(name, fallback), s);
}

/**
 * The slug of a record on an update: a given slug must be free in the (possibly new) scope; else
 * the current slug is kept when it is still free there (a record moved to another brand or type),
 * or gets a suffix.
 */
export async function keepOrMoveSlug<M extends Entity>(given: string | null | undefined, current: string, s: SlugScope<M>): Promise<string> {
  if (given) {
    await assertSlugFree(given, s);
    return given;
  }
  return uniqueSlug(current, s);
}
