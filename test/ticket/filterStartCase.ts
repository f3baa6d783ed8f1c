/**
 * Where a Groonga engine's selects start (src/ticket/tickets/search/filterStart.ts), run on each
 * (ticket-search-mroonga.test.ts, ticket-search-groonga.test.ts): from a filter of few tickets
 * (the index of filter_words), else from the words, with the same page and exact count either way.
 */
import { Brand } from '../../src/db/models';
import { listedSearch } from '../../src/ticket/tickets/search/listed';
import type { SearchEngine } from '../../src/ticket/tickets/search/engine';
import type { TestApi } from '../helpers/app';
import { newEmail, unique } from '../helpers/app';
import { expectList } from '../helpers/envelope';
import { ids, type ticketFactories } from './ticketSupport';

/** The engine's own page for a search (as the list asks it: listed tickets by id), with where its selects started. */
export async function enginePage(engine: SearchEngine, search: string, filters: Record<string, unknown> = {}, limit = 50) {
  const found = (await engine.listedPage!(listedSearch(
    { search, ...filters }, { brand: 'brand_id', status: 'status_id', department: 'department_id', internal: 'internal' }, [], { desc: false, offset: 0, limit },
  )!))!;
  return { ids: found.rows.map((r) => r.id), count: found.count, start: found.start };
}

/**
 * Writes a brand's tickets, others, and a person's, then (after `written`: the engine's index
 * catching up) checks each start. `word`: a new random word.
 */
export async function expectFilterStarts(
  { engine, api, f, word, written }: {
    engine: SearchEngine; api: TestApi; f: ReturnType<typeof ticketFactories>; word: () => string; written: () => Promise<void>;
  },
): Promise<void> {
  const page = (search: string, filters?: Record<string, unknown>, limit?: number) => enginePage(engine, search, filters, limit);
  const [w, rare] = [word(), word()];
  const brand = await Brand.create({ name: unique('StartBrand') });
  const department = await f.department({ name: unique('StartDept') }, brand.id);
  const customer = await f.user({ brand_id: brand.id });
  const mine = (subject: string) => f.ticket({ brand: brand.id, department: department.id, user: customer.id, subject });
  const ours = [];
  for (let i = 0; i < 3; i++) ours.push((await mine(`Start ${w} ${i}`)).id);
  const others = [];
  for (let i = 0; i < 2; i++) others.push((await f.ticket({ subject: `Start ${w} elsewhere` })).id);
  const rareOne = await mine(`Start ${rare}`);
  const person = await f.user({ email: newEmail('startuser') });
  const theirs = await f.ticket({ user: person.id, subject: `Start ${w} theirs` });
  await written();

  // The brand holds three tickets: the select starts from them, the words looked up among them.
  expect(await page(w, { brand: brand.id })).toEqual({ ids: ours, count: 3, start: 'brand_id' });
  expect(await page(rare, { brand: brand.id })).toEqual({ ids: [rareOne.id], count: 1, start: 'brand_id' });
  expect(await page(w, { brand: brand.id }, 2)).toEqual({ ids: ours.slice(0, 2), count: 3, start: 'brand_id' });
  // A date range is not in filter_words: the words' matches first, the range checked on them.
  const all = [...ours, ...others, theirs.id].sort((a, b) => a - b);
  expect(await page(`${w} created>=2024-01-01`)).toEqual({ ids: all, count: 6, start: 'words' });
  expect(await page(`${w} created<2024-01-01`)).toEqual({ ids: [], count: 0, start: 'words' });
  // A filter every listed ticket passes (internal 0 or 1: the counters hold it) is not checked; the answer is the same.
  expect(await page(`${w} created>=2024-01-01`, { internal: [0, 1] })).toEqual({ ids: all, count: 6, start: expect.any(String) });
  // Several filters: the smallest first (the brand's three tickets), the others checked on the result.
  expect(await page(`${w} created>=2024-01-01`, { brand: brand.id, internal: 0 })).toEqual({ ids: ours, count: 3, start: 'brand_id' });
  expect(await page(`${w} created>=2024-01-01`, { brand: brand.id, internal: 1 })).toEqual({ ids: [], count: 0, start: expect.any(String) });
  // A person's few tickets (counted in tickets): first.
  expect(await page(`${w} user:${person.email}`)).toEqual({ ids: [theirs.id], count: 1, start: 'user_id' });
  // A value with no ticket at all: nothing, at once.
  expect(await page(w, { brand: 999999999 })).toEqual({ ids: [], count: 0, start: 'brand_id' });
  // The API answers the same.
  const res = await api.get('/api/ticket/ticket', { search: w, brand: brand.id, limit: 2 });
  expect({ ids: ids(expectList(res)), count: res.body.count }).toEqual({ ids: ours.slice(0, 2), count: 3 });
}
