import { ArticleCategory, ArticleType, SelfServiceCategory, SelfServiceType, Translation } from '../../src/db/models';
import { useApi, unique, nowSec } from '../helpers/app';
import { expectDeleted, expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';
import { TYPE_KEYS, factories, ids, slugOf } from './support';

const api = useApi();
const make = factories(api);
const BASE = '/api/selfservice/type';

describe('POST /api/selfservice/type', () => {
  it('takes an empty icon as none given: fa-book on create, unchanged on update', async () => {
    const data = expectSuccess(await api.post(BASE, { brand_id: 1, name: unique('Icons'), content: 0, view: 1, description: 'd', icon: '' }), 'Successfully created new type!');
    expect(data.icon).toBe('fa-book');
    expectSuccess(await api.put(`${BASE}/${data.id}`, { icon: 'fa-star' }), 'Successfully updated the type!');
    expect(expectSuccess(await api.put(`${BASE}/${data.id}`, { icon: '' }), 'Successfully updated the type!').icon).toBe('fa-star');
  });

  it('creates a type with the defaults (order: after the brand\'s last type), a slug and the full brand', async () => {
    const before = nowSec();
    const last = Number((await SelfServiceType.max('order', { where: { brand_id: 1 } })) ?? 0);
    const name = unique('Knowledge Base');
    const data = expectSuccess(await api.post(BASE, { brand_id: 1, name, content: 0, view: 1, description: 'Answers' }), 'Successfully created new type!');
    expect(Object.keys(data).sort()).toEqual([...TYPE_KEYS, 'translations'].sort());
    expect(data).toMatchObject({
      brand_id: 1, name, slug: slugOf(name), description: 'Answers', order: last + 1, enabled: 1, protected: 0, internal: 0, content: 0, view: 1,
      icon: 'fa-book', article_ordering: 0, show_on_dashboard: 1, external_link: null, translations: [],
    });
    expect(data.created_at).toBeGreaterThanOrEqual(before);
    const brand = expectSuccess(await api.get('/api/core/brand/1'));
    expect(data.brand).toEqual(brand);
  });

  it('takes every field', async () => {
    const data = await make.type({
      enabled: 0, protected: 1, internal: 1, order: 7, icon: 'fa-newspaper', article_ordering: 2, show_on_dashboard: 0, description: '',
      slug: unique('news').toLowerCase(),
    });
    expect(data).toMatchObject({ enabled: 0, protected: 1, internal: 1, order: 7, icon: 'fa-newspaper', article_ordering: 2, show_on_dashboard: 0, description: null });
  });

  it('an external link type needs the link, and has no view', async () => {
    const data = await make.type({ content: 1, view: undefined, external_link: 'https://docs.example.com/guide' });
    expect(data).toMatchObject({ content: 1, view: 0, external_link: 'https://docs.example.com/guide' });
    expectError(await api.post(BASE, { brand_id: 1, name: 'x', content: 1, description: 'd' }), 422, 'The external link field is required.');
  });

  it('refuses an external link for a type of articles, where it means nothing', async () => {
    const body = { brand_id: 1, name: unique('Articles'), content: 0, view: 0, description: 'd' };
    expectError(await api.post(BASE, { ...body, external_link: 'https://docs.example.com/guide' }), 422, 'The external link field is prohibited when content is 0.');
    expectError(await api.postJson(BASE, { ...body, external_link: 'https://docs.example.com/guide' }), 422, 'The external link field is prohibited when content is 0.');
    // Empty is no link (form builders send every field).
    expect(expectSuccess(await api.post(BASE, { ...body, external_link: '' }), 'Successfully created new type!').external_link).toBeNull();
  });

  it('accepts translations of name, slug and description', async () => {
    const data = await make.type({ name: 'Help', 'name:fr': 'Aide', 'slug:fr': 'aide', 'description:de': 'Hilfe-Seiten' });
    expect(data.translations).toEqual([
      { type_id: data.id, name: null, slug: null, description: 'Hilfe-Seiten', locale: 'de' },
      { type_id: data.id, name: 'Aide', slug: 'aide', description: null, locale: 'fr' },
    ]);
    const fr = expectSuccess(await api.get(`${BASE}/${data.id}`, { lang: 'fr' }));
    expect(fr).toMatchObject({ name: 'Aide', slug: 'aide', description: 'A type' });
    expect(fr.translations).toBeUndefined();
    expect(expectSuccess(await api.get(`${BASE}/${data.id}`, { lang: 'es' })).translations).toHaveLength(2);
  });

  it.each([
    [{ name: 'x', content: 0, view: 0, description: 'd' }, 'The brand id field is required.'],
    [{ brand_id: 1, content: 0, view: 0, description: 'd' }, 'The name field is required.'],
    [{ brand_id: 1, name: 'x', view: 0, description: 'd' }, 'The content field is required.'],
    [{ brand_id: 1, name: 'x', content: 0, description: 'd' }, 'The view field is required.'],
    [{ brand_id: 1, name: 'x', content: 0, view: 0 }, 'The description field is required.'],
    [{ brand_id: 1, name: 'x', content: 0, view: 0, description: '' }, 'The description field is required.'],
    [{ brand_id: 999999, name: 'x', content: 0, view: 0, description: 'd' }, 'The selected brand id is invalid.'],
    [{ brand_id: 1, name: 'x', content: 2, view: 0, description: 'd' }, 'The content field must be true or false.'],
    [{ brand_id: 1, name: 'x', content: 0, view: 0, description: 'd', icon: 'book' }, 'The icon must start with one of the following: fa-.'],
    [{ brand_id: 1, name: 'x', content: 0, view: 0, description: 'd', icon: 'fa-Book Open' }, 'The icon format is invalid.'],
    [{ brand_id: 1, name: 'x', content: 0, view: 0, description: 'd', slug: 'Not A Slug' }, 'The slug format is invalid.'],
    [{ brand_id: 1, name: 'x', content: 0, view: 0, description: 'd', 'slug:fr': 'pas_un_slug' }, 'The slug:fr format is invalid.'],
    [{ brand_id: 1, name: 'x', content: 0, view: 0, description: 'd', article_ordering: 4 }, 'The selected article ordering is invalid.'],
    [{ brand_id: 1, name: 'x', content: 0, view: 0, description: 'd', order: -1 }, 'The order must be at least 0.'],
    [{ brand_id: 1, name: 'x', content: 1, description: 'd', external_link: 'not a url' }, 'The external link must be a valid URL.'],
    [{ brand_id: 1, name: 'x', content: 0, view: 0, description: 'd', 'title:fr': 'x' }, 'The title:fr field is not translatable.'],
  ] as Array<[Record<string, unknown>, string]>)('422 %j', async (body, message) => {
    expectError(await api.post(BASE, body), 422, message);
  });

  it('needs no description for a protected or an internal type', async () => {
    expect((await make.type({ description: undefined, protected: 1 })).description).toBeNull();
    expect((await make.type({ description: undefined, internal: 1 })).description).toBeNull();
  });
});

describe('slugs', () => {
  it('are unique per brand, with a numeric suffix', async () => {
    const other = await make.brand();
    const name = unique('Frequently Asked');
    const a = await make.type({ name });
    const b = await make.type({ name });
    const c = await make.type({ name });
    const d = await make.type({ name, brand_id: other.id });
    expect([a.slug, b.slug, c.slug, d.slug]).toEqual([slugOf(name), `${slugOf(name)}-2`, `${slugOf(name)}-3`, slugOf(name)]);
  });

  it('are made of lowercase letters, digits and hyphens', async () => {
    expect((await make.type({ name: `Café & Crème: ${unique('faq')}!` })).slug).toMatch(/^cafe-creme-[a-z0-9-]+$/);
    expect((await make.type({ name: '%%%' })).slug).toMatch(/^type(-\d+)?$/);
  });

  it('an empty slug is made from the name', async () => {
    const name = unique('Empty Slug');
    expect((await make.type({ name, slug: '' })).slug).toBe(slugOf(name));
  });

  it('a suffix still fits a slug of the longest length', async () => {
    const long = `${unique('x').toLowerCase()}-${'a'.repeat(300)}`.slice(0, 255);
    const other = await make.brand();
    await make.type({ slug: long, brand_id: other.id });
    const type = await make.type({ slug: long });
    const moved = expectSuccess(await api.put(`${BASE}/${type.id}`, { brand_id: other.id }), 'Successfully updated the type!');
    expect(moved.slug).toBe(`${long.slice(0, 240)}-2`);
    expectError(await api.post(BASE, { brand_id: 1, name: 'x', content: 0, view: 0, description: 'd', slug: `${long}a` }), 422, 'The slug may not be greater than 255 characters.');
  });

  it('a slug that is given must be free in the brand', async () => {
    const slug = unique('given').toLowerCase();
    expect((await make.type({ slug })).slug).toBe(slug);
    expectError(await api.post(BASE, { brand_id: 1, name: 'x', content: 0, view: 0, description: 'd', slug }), 422, 'The slug has already been taken.');
    expect((await make.type({ slug, brand_id: (await make.brand()).id })).slug).toBe(slug);
  });
});

describe('GET /api/selfservice/type', () => {
  it('lists without content and external_link; show has them', async () => {
    const brand = await make.brand();
    const type = await make.type({ brand_id: brand.id });
    const data = expectList(await api.get(BASE, { brand_id: brand.id }));
    expect(ids(data)).toEqual([type.id]);
    expect(Object.keys(data[0]).sort()).toEqual(TYPE_KEYS.filter((k) => k !== 'content' && k !== 'external_link').concat('translations').sort());
    expect(data[0].brand.id).toBe(brand.id);
    expect(expectSuccess(await api.get(`${BASE}/${type.id}`))).toMatchObject({ content: 0, external_link: null });
  });

  it.each([
    ['enabled', { enabled: 0 }, { enabled: 1 }],
    ['internal', { internal: 1 }, { internal: 0 }],
    ['content', { content: 1, external_link: 'https://example.com', view: undefined }, { content: 0 }],
    ['view', { view: 1 }, { view: 0 }],
    ['show_on_dashboard', { show_on_dashboard: 0 }, { show_on_dashboard: 1 }],
    ['article_ordering', { article_ordering: 3 }, { article_ordering: 1 }],
  ] as Array<[string, Record<string, unknown>, Record<string, unknown>]>)('filters by %s', async (key, a, b) => {
    const brand = await make.brand();
    const one = await make.type({ brand_id: brand.id, ...a });
    const two = await make.type({ brand_id: brand.id, ...b });
    expect(ids(expectList(await api.get(BASE, { brand_id: brand.id, [key]: a[key] })))).toEqual([one.id]);
    expect(ids(expectList(await api.get(BASE, { brand_id: brand.id, [key]: b[key] })))).toEqual([two.id]);
  });

  it('pages and orders', async () => {
    const brand = await make.brand();
    const made = [await make.type({ brand_id: brand.id, order: 3 }), await make.type({ brand_id: brand.id, order: 1 }), await make.type({ brand_id: brand.id, order: 2 })];
    const res = await api.get(BASE, { brand_id: brand.id, order_column: 'order', order_direction: 'desc', start: 2, limit: 1 });
    expect(ids(expectList(res))).toEqual([made[2].id]);
    expect(res.body.count).toBe(3);
  });

  it('404 with the label type', async () => {
    expectNotFound(await api.get(`${BASE}/999999`), 'type');
    expectNotFound(await api.get(`${BASE}/abc`), 'type');
  });
});

describe('PUT /api/selfservice/type/{id}', () => {
  it('changes the given fields only; a new name keeps the slug', async () => {
    const type = await make.type({ order: 4, icon: 'fa-life-ring', protected: 1 });
    const name = unique('Renamed');
    const data = expectSuccess(await api.put(`${BASE}/${type.id}`, { name, view: 1 }), 'Successfully updated the type!');
    expect(data).toMatchObject({ name, slug: type.slug, view: 1, order: 4, icon: 'fa-life-ring', protected: 1, description: 'A type' });
    expect(expectSuccess(await api.get(`${BASE}/${type.id}`))).toEqual(data);
  });

  it('sets a new slug, and keeps it unique when the type moves to another brand', async () => {
    const other = await make.brand();
    const type = await make.type();
    const taken = await make.type({ brand_id: other.id, slug: type.slug });
    const moved = expectSuccess(await api.put(`${BASE}/${type.id}`, { brand_id: other.id }), 'Successfully updated the type!');
    expect(moved).toMatchObject({ brand_id: other.id, slug: `${type.slug}-2` });
    expect(moved.brand.id).toBe(other.id);
    expectError(await api.put(`${BASE}/${type.id}`, { slug: taken.slug }), 422, 'The slug has already been taken.');
    const slug = unique('fresh').toLowerCase();
    expect(expectSuccess(await api.put(`${BASE}/${type.id}`, { slug }), 'Successfully updated the type!').slug).toBe(slug);
  });

  it('keeps the cross-field rules', async () => {
    const type = await make.type();
    expectError(await api.put(`${BASE}/${type.id}`, { description: '' }), 422, 'The description field is required.');
    expectError(await api.put(`${BASE}/${type.id}`, { content: 1 }), 422, 'The external link field is required.');
    expect(expectSuccess(await api.put(`${BASE}/${type.id}`, { description: '', internal: 1 }), 'Successfully updated the type!').description).toBeNull();
    expectError(await api.put(`${BASE}/${type.id}`, { brand_id: 999999 }), 422, 'The selected brand id is invalid.');
    expectNotFound(await api.put(`${BASE}/999999`, { name: 'x' }), 'type');
  });

  it('refuses an external link for a type of articles; a link type made one of articles drops its link', async () => {
    const articles = await make.type();
    expectError(await api.put(`${BASE}/${articles.id}`, { external_link: 'https://example.com' }), 422, 'The external link field is prohibited when content is 0.');
    expectError(await api.put(`${BASE}/${articles.id}`, { content: 0, external_link: 'https://example.com' }), 422, 'The external link field is prohibited when content is 0.');
    expect(expectSuccess(await api.get(`${BASE}/${articles.id}`)).external_link).toBeNull();
    const link = await make.type({ content: 1, view: undefined, external_link: 'https://docs.example.com/guide' });
    expectError(await api.put(`${BASE}/${link.id}`, { content: 0, external_link: 'https://docs.example.com/other' }), 422, 'The external link field is prohibited when content is 0.');
    // A link type keeps taking its link.
    expect(expectSuccess(await api.put(`${BASE}/${link.id}`, { external_link: 'https://docs.example.com/other' }), 'Successfully updated the type!').external_link).toBe('https://docs.example.com/other');
    const data = expectSuccess(await api.put(`${BASE}/${link.id}`, { content: 0, view: 1 }), 'Successfully updated the type!');
    expect(data).toMatchObject({ content: 0, view: 1, external_link: null });
    expect(expectSuccess(await api.get(`${BASE}/${link.id}`))).toMatchObject({ content: 0, external_link: null });
  });

  it('an update carrying only name:fr deletes the other translations', async () => {
    const type = await make.type({ name: 'Docs', 'name:de': 'Doku', 'description:de': 'Alles' });
    const data = expectSuccess(await api.put(`${BASE}/${type.id}`, { 'name:fr': 'Documentation' }), 'Successfully updated the type!');
    expect(data.translations).toEqual([{ type_id: type.id, name: 'Documentation', slug: null, description: null, locale: 'fr' }]);
    expect(expectSuccess(await api.get(`${BASE}/${type.id}`, { lang: 'de' })).name).toBe('Docs');
  });
});

describe('DELETE /api/selfservice/type/{id}', () => {
  it('deletes the type with its categories; the articles stay', async () => {
    const type = await make.type({ 'name:fr': 'Type' });
    const category = await make.category(type.id, { 'name:fr': 'Catégorie' });
    const article = await make.article({ category: [category.id] });
    expectDeleted(await api.del(`${BASE}/${type.id}`), 'type');
    expectNotFound(await api.get(`${BASE}/${type.id}`), 'type');
    expectNotFound(await api.get(`/api/selfservice/category/${category.id}`), 'category');
    expect(await SelfServiceCategory.count({ where: { type_id: type.id } })).toBe(0);
    expect(await Translation.count({ where: { record_type: 'selfservice_category', record_id: category.id } })).toBe(0);
    expect(await Translation.count({ where: { record_type: 'selfservice_type', record_id: type.id } })).toBe(0);
    expect(await ArticleCategory.count({ where: { article_id: article.id } })).toBe(0);
    expect(await ArticleType.count({ where: { article_id: article.id } })).toBe(0);
    const after = expectSuccess(await api.get(`/api/selfservice/article/${article.id}`));
    expect(after).toMatchObject({ categories: [], types: [], frontend_url: null });
    expectNotFound(await api.del(`${BASE}/${type.id}`), 'type');
  });
});
