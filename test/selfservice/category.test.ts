import { Op } from 'sequelize';
import { ArticleType, DomainEvent, SelfServiceCategory } from '../../src/db/models';
import { LINK_TYPE_HOLDS_NO_CATEGORIES } from '../../src/selfservice/category';
import { sequelize } from '../../src/db/sequelize';
import { nowSec, useApi, unique } from '../helpers/app';
import { expectDeleted, expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';
import { CATEGORY_KEYS, TYPE_SUMMARY_KEYS, factories, ids, slugOf } from './support';

const api = useApi();
const make = factories(api);
const BASE = '/api/selfservice/category';

/** Articles last changed long ago, so that a change's touch shows. */
const backdate = (articleIds: number[]) => sequelize().query('UPDATE articles SET updated_at = 1000 WHERE id IN (:articleIds)', { replacements: { articleIds } });

const show = async (id: number, query?: Record<string, unknown>) => expectSuccess(await api.get(`${BASE}/${id}`, query));

/** The last event id now, and later the articles of the `article.updated` events after it (sorted). */
const lastEventId = async () => ((await DomainEvent.max('id')) as number | null) ?? 0;
const articlesUpdatedAfter = async (eventId: number) => (await DomainEvent.findAll({ where: { id: { [Op.gt]: eventId }, name: 'article.updated' }, order: [['id', 'ASC']] }))
  .map((e) => JSON.parse(e.payload).articleId as number).sort((a, b) => a - b);

describe('POST /api/selfservice/category', () => {
  it('creates a category with its type embedded', async () => {
    const type = await make.type({ 'name:fr': 'Le type' });
    const name = unique('Getting Started');
    const data = expectSuccess(await api.post(BASE, { type_id: type.id, name }), 'Successfully created new category!');
    expect(Object.keys(data).sort()).toEqual([...CATEGORY_KEYS, 'type', 'translations'].sort());
    expect(data).toMatchObject({ type_id: type.id, parent: null, name, slug: slugOf(name), public: 0, parent_public: 1, translations: [] });
    expect(Object.keys(data.type).sort()).toEqual([...TYPE_SUMMARY_KEYS, 'translations'].sort());
    expect(data.type).toMatchObject({ id: type.id, name: type.name, slug: type.slug, description: 'A type', view: 0, icon: 'fa-book', show_on_dashboard: 1 });
    // The embedded type is translated like the type itself.
    expect((await show(data.id, { lang: 'fr' })).type).toMatchObject({ id: type.id, name: 'Le type' });
  });

  it('puts it under a parent of the same type', async () => {
    const type = await make.type();
    const parent = await make.category(type.id, { public: 1 });
    const child = await make.category(type.id, { parent_id: parent.id });
    expect(child).toMatchObject({ parent: parent.id, public: 0, parent_public: 1 });
    expect((await make.category(type.id, { parent_id: 0 })).parent).toBeNull();
  });

  it('goes only into a type of articles: a link type (content 1) holds none, by create or by a move', async () => {
    const link = await make.type({ content: 1, external_link: 'https://docs.example.test/' });
    const before = await SelfServiceCategory.count();
    expectError(await api.post(BASE, { type_id: link.id, name: unique('Nowhere') }), 422, LINK_TYPE_HOLDS_NO_CATEGORIES);
    expect(await SelfServiceCategory.count()).toBe(before);
    const category = await make.category((await make.type()).id);
    expectError(await api.put(`${BASE}/${category.id}`, { type_id: link.id }), 422, LINK_TYPE_HOLDS_NO_CATEGORIES);
    expect((await SelfServiceCategory.findByPk(category.id))!.type_id).toBe(category.type_id);
  });

  it('accepts translations of name and slug', async () => {
    const type = await make.type();
    const data = await make.category(type.id, { name: 'Billing', 'name:fr': 'Facturation', 'slug:fr': 'facturation' });
    expect(data.translations).toEqual([{ category_id: data.id, name: 'Facturation', slug: 'facturation', locale: 'fr' }]);
    expect(await show(data.id, { lang: 'fr' })).toMatchObject({ name: 'Facturation', slug: 'facturation' });
  });

  it('422', async () => {
    const type = await make.type();
    const other = await make.type();
    const foreign = await make.category(other.id);
    expectError(await api.post(BASE, { name: 'x' }), 422, 'The type id field is required.');
    expectError(await api.post(BASE, { type_id: type.id }), 422, 'The name field is required.');
    expectError(await api.post(BASE, { type_id: 999999, name: 'x' }), 422, 'The selected type id is invalid.');
    expectError(await api.post(BASE, { type_id: type.id, name: 'x', parent_id: foreign.id }), 422, 'The selected parent id is invalid.');
    expectError(await api.post(BASE, { type_id: type.id, name: 'x', parent_id: 999999 }), 422, 'The selected parent id is invalid.');
    expectError(await api.post(BASE, { type_id: type.id, name: 'x', public: 'maybe' }), 422, 'The public field must be true or false.');
    expectError(await api.post(BASE, { type_id: type.id, name: 'x', slug: '-x-' }), 422, 'The slug format is invalid.');
    expect(await SelfServiceCategory.count({ where: { type_id: type.id } })).toBe(0);
  });

  it('slugs are unique per type', async () => {
    const [a, b] = [await make.type(), await make.type()];
    const name = unique('Accounts');
    const slugs = [(await make.category(a.id, { name })).slug, (await make.category(a.id, { name })).slug, (await make.category(b.id, { name })).slug];
    expect(slugs).toEqual([slugOf(name), `${slugOf(name)}-2`, slugOf(name)]);
    expectError(await api.post(BASE, { type_id: a.id, name: 'x', slug: slugOf(name) }), 422, 'The slug has already been taken.');
  });
});

describe('parent_public', () => {
  it('is 1 when every ancestor is public, and follows changes of the tree', async () => {
    const type = await make.type();
    const top = await make.category(type.id, { public: 1 });
    const middle = await make.category(type.id, { parent_id: top.id, public: 0 });
    const leaf = await make.category(type.id, { parent_id: middle.id, public: 1 });
    expect([top.parent_public, middle.parent_public, leaf.parent_public]).toEqual([1, 1, 0]);

    // The top becomes private: everything below it is hidden.
    await api.put(`${BASE}/${top.id}`, { public: 0 });
    expect([(await show(middle.id)).parent_public, (await show(leaf.id)).parent_public]).toEqual([0, 0]);
    // Both public again: the leaf is reachable.
    await api.put(`${BASE}/${top.id}`, { public: 1 });
    await api.put(`${BASE}/${middle.id}`, { public: 1 });
    expect((await show(leaf.id)).parent_public).toBe(1);
    // Moved to the top level, a category has no ancestor.
    await api.put(`${BASE}/${top.id}`, { public: 0 });
    expect((await show(leaf.id)).parent_public).toBe(0);
    expect(expectSuccess(await api.put(`${BASE}/${leaf.id}`, { parent_id: 0 }), 'Successfully updated the category!')).toMatchObject({ parent: null, parent_public: 1 });
  });
});

describe('GET /api/selfservice/category', () => {
  it('filters by type, parent (0: top level), public and parent_public', async () => {
    const type = await make.type();
    const top = await make.category(type.id, { public: 0 });
    const open = await make.category(type.id, { public: 1 });
    const child = await make.category(type.id, { parent_id: top.id, public: 1 });
    const list = async (q: Record<string, unknown>) => ids(expectList(await api.get(BASE, { type_id: type.id, ...q })));
    expect(await list({})).toEqual([top.id, open.id, child.id]);
    expect(await list({ parent_id: 0 })).toEqual([top.id, open.id]);
    expect(await list({ parent_id: top.id })).toEqual([child.id]);
    expect(await list({ public: 1 })).toEqual([open.id, child.id]);
    expect(await list({ public: 0 })).toEqual([top.id]);
    expect(await list({ parent_public: 0 })).toEqual([child.id]);
    expect(await list({ parent_public: 1, public: 1 })).toEqual([open.id]);
    expect(await list({ order_column: 'name', order_direction: 'desc', limit: 1 })).toHaveLength(1);
    expectError(await api.get(BASE, { parent_id: -1 }), 422, 'The parent id must be at least 0.');
  });

  it('404 with the label category', async () => {
    expectNotFound(await api.get(`${BASE}/999999`), 'category');
    expectNotFound(await api.put(`${BASE}/999999`, { name: 'x' }), 'category');
    expectNotFound(await api.del(`${BASE}/999999`), 'category');
  });
});

describe('PUT /api/selfservice/category/{id}', () => {
  it('refuses a parent that is the category itself or below it', async () => {
    const type = await make.type();
    const a = await make.category(type.id);
    const b = await make.category(type.id, { parent_id: a.id });
    const c = await make.category(type.id, { parent_id: b.id });
    expectError(await api.put(`${BASE}/${a.id}`, { parent_id: a.id }), 422, 'The selected parent id is invalid.');
    expectError(await api.put(`${BASE}/${a.id}`, { parent_id: c.id }), 422, 'The selected parent id is invalid.');
    expect(expectSuccess(await api.put(`${BASE}/${c.id}`, { parent_id: a.id }), 'Successfully updated the category!').parent).toBe(a.id);
  });

  it('moves a category with its subcategories to another type; its articles follow', async () => {
    const [from, to] = [await make.type(), await make.type()];
    const top = await make.category(from.id, { name: 'Moving' });
    const below = await make.category(from.id, { parent_id: top.id, name: 'Below' });
    const clash = await make.category(to.id, { name: 'Below' });
    const article = await make.article({ category: [below.id] });
    await backdate([article.id]);
    const before = await lastEventId();
    const moved = expectSuccess(await api.put(`${BASE}/${top.id}`, { type_id: to.id }), 'Successfully updated the category!');
    expect(await articlesUpdatedAfter(before)).toEqual([article.id]);
    expect(moved).toMatchObject({ type_id: to.id, parent: null });
    expect(moved.type.id).toBe(to.id);
    expect(await show(below.id)).toMatchObject({ type_id: to.id, parent: top.id, slug: `${clash.slug}-2` });
    expect((await ArticleType.findAll({ where: { article_id: article.id } })).map((t) => t.type_id)).toEqual([to.id]);
    // Its types changed: the export sends it again.
    expect(expectSuccess(await api.get(`/api/selfservice/article/${article.id}`)).updated_at).toBeGreaterThanOrEqual(nowSec() - 5);
    expectError(await api.put(`${BASE}/${top.id}`, { type_id: 999999 }), 422, 'The selected type id is invalid.');
  });

  it('an article it brings into a type where its slug is taken takes the first free one; the article there keeps its own', async () => {
    const [from, to] = [await make.type(), await make.type()];
    const moving = await make.category(from.id);
    const staying = await make.category(to.id);
    const slug = unique('twin').toLowerCase();
    const there = await make.article({ category: [staying.id], slug });
    const arriving = await make.article({ category: [moving.id], slug });
    expectSuccess(await api.put(`${BASE}/${moving.id}`, { type_id: to.id }), 'Successfully updated the category!');
    const article = async (id: number) => expectSuccess(await api.get(`/api/selfservice/article/${id}`));
    expect((await article(there.id)).slug).toBe(slug);
    expect((await article(arriving.id)).slug).toBe(`${slug}-2`);
    // Each can be sent back as it is, and an update that changes nothing renames neither.
    for (const a of [there, arriving]) {
      const shown = await article(a.id);
      expectSuccess(await api.put(`/api/selfservice/article/${a.id}`, { slug: shown.slug, category: shown.categories.map((c: any) => c.id) }), 'Successfully updated the article!');
      expect((await article(a.id)).slug).toBe(shown.slug);
    }
  });

  it('an update carrying only name:fr deletes the de translation', async () => {
    const type = await make.type();
    const cat = await make.category(type.id, { name: 'Orders', 'name:de': 'Bestellungen' });
    const data = expectSuccess(await api.put(`${BASE}/${cat.id}`, { 'name:fr': 'Commandes' }), 'Successfully updated the category!');
    expect(data.translations).toEqual([{ category_id: cat.id, name: 'Commandes', slug: null, locale: 'fr' }]);
    expect((await show(cat.id, { lang: 'de' })).name).toBe('Orders');
  });
});

describe('DELETE /api/selfservice/category/{id}', () => {
  it('refuses a category with subcategories', async () => {
    const type = await make.type();
    const parent = await make.category(type.id);
    await make.category(type.id, { parent_id: parent.id });
    expectError(await api.del(`${BASE}/${parent.id}`), 422, 'The category cannot be deleted while it has subcategories: move or delete them first.');
  });

  it('deletes a category; its articles stay, out of its type unless another category keeps them there', async () => {
    const type = await make.type();
    const [a, b] = [await make.category(type.id), await make.category(type.id)];
    const both = await make.article({ category: [a.id, b.id] });
    const only = await make.article({ category: [a.id] });
    const other = await make.article({ category: [b.id] });
    await backdate([both.id, only.id, other.id]);
    const before = await lastEventId();
    expectDeleted(await api.del(`${BASE}/${a.id}`), 'category');
    // Each article it held changed: one article.updated event each.
    expect(await articlesUpdatedAfter(before)).toEqual([both.id, only.id].sort((x, y) => x - y));
    expectNotFound(await api.get(`${BASE}/${a.id}`), 'category');
    const first = expectSuccess(await api.get(`/api/selfservice/article/${both.id}`));
    expect(ids(first.categories)).toEqual([b.id]);
    expect(ids(first.types)).toEqual([type.id]);
    const second = expectSuccess(await api.get(`/api/selfservice/article/${only.id}`));
    expect(second).toMatchObject({ categories: [], types: [] });
    // Their categories changed: the export sends them again; an article of another category is left alone.
    for (const changed of [first, second]) expect(changed.updated_at).toBeGreaterThanOrEqual(nowSec() - 5);
    expect(expectSuccess(await api.get(`/api/selfservice/article/${other.id}`)).updated_at).toBe(1000);
  });
});

describe('deleting a type or a tag', () => {
  it('touches the articles it held, each an article.updated event; other articles are left alone', async () => {
    const [type, kept] = [await make.type(), await make.type()];
    const [c1, c2, elsewhere] = [await make.category(type.id), await make.category(type.id), await make.category(kept.id)];
    const tag = unique('gone-tag');
    const inType = await make.article({ category: [c1.id] });
    const alsoInType = await make.article({ category: [c2.id, elsewhere.id], tag: [tag] });
    const other = await make.article({ category: [elsewhere.id] });
    await backdate([inType.id, alsoInType.id, other.id]);
    let before = await lastEventId();
    expectDeleted(await api.del(`/api/selfservice/type/${type.id}`), 'type');
    expect(await articlesUpdatedAfter(before)).toEqual([inType.id, alsoInType.id].sort((x, y) => x - y));
    const article = async (id: number) => expectSuccess(await api.get(`/api/selfservice/article/${id}`));
    expect(await article(inType.id)).toMatchObject({ categories: [], types: [], frontend_url: null });
    expect((await article(alsoInType.id)).updated_at).toBeGreaterThanOrEqual(nowSec() - 5);
    expect((await article(other.id)).updated_at).toBe(1000);

    await backdate([alsoInType.id]);
    const tagId = (await article(alsoInType.id)).tags[0].id;
    before = await lastEventId();
    expectDeleted(await api.del(`/api/selfservice/tag/${tagId}`), 'tag');
    expect(await articlesUpdatedAfter(before)).toEqual([alsoInType.id]);
    expect(await article(alsoInType.id)).toMatchObject({ tags: [] });
    expect((await article(alsoInType.id)).updated_at).toBeGreaterThanOrEqual(nowSec() - 5);
  });
});
