import { Article, ArticleAttachment, ArticleCategory, ArticleComment, ArticleTag, ArticleType, Brand, SelfServiceTag, Translation, Upload } from '../../src/db/models';
import { createArticle, type ArticleInput } from '../../src/selfservice/article/service';
import { useApi, unique, nowSec } from '../helpers/app';
import { raceAfterHeld } from '../helpers/races';
import { expectDeleted, expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';
import { countWarm, measureList } from '../helpers/queries';
import { ARTICLE_KEYS, CATEGORY_KEYS, TAG_KEYS, TYPE_SUMMARY_KEYS, factories, ids, slugOf } from './support';

const api = useApi();
const make = factories(api);
const BASE = '/api/selfservice/article';

const show = async (id: number, query?: Record<string, unknown>) => expectSuccess(await api.get(`${BASE}/${id}`, query));
const list = async (query: Record<string, unknown>) => ids(expectList(await api.get(BASE, { limit: 1000, ...query })));

/** A type with one category, and an operator: what most articles need. */
async function setting() {
  const type = await make.type();
  const category = await make.category(type.id);
  const author = await make.operator();
  return { type, category, author };
}

describe('POST /api/selfservice/article', () => {
  it('creates an article with the defaults, its categories, types and tags', async () => {
    const { type, category, author } = await setting();
    const before = nowSec();
    const title = unique('How To Reset A Password');
    const data = expectSuccess(await api.post(BASE, { author_id: author.id, title, text: '<p>Click reset.</p>', category: [category.id] }), 'Successfully created new article!');
    expect(Object.keys(data).sort()).toEqual([...ARTICLE_KEYS, 'translations'].sort());
    expect(data).toMatchObject({
      author_id: author.id, title, slug: slugOf(title), excerpt: null, text: '<p>Click reset.</p>', published: 0, published_at: null,
      protected: 0, pinned: 0, tags: [], attachments: [], translations: [],
    });
    expect(data.created_at).toBeGreaterThanOrEqual(before);
    expect(data.categories).toHaveLength(1);
    expect(Object.keys(data.categories[0]).sort()).toEqual([...CATEGORY_KEYS, 'translations', 'pivot'].sort());
    expect(data.categories[0]).toMatchObject({ id: category.id, type_id: type.id, name: category.name, pivot: { article_id: data.id, category_id: category.id } });
    expect(data.types).toHaveLength(1);
    expect(Object.keys(data.types[0]).sort()).toEqual([...TYPE_SUMMARY_KEYS, 'translations', 'pivot'].sort());
    expect(data.types[0]).toMatchObject({ id: type.id, slug: type.slug, pivot: { article_id: data.id, type_id: type.id, views: 0 } });
    expect(await show(data.id)).toEqual(data);
  });

  it('takes every field; published now unless published_at says when', async () => {
    const { category, author } = await setting();
    const now = nowSec();
    const data = await make.article({
      author_id: author.id, category: [category.id], excerpt: 'Short', published: 1, protected: 1, pinned: 1, slug: unique('my-article').toLowerCase(),
    });
    expect(data).toMatchObject({ excerpt: 'Short', published: 1, protected: 1, pinned: 1 });
    expect(data.published_at).toBeGreaterThanOrEqual(now);
    expect((await make.article({ category: [category.id], published: 1, published_at: 1600000000 })).published_at).toBe(1600000000);
  });

  it('names tags by name: existing ones are reused whatever the case, missing ones created', async () => {
    const existing = await make.tag({ name: unique('Billing') });
    const fresh = unique('Invoices');
    const data = await make.article({ tag: [existing.name.toUpperCase(), fresh, fresh] });
    const created = (await SelfServiceTag.findOne({ where: { name: fresh } }))!;
    expect(created.slug).toBe(slugOf(fresh));
    expect(data.tags.map((t: any) => [t.id, t.name, t.pivot])).toEqual([
      [existing.id, existing.name, { article_id: data.id, tag_id: existing.id }],
      [created.id, fresh, { article_id: data.id, tag_id: created.id }],
    ]);
    expect(Object.keys(data.tags[0]).sort()).toEqual([...TAG_KEYS, 'translations', 'pivot'].sort());
  });

  it('is in the type of each of its categories', async () => {
    const [a, b] = [await make.type(), await make.type()];
    const [ca, ca2, cb] = [await make.category(a.id), await make.category(a.id), await make.category(b.id)];
    const data = await make.article({ category: [cb.id, ca.id, ca2.id] });
    expect(ids(data.categories)).toEqual([ca.id, ca2.id, cb.id]);
    expect(data.types.map((t: any) => t.pivot)).toEqual([
      { article_id: data.id, type_id: a.id, views: 0 }, { article_id: data.id, type_id: b.id, views: 0 },
    ]);
  });

  it('has a frontend URL per type, on its brand', async () => {
    const brand = await make.brand();
    const [a, b] = [await make.type({ brand_id: brand.id }), await make.type()];
    const data = await make.article({ category: [(await make.category(a.id)).id, (await make.category(b.id)).id] });
    const base = brand.system_url!.replace(/\/$/, '');
    expect(data.frontend_url).toBe(`${base}/${a.slug}/article/${data.id}/${data.slug}`);
    const main = (await Brand.findByPk(b.brand_id))!;
    expect((await show(data.id, { type_id: b.id })).frontend_url).toBe(`${main.system_url!.replace(/\/$/, '')}/${b.slug}/article/${data.id}/${data.slug}`);
  });

  it('refuses a category its type kept when it became a link: a link type holds no articles', async () => {
    const { type, category, author } = await setting();
    const other = await make.category((await make.type()).id);
    expectSuccess(await api.put(`/api/selfservice/type/${type.id}`, { content: 1, external_link: 'https://example.com/kb' }), 'Successfully updated the type!');
    const title = unique('Linked away');
    expectError(await api.post(BASE, { author_id: author.id, title, text: 'x', category: [other.id, category.id] }), 422,
      'The selected category.1 is invalid: its type links elsewhere (content 1) and holds no articles.');
    expect(await Article.count({ where: { title } })).toBe(0);
    expectSuccess(await api.post(BASE, { author_id: author.id, title, text: 'x', category: [other.id] }), 'Successfully created new article!');
  });

  it('two articles of one title created at once get two slugs', async () => {
    const { category, author } = await setting();
    const title = unique('Raced Title');
    // The first create has chosen its slug and not committed when the second starts: the second
    // waits for the type's lock, then must see the first article.
    const second = await raceAfterHeld(
      (t) => createArticle({ author_id: author.id, title, text: 'x', category: [category.id], published: 0, protected: 0, pinned: 0 } as ArticleInput, t),
      () => api.post(BASE, { author_id: author.id, title, text: 'x', category: [category.id] }).then((res) => res),
      'FOR UPDATE', 'the second create to wait for the first',
    );
    expect(expectSuccess(second, 'Successfully created new article!').slug).toBe(`${slugOf(title)}-2`);
    expect((await Article.findAll({ where: { title } })).map((a) => a.slug).sort()).toEqual([slugOf(title), `${slugOf(title)}-2`]);
  });

  it('slugs are unique among the articles of a type', async () => {
    const { category } = await setting();
    const other = await make.category((await make.type()).id);
    const title = unique('Same Title');
    const a = await make.article({ title, category: [category.id] });
    const b = await make.article({ title, category: [category.id] });
    const c = await make.article({ title, category: [other.id] });
    expect([a.slug, b.slug, c.slug]).toEqual([slugOf(title), `${slugOf(title)}-2`, slugOf(title)]);
    expectError(await api.post(BASE, { author_id: a.author_id, title: 'x', text: 'x', category: [category.id], slug: a.slug }), 422, 'The slug has already been taken.');
    // In both types: taken in one of them is taken.
    const d = await make.article({ title, category: [other.id, category.id] });
    expect(d.slug).toBe(`${slugOf(title)}-3`);
  });

  it('accepts translations of title, slug, excerpt and text', async () => {
    const data = await make.article({ title: 'Printing', 'title:fr': 'Impression', 'slug:fr': 'impression', 'excerpt:fr': 'Court', 'text:de': 'Drucken' });
    expect(data.translations).toEqual([
      { article_id: data.id, title: null, slug: null, excerpt: null, text: 'Drucken', locale: 'de' },
      { article_id: data.id, title: 'Impression', slug: 'impression', excerpt: 'Court', text: null, locale: 'fr' },
    ]);
    const fr = await show(data.id, { lang: 'fr' });
    expect(fr).toMatchObject({ title: 'Impression', slug: 'impression', excerpt: 'Court', text: 'Some helpful text.' });
    expect(fr.translations).toBeUndefined();
  });

  it('422', async () => {
    const { category, author } = await setting();
    const user = await make.user();
    const ok = { author_id: author.id, title: 'x', text: 'y', category: [category.id] };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...ok, author_id: undefined }, 'The author id field is required.'],
      [{ ...ok, author_id: user.id }, 'The selected author id is invalid.'],
      [{ ...ok, author_id: 999999 }, 'The selected author id is invalid.'],
      [{ ...ok, title: '' }, 'The title field is required.'],
      [{ ...ok, text: undefined }, 'The text field is required.'],
      [{ ...ok, category: undefined }, 'The category field is required.'],
      [{ ...ok, category: '' }, 'The category field is required.'],
      [{ ...ok, category: [category.id, 999999] }, 'The selected category.1 is invalid.'],
      [{ ...ok, category: ['abc'] }, 'The category.0 must be an integer.'],
      [{ ...ok, excerpt: 'e'.repeat(256) }, 'The excerpt may not be greater than 255 characters.'],
      [{ ...ok, 'excerpt:fr': 'e'.repeat(256) }, 'The excerpt:fr may not be greater than 255 characters.'],
      [{ ...ok, slug: 'Bad Slug' }, 'The slug format is invalid.'],
      [{ ...ok, published: 'soon' }, 'The published field must be true or false.'],
      [{ ...ok, published_at: 'tomorrow' }, 'The published at must be an integer.'],
      [{ ...ok, 'name:fr': 'x' }, 'The name:fr field is not translatable.'],
    ];
    for (const [body, message] of cases) expectError(await api.post(BASE, body), 422, message);
    expect(await Article.count({ where: { title: 'x' } })).toBe(0);
  });
});

describe('GET /api/selfservice/article/{id}', () => {
  it('counts views per type with increment_views and type_id', async () => {
    const [a, b] = [await make.type(), await make.type()];
    const data = await make.article({ category: [(await make.category(a.id)).id, (await make.category(b.id)).id] });
    await show(data.id, { type_id: a.id, increment_views: 1 });
    await show(data.id, { type_id: a.id, increment_views: 'true' });
    const after = await show(data.id, { type_id: b.id, increment_views: 0 });
    expect(after.types.map((t: any) => [t.id, t.pivot.views])).toEqual([[a.id, 2], [b.id, 0]]);
    await Promise.all([1, 2, 3].map(() => api.get(`${BASE}/${data.id}`, { type_id: b.id, increment_views: 1 })));
    expect((await ArticleType.findOne({ where: { article_id: data.id, type_id: b.id } }))!.views).toBe(3);
  });

  it('422 for increment_views without type_id, or a type the article is not in', async () => {
    const data = await make.article();
    expectError(await api.get(`${BASE}/${data.id}`, { increment_views: 1 }), 422, 'The type id field is required when increment views is 1.');
    expectError(await api.get(`${BASE}/${data.id}`, { type_id: (await make.type()).id }), 422, 'The selected type id is invalid.');
    expectError(await api.get(`${BASE}/${data.id}`, { type_id: 'x' }), 422, 'The type id must be an integer.');
    expect(data.types[0].pivot.views).toBe(0);
    expect((await show(data.id)).types[0].pivot.views).toBe(0);
  });

  it('404 with the label article', async () => {
    expectNotFound(await api.get(`${BASE}/999999`), 'article');
    expectNotFound(await api.get(`${BASE}/999999`, { type_id: 1, increment_views: 1 }), 'article');
    expectNotFound(await api.put(`${BASE}/999999`, { title: 'x' }), 'article');
    expectNotFound(await api.del(`${BASE}/999999`), 'article');
  });
});

describe('GET /api/selfservice/article', () => {
  it('filters by type, category (with subcategories over several levels) and tag', async () => {
    const type = await make.type();
    const top = await make.category(type.id);
    const mid = await make.category(type.id, { parent_id: top.id });
    const low = await make.category(type.id, { parent_id: mid.id });
    const side = await make.category(type.id);
    const tag = await make.tag();
    const inTop = await make.article({ category: [top.id] });
    const inMid = await make.article({ category: [mid.id], tag: [tag.name] });
    const inLow = await make.article({ category: [low.id, side.id], tag: [tag.name] });
    const inSide = await make.article({ category: [side.id] });
    const elsewhere = await make.article();

    expect(await list({ type_id: type.id })).toEqual(ids([inTop, inMid, inLow, inSide]));
    expect(await list({ category_id: top.id })).toEqual([inTop.id]);
    expect(await list({ category_id: top.id, include_subcategories: 0 })).toEqual([inTop.id]);
    expect(await list({ category_id: top.id, include_subcategories: 1 })).toEqual(ids([inTop, inMid, inLow]));
    expect(await list({ category_id: mid.id, include_subcategories: 1 })).toEqual(ids([inMid, inLow]));
    expect(await list({ category_id: low.id, include_subcategories: 1 })).toEqual([inLow.id]);
    expect(await list({ tag_id: tag.id })).toEqual(ids([inMid, inLow]));
    expect(await list({ tag_id: tag.id, category_id: top.id, include_subcategories: 1 })).toEqual(ids([inMid, inLow]));
    expect(await list({ type_id: elsewhere.types[0].id })).toEqual([elsewhere.id]);
    expect(await list({ category_id: 999999 })).toEqual([]);
  });

  it('filters by published, protected and pinned', async () => {
    const { type, category } = await setting();
    const plain = await make.article({ category: [category.id] });
    const published = await make.article({ category: [category.id], published: 1 });
    const guarded = await make.article({ category: [category.id], protected: 1, pinned: 1 });
    expect(await list({ type_id: type.id, published: 1 })).toEqual([published.id]);
    expect(await list({ type_id: type.id, published: 0 })).toEqual(ids([plain, guarded]));
    expect(await list({ type_id: type.id, protected: 1 })).toEqual([guarded.id]);
    expect(await list({ type_id: type.id, pinned: 1 })).toEqual([guarded.id]);
    expect(await list({ type_id: type.id, pinned: 0, protected: 0 })).toEqual(ids([plain, published]));
  });

  it('filters by DATES (bounds inclusive)', async () => {
    const { type, category } = await setting();
    const old = await make.article({ category: [category.id] });
    const recent = await make.article({ category: [category.id] });
    await Article.update({ created_at: 1500000000, updated_at: 1500000500 }, { where: { id: old.id }, hooks: false });
    expect(await list({ type_id: type.id, created_at_max: 1500000000 })).toEqual([old.id]);
    expect(await list({ type_id: type.id, created_at_min: 1500000001 })).toEqual([recent.id]);
    expect(await list({ type_id: type.id, updated_at_min: 1500000500, updated_at_max: 1500000500 })).toEqual([old.id]);
  });

  it('orders and pages', async () => {
    const { type, category } = await setting();
    const made = [];
    for (const title of ['Bravo', 'Alpha', 'Charlie']) made.push(await make.article({ category: [category.id], title: `${title} ${unique()}` }));
    const res = await api.get(BASE, { type_id: type.id, order_column: 'title', start: 2, limit: 1 });
    expect(ids(expectList(res))).toEqual([made[0].id]);
    expect(res.body.count).toBe(3);
    expectError(await api.get(BASE, { order_column: 'text' }), 422, 'The selected order column is invalid.');
  });

  it('runs the same number of queries for 1 or 50 articles', async () => {
    const { type, category, author } = await setting();
    const tags = [await make.tag(), await make.tag()];
    const stamp = nowSec();
    const rows = await Article.bulkCreate(Array.from({ length: 40 }, (_, i) => ({
      author_id: author.id, title: `Bulk ${i}`, slug: `bulk-${i}`, text: 'x', created_at: stamp, updated_at: stamp,
    })));
    await ArticleCategory.bulkCreate(rows.map((r) => ({ article_id: r.id, category_id: category.id })));
    await ArticleType.bulkCreate(rows.map((r) => ({ article_id: r.id, type_id: type.id })));
    await ArticleTag.bulkCreate(rows.flatMap((r) => tags.map((t) => ({ article_id: r.id, tag_id: t.id }))));
    await make.article({ category: [category.id], tag: [tags[0].name], attachment: [{ filename: 'a.txt', contents: Buffer.from('a').toString('base64') }] });
    // Newest first, so that the page of one holds the article with an attachment too.
    const one = await measureList(api, BASE, { type_id: type.id, limit: 1, lang: 'fr', order_direction: 'desc' });
    const fifty = await measureList(api, BASE, { type_id: type.id, limit: 50, lang: 'fr', order_direction: 'desc' });
    expect(expectList(one.res)).toHaveLength(1);
    expect(expectList(fifty.res)).toHaveLength(41);
    expect(fifty.queries.length).toBe(one.queries.length);
    expect(fifty.queries.length).toBeLessThanOrEqual(17);
  });

  it('list, show and search do not read the text kept for the search index, and present every field', async () => {
    const word = unique('Unreadword').toLowerCase().replace(/[^a-z]/g, '');
    const created = await make.article({ title: `Printer ${word}`, text: `<p>Turn the ${word} off.</p>` });
    // The search index's text is stored (the search finds the article by a word of its body).
    expect((await Article.findByPk(created.id))!.search_text).toContain(word);
    const reads: Array<[string, Record<string, unknown>]> = [
      [BASE, { order_direction: 'desc', limit: 5 }], [`${BASE}/${created.id}`, {}], [`${BASE}/search`, { term: word }],
    ];
    for (const [path, query] of reads) {
      const { result, queries } = await countWarm(() => api.get(path, query));
      const data = path === `${BASE}/${created.id}` ? expectSuccess(result) : expectList(result);
      const article = Array.isArray(data) ? data.find((a: any) => a.id === created.id) : data;
      expect(Object.keys(article).sort()).toEqual(Object.keys(created).sort());
      expect(article.text).toBe(`<p>Turn the ${word} off.</p>`);
      const own = queries.filter((q) => /\bFROM `articles`/.test(q));
      expect(own.length).toBeGreaterThan(0);
      for (const q of own) expect(q).not.toMatch(/search_text`?(\s+AS\b|\s*,|\s+FROM\b)/);
    }
  });
});

describe('PUT /api/selfservice/article/{id}', () => {
  it('changes the given fields; categories and tags are replaced, views kept where the type stays', async () => {
    const [a, b] = [await make.type(), await make.type()];
    const [ca, cb] = [await make.category(a.id), await make.category(b.id)];
    const keep = await make.tag();
    const created = await make.article({ category: [ca.id], tag: [keep.name, unique('Dropped')], excerpt: 'e' });
    await show(created.id, { type_id: a.id, increment_views: 1 });
    const title = unique('New Title');
    const data = expectSuccess(await api.put(`${BASE}/${created.id}`, { title, category: [ca.id, cb.id], tag: [keep.name] }), 'Successfully updated the article!');
    expect(data).toMatchObject({ title, slug: created.slug, excerpt: 'e', text: created.text });
    expect(ids(data.categories)).toEqual([ca.id, cb.id]);
    expect(data.types.map((t: any) => [t.id, t.pivot.views])).toEqual([[a.id, 1], [b.id, 0]]);
    expect(ids(data.tags)).toEqual([keep.id]);
    const moved = expectSuccess(await api.put(`${BASE}/${created.id}`, { category: [cb.id], tag: '' }), 'Successfully updated the article!');
    expect(moved.types.map((t: any) => t.id)).toEqual([b.id]);
    expect(moved.tags).toEqual([]);
    expect(await show(created.id)).toEqual(moved);
  });

  it('publishing sets published_at once', async () => {
    const created = await make.article();
    const now = nowSec();
    const published = expectSuccess(await api.put(`${BASE}/${created.id}`, { published: 1 }), 'Successfully updated the article!');
    expect(published.published_at).toBeGreaterThanOrEqual(now);
    await Article.update({ published_at: 1600000000 }, { where: { id: created.id } });
    expect(expectSuccess(await api.put(`${BASE}/${created.id}`, { published: 0 }), 'Successfully updated the article!').published_at).toBe(1600000000);
    expect(expectSuccess(await api.put(`${BASE}/${created.id}`, { published: 1 }), 'Successfully updated the article!').published_at).toBe(1600000000);
    // Empty (a form builder sends every field) or null is no date given: the publication date stays.
    expect(expectSuccess(await api.put(`${BASE}/${created.id}`, { published_at: '' }), 'Successfully updated the article!').published_at).toBe(1600000000);
    expect(expectSuccess(await api.putJson(`${BASE}/${created.id}`, { published_at: null, title: 'Retitled' }), 'Successfully updated the article!'))
      .toMatchObject({ title: 'Retitled', published: 1, published_at: 1600000000 });
    expect(expectSuccess(await api.put(`${BASE}/${created.id}`, { published_at: 1700000000 }), 'Successfully updated the article!').published_at).toBe(1700000000);
    expect((await show(created.id)).published_at).toBe(1700000000);
  });

  it('takes an empty published_at as none given on create: now when published, else none', async () => {
    const now = nowSec();
    expect((await make.article({ published: 1, published_at: '' })).published_at).toBeGreaterThanOrEqual(now);
    expect((await make.article({ published: 0, published_at: '' })).published_at).toBeNull();
  });

  it('keeps the slug unique when the article moves into another type', async () => {
    const [a, b] = [await make.type(), await make.type()];
    const [ca, cb] = [await make.category(a.id), await make.category(b.id)];
    const title = unique('Clash');
    await make.article({ title, category: [cb.id] });
    const created = await make.article({ title, category: [ca.id] });
    expect(created.slug).toBe(slugOf(title));
    const moved = expectSuccess(await api.put(`${BASE}/${created.id}`, { category: [cb.id] }), 'Successfully updated the article!');
    expect(moved.slug).toBe(`${slugOf(title)}-2`);
    expectError(await api.put(`${BASE}/${created.id}`, { slug: slugOf(title) }), 422, 'The slug has already been taken.');
  });

  it('an update carrying only title:fr deletes the other translations', async () => {
    const created = await make.article({ 'title:de': 'Titel', 'text:de': 'Text' });
    const data = expectSuccess(await api.put(`${BASE}/${created.id}`, { 'title:fr': 'Titre' }), 'Successfully updated the article!');
    expect(data.translations).toEqual([{ article_id: created.id, title: 'Titre', slug: null, excerpt: null, text: null, locale: 'fr' }]);
    expect(await Translation.count({ where: { record_type: 'article', record_id: created.id, locale: 'de' } })).toBe(0);
  });

  it('422', async () => {
    const created = await make.article();
    const user = await make.user();
    expectError(await api.put(`${BASE}/${created.id}`, { author_id: user.id }), 422, 'The selected author id is invalid.');
    expectError(await api.put(`${BASE}/${created.id}`, { category: [999999] }), 422, 'The selected category.0 is invalid.');
    expectError(await api.put(`${BASE}/${created.id}`, { title: '' }), 422, 'The title field is required.');
    // Categories sent empty (a form's `category=`, JSON null) are refused as on create, not ignored.
    expectError(await api.put(`${BASE}/${created.id}`, { category: '', title: 'Renamed' }), 422, 'The category field is required.');
    expectError(await api.putJson(`${BASE}/${created.id}`, { category: null }), 422, 'The category field is required.');
    expectError(await api.putJson(`${BASE}/${created.id}`, { category: [] }), 422, 'The category must have at least 1 item.');
    expect(await show(created.id)).toEqual(created);
  });
});

describe('DELETE /api/selfservice/article/{id}', () => {
  it('deletes the article with its links, attachments, comments and translations; uploads stay', async () => {
    const created = await make.article({ tag: [unique('t')], 'title:fr': 'x', attachment: [{ filename: 'a.txt', contents: Buffer.from(unique('file')).toString('base64') }] });
    await api.post('/api/selfservice/comment', { article_id: created.id, name: 'Guest', text: 'Thanks!' });
    expectDeleted(await api.del(`${BASE}/${created.id}`), 'article');
    expectNotFound(await api.get(`${BASE}/${created.id}`), 'article');
    for (const model of [ArticleCategory, ArticleType, ArticleTag, ArticleAttachment, ArticleComment] as any[]) {
      expect(await model.count({ where: { article_id: created.id } })).toBe(0);
    }
    expect(await Translation.count({ where: { record_type: 'article', record_id: created.id } })).toBe(0);
    expect(await Upload.count({ where: { hash: created.attachments[0].upload_hash } })).toBe(1);
  });
});
