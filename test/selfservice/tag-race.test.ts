/**
 * Parallel creates of self-service tags: one row per name, every other request 422 with the
 * name's message (never a deadlock's 503 or 500); names that make the same slug each get a slug
 * of their own; a slug given twice at once is the loser's 422.
 */
import { SelfServiceTag } from '../../src/db/models';
import { unique, useApi } from '../helpers/app';
import { expectError } from '../helpers/envelope';
import { slugify } from '../../src/db/slugs';
import { countQueries } from '../../src/db/sequelize';
import { factories } from './support';

const api = useApi();

it('20 parallel creates of one tag name make one tag; the others are 422', async () => {
  for (let round = 0; round < 3; round++) {
    const name = unique('Race ');
    const results = await Promise.all(Array.from({ length: 20 }, () => api.post('/api/selfservice/tag', { name })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 200)) expectError(r, 422, 'The name has already been taken.');
    expect(await SelfServiceTag.count({ where: { name } })).toBe(1);
  }
});

it('12 parallel creates of names that make one slug: every tag is created, each with a slug of its own', async () => {
  const base = unique('Slug race ');
  const names = ['!', '?', '.', ',', ';', ':', '(', ')', '*', '+', '=', '~'].map((p) => `${base}${p}`);
  const results = await Promise.all(names.map((name) => api.post('/api/selfservice/tag', { name })));
  expect(results.map((r) => r.status)).toEqual(names.map(() => 200));
  const slugs = results.map((r) => r.body.data.slug as string);
  const stem = slugify(base, 'tag');
  expect(slugs.sort()).toEqual([stem, ...Array.from({ length: 11 }, (_, i) => `${stem}-${i + 2}`)].sort());
  expect(await SelfServiceTag.count({ where: { name: names } })).toBe(12);
});

it('10 parallel creates that give one slug: one tag, the others 422 naming the slug', async () => {
  const slug = unique('given-slug-').toLowerCase().replace(/[^a-z0-9-]/g, '-');
  const results = await Promise.all(Array.from({ length: 10 }, (_, i) => api.post('/api/selfservice/tag', { name: unique(`Given ${i} `), slug })));
  expect(results.filter((r) => r.status === 200)).toHaveLength(1);
  for (const r of results.filter((x) => x.status !== 200)) expectError(r, 422, 'The slug has already been taken.');
  expect(await SelfServiceTag.count({ where: { slug } })).toBe(1);
});

it('a create reads the name and the slugs without a lock (a locking read of a missing value locks its gap: parallel creates deadlock)', async () => {
  const { result, queries } = await countQueries(async () => api.post('/api/selfservice/tag', { name: unique('No lock ') }));
  expect(result.status).toBe(200);
  const reads = queries.filter((q) => /SELECT[\s\S]*FROM\s+`?selfservice_tags`?/i.test(q));
  expect(reads.length).toBeGreaterThanOrEqual(2); // the name, the slugs (and the record read back)
  expect(reads.filter((q) => /FOR UPDATE|LOCK IN SHARE MODE|FOR SHARE/i.test(q)).map((q) => q.slice(0, 120))).toEqual([]);
});

it('10 parallel article creates naming one new tag: every article is created, all with the one tag', async () => {
  const make = factories(api);
  const category = (await make.category((await make.type()).id)).id;
  const author = (await make.operator()).id;
  const name = unique('Shared new tag ');
  const results = await Promise.all(Array.from({ length: 10 }, () => api.post('/api/selfservice/article', {
    author_id: author, title: unique('Article'), text: 'Some helpful text.', category: [category], tag: [name],
  })));
  expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
  const tags = await SelfServiceTag.findAll({ where: { name } });
  expect(tags).toHaveLength(1);
  expect(results.map((r) => r.body.data.tags.map((t: { id: number }) => t.id))).toEqual(results.map(() => [tags[0].id]));
});

it('an article naming a new tag reads and writes the tag without a lock', async () => {
  const make = factories(api);
  const category = (await make.category((await make.type()).id)).id;
  const author = (await make.operator()).id;
  const { result, queries } = await countQueries(async () => api.post('/api/selfservice/article', {
    author_id: author, title: unique('Article'), text: 'Some helpful text.', category: [category], tag: [unique('Lock-free tag ')],
  }));
  expect(result.status).toBe(200);
  const reads = queries.filter((q) => /SELECT[\s\S]*FROM\s+`?selfservice_tags`?/i.test(q));
  expect(reads.length).toBeGreaterThanOrEqual(2); // the name, the slugs
  expect(reads.filter((q) => /FOR UPDATE|LOCK IN SHARE MODE|FOR SHARE/i.test(q)).map((q) => q.slice(0, 120))).toEqual([]);
});
