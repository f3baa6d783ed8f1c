import { searchQuery } from '../../src/selfservice/article/search';
import { useApi, unique } from '../helpers/app';
import { expectError, expectList, expectSuccess } from '../helpers/envelope';
import { factories, ids } from './support';

const api = useApi();
const make = factories(api);
const BASE = '/api/selfservice/article/search';

/** A word no other record of the run contains (letters and digits only: one FULLTEXT token). */
const word = (prefix: string) => unique(prefix).toLowerCase().replace(/[^a-z0-9]/g, '');

const search = async (query: Record<string, unknown>) => {
  const res = await api.get(BASE, query);
  return { data: expectList(res), count: res.body.count as number };
};

describe('searchQuery', () => {
  it('requires every word, as a word or the start of one', () => {
    expect(searchQuery('Reset PASSWORD')).toBe('+reset* +password*');
    expect(searchQuery('réinitialiser mot')).toBe('+réinitialiser* +mot*');
  });

  it('leaves out what MariaDB never indexes, and reads operators as plain text', () => {
    expect(searchQuery('how to do it')).toBeNull();
    expect(searchQuery('the printer is on')).toBe('+printer*');
    expect(searchQuery('+"unbalanced (quote* -minus ~tilde @2')).toBe('+unbalanced* +quote* +minus* +tilde*');
    expect(searchQuery('a b c')).toBeNull();
  });
});

describe('GET /api/selfservice/article/search', () => {
  it('finds articles by words of the title, excerpt or text, and by the start of a word', async () => {
    const w = word('zeta');
    const byTitle = await make.article({ title: `Configure ${w} printers` });
    const byExcerpt = await make.article({ excerpt: `About ${w}.` });
    const byText = await make.article({ text: `<p>The ${w} module.</p>` });
    await make.article({ text: 'Nothing to see here.' });
    const { data, count } = await search({ term: w });
    expect(ids(data).sort()).toEqual(ids([byTitle, byExcerpt, byText]).sort());
    expect(count).toBe(3);
    expect(ids((await search({ term: w.slice(0, 6) })).data)).toEqual(expect.arrayContaining(ids([byTitle, byExcerpt, byText])));
    // The articles come as the list presents them.
    expect(data.find((a) => a.id === byTitle.id)).toEqual(expectSuccess(await api.get(`/api/selfservice/article/${byTitle.id}`)));
  });

  it('needs every word, and puts the most relevant first', async () => {
    const [w1, w2] = [word('alpha'), word('beta')];
    const both = await make.article({ title: `${w1} ${w2}`, text: `${w1} ${w2} ${w1} ${w2}` });
    const once = await make.article({ title: 'Other', text: `${w1} and ${w2} once` });
    await make.article({ text: `${w1} only` });
    expect(ids((await search({ term: `${w1} ${w2}` })).data)).toEqual([both.id, once.id]);
    expect((await search({ term: w1 })).count).toBe(3);
    // An order_column sent orders the matches by it instead.
    expect(ids((await search({ term: `${w1} ${w2}`, order_column: 'id', order_direction: 'desc' })).data)).toEqual([once.id, both.id].sort((a, b) => b - a));
    expect(ids((await search({ term: `${w1} ${w2}`, order_column: 'title', order_direction: 'desc' })).data)).toEqual([once.id, both.id]);
  });

  it('an empty result for words that are never indexed; operators in the term are harmless', async () => {
    expect(await search({ term: 'the' })).toEqual({ data: [], count: 0 });
    const w = word('gamma');
    const article = await make.article({ title: `Quote ${w}` });
    expect(ids((await search({ term: `"${w}" +(-*~<>@` })).data)).toEqual([article.id]);
  });

  it('searches the translations in the locale of lang', async () => {
    const [en, fr] = [word('english'), word('francais')];
    const article = await make.article({ title: `Printer ${en}`, 'title:fr': `Imprimante ${fr}`, 'text:de': 'Drucker' });
    expect((await search({ term: fr })).data).toEqual([]);
    const found = await search({ term: fr, lang: 'fr' });
    expect(ids(found.data)).toEqual([article.id]);
    expect(found.data[0].title).toBe(`Imprimante ${fr}`);
    // The default content is found whatever the locale.
    expect(ids((await search({ term: en, lang: 'fr' })).data)).toEqual([article.id]);
    expect((await search({ term: fr, lang: 'de' })).data).toEqual([]);
    // A translation's untranslated fields read as the defaults: words of both make a match in that locale.
    expect(ids((await search({ term: `${fr} helpful`, lang: 'fr' })).data)).toEqual([article.id]);

    // An update that changes the translations changes what is found.
    const fr2 = word('nouveau');
    expectSuccess(await api.put(`/api/selfservice/article/${article.id}`, { 'title:fr': `Imprimante ${fr2}` }), 'Successfully updated the article!');
    expect((await search({ term: fr, lang: 'fr' })).data).toEqual([]);
    expect(ids((await search({ term: fr2, lang: 'fr' })).data)).toEqual([article.id]);
  });

  it('finds the words a reader sees, not markup, attributes or link addresses', async () => {
    const [host, path, tip, shown, frHost, frShown] = ['host', 'path', 'tip', 'shown', 'frhost', 'frshown'].map(word);
    const article = await make.article({
      text: `<p>See <a href="https://${host}.example.com/${path}" title="${tip}">the guide</a> and <strong>${shown}</strong>.</p>`,
      'text:fr': `<p><a href="https://${frHost}.example.com/">Le guide</a> ${frShown}</p>`,
    });
    for (const hidden of [host, path, tip, 'strong', 'href']) expect(ids((await search({ term: hidden })).data)).not.toContain(article.id);
    expect(ids((await search({ term: shown })).data)).toEqual([article.id]);
    expect((await search({ term: frHost, lang: 'fr' })).data).toEqual([]);
    expect(ids((await search({ term: frShown, lang: 'fr' })).data)).toEqual([article.id]);
    // A new text is what is found from then on.
    const next = word('next');
    expectSuccess(await api.put(`/api/selfservice/article/${article.id}`, { text: `<p><em>${next}</em></p>` }), 'Successfully updated the article!');
    expect((await search({ term: shown })).data).toEqual([]);
    expect(ids((await search({ term: next })).data)).toEqual([article.id]);
  });

  it('takes the list filters and PAGING', async () => {
    const w = word('delta');
    const type = await make.type();
    const category = await make.category(type.id);
    const a = await make.article({ title: `${w} one`, category: [category.id], published: 1 });
    const b = await make.article({ title: `${w} two`, category: [category.id] });
    const c = await make.article({ title: `${w} three` });
    expect(ids((await search({ term: w, type_id: type.id })).data).sort()).toEqual(ids([a, b]).sort());
    expect(ids((await search({ term: w, published: 1 })).data)).toEqual([a.id]);
    expect(ids((await search({ term: w, category_id: category.id, include_subcategories: 1 })).data).sort()).toEqual(ids([a, b]).sort());
    const page = await search({ term: w, limit: 1, start: 3 });
    expect(page.count).toBe(3);
    expect(page.data).toHaveLength(1);
    expect(ids([a, b, c])).toContain(page.data[0].id);
  });

  it('422 without a term', async () => {
    expectError(await api.get(BASE), 422, 'The term field is required.');
    expectError(await api.get(BASE, { term: '  ' }), 422, 'The term field is required.');
    expectError(await api.get(BASE, { term: 'x'.repeat(256) }), 422, 'The term may not be greater than 255 characters.');
  });
});
