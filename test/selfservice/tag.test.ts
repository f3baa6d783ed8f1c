import { ArticleTag, SelfServiceTag } from '../../src/db/models';
import { useApi, unique } from '../helpers/app';
import { expectDeleted, expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';
import { TAG_KEYS, factories, ids, slugOf } from './support';

const api = useApi();
const make = factories(api);
const BASE = '/api/selfservice/tag';

describe('POST /api/selfservice/tag', () => {
  it('creates a tag with a slug', async () => {
    const name = unique('Password Reset');
    const data = expectSuccess(await api.post(BASE, { name }), 'Successfully created new tag!');
    expect(Object.keys(data).sort()).toEqual([...TAG_KEYS, 'translations'].sort());
    expect(data).toMatchObject({ name, slug: slugOf(name), translations: [] });
    expect(expectSuccess(await api.get(`${BASE}/${data.id}`))).toEqual(data);
  });

  it('takes a slug, which must be free across the help desk', async () => {
    const slug = unique('my-tag').toLowerCase();
    expect((await make.tag({ slug })).slug).toBe(slug);
    expectError(await api.post(BASE, { name: unique('x'), slug }), 422, 'The slug has already been taken.');
  });

  it('makes generated slugs unique with a suffix', async () => {
    const base = unique('Refunds');
    const a = await make.tag({ name: base });
    const b = await make.tag({ name: `${base}!` });
    const c = await make.tag({ name: `${base}?` });
    expect([a.slug, b.slug, c.slug]).toEqual([slugOf(base), `${slugOf(base)}-2`, `${slugOf(base)}-3`]);
  });

  it('has one tag per name, whatever the case', async () => {
    const name = unique('Billing');
    await make.tag({ name });
    expectError(await api.post(BASE, { name: name.toUpperCase() }), 422, 'The name has already been taken.');
  });

  it('accepts translations of name and slug', async () => {
    const data = await make.tag({ name: unique('Shipping'), 'name:fr': 'Livraison', 'slug:fr': 'livraison' });
    expect(data.translations).toEqual([{ tag_id: data.id, name: 'Livraison', slug: 'livraison', locale: 'fr' }]);
    expect(expectSuccess(await api.get(`${BASE}/${data.id}`, { lang: 'fr' }))).toMatchObject({ name: 'Livraison', slug: 'livraison' });
    expectError(await api.post(BASE, { name: unique('x'), 'slug:fr': 'Livraison Rapide' }), 422, 'The slug:fr format is invalid.');
  });

  it.each([
    [{}, 'The name field is required.'],
    [{ name: '   ' }, 'The name field is required.'],
    [{ name: 'x'.repeat(256) }, 'The name may not be greater than 255 characters.'],
    [{ name: 'x', slug: 'UPPER' }, 'The slug format is invalid.'],
    [{ name: 'x', 'description:fr': 'x' }, 'The description:fr field is not translatable.'],
  ] as Array<[Record<string, unknown>, string]>)('422 %j', async (body, message) => {
    expectError(await api.post(BASE, body), 422, message);
  });
});

describe('GET /api/selfservice/tag', () => {
  it('lists with count, paging and order', async () => {
    const made = [await make.tag({ name: unique('zz') }), await make.tag({ name: unique('zz') })];
    const res = await api.get(BASE, { order_column: 'id', order_direction: 'desc', limit: 2 });
    expect(ids(expectList(res))).toEqual([made[1].id, made[0].id]);
    expect(res.body.count).toBeGreaterThanOrEqual(2);
    expect(expectList(await api.get(BASE, { order_column: 'slug', limit: 5 }))).toHaveLength(5);
  });

  it('404 with the label tag', async () => {
    expectNotFound(await api.get(`${BASE}/999999`), 'tag');
    expectNotFound(await api.put(`${BASE}/999999`, { name: 'x' }), 'tag');
    expectNotFound(await api.del(`${BASE}/999999`), 'tag');
  });
});

describe('PUT /api/selfservice/tag/{id}', () => {
  it('renames (the slug stays), sets a slug, and replaces translations', async () => {
    const tag = await make.tag({ 'name:de': 'Konto' });
    const name = unique('Accounts');
    const data = expectSuccess(await api.put(`${BASE}/${tag.id}`, { name, 'name:fr': 'Comptes' }), 'Successfully updated the tag!');
    expect(data).toMatchObject({ name, slug: tag.slug, translations: [{ tag_id: tag.id, name: 'Comptes', slug: null, locale: 'fr' }] });
    const slug = unique('accounts').toLowerCase();
    expect(expectSuccess(await api.put(`${BASE}/${tag.id}`, { slug }), 'Successfully updated the tag!').slug).toBe(slug);
    expect(expectSuccess(await api.put(`${BASE}/${tag.id}`, { name }), 'Successfully updated the tag!').name).toBe(name);
  });

  it('422 for a name or slug another tag has', async () => {
    const [a, b] = [await make.tag(), await make.tag()];
    expectError(await api.put(`${BASE}/${a.id}`, { name: b.name }), 422, 'The name has already been taken.');
    expectError(await api.put(`${BASE}/${a.id}`, { slug: b.slug }), 422, 'The slug has already been taken.');
    expectError(await api.put(`${BASE}/${a.id}`, { name: '' }), 422, 'The name field is required.');
  });
});

describe('DELETE /api/selfservice/tag/{id}', () => {
  it('deletes a tag; the articles lose it', async () => {
    const tag = await make.tag();
    const article = await make.article({ tag: [tag.name] });
    expect(ids(article.tags)).toEqual([tag.id]);
    expectDeleted(await api.del(`${BASE}/${tag.id}`), 'tag');
    expectNotFound(await api.get(`${BASE}/${tag.id}`), 'tag');
    expect(await ArticleTag.count({ where: { article_id: article.id } })).toBe(0);
    expect(await SelfServiceTag.count({ where: { id: tag.id } })).toBe(0);
    expect(expectSuccess(await api.get(`/api/selfservice/article/${article.id}`)).tags).toEqual([]);
  });
});
