/**
 * present() (src/http/resource.ts), which every list, show and embedding presents records with:
 * an empty page gathers nothing (its relations, translations and the configuration a ticket
 * embeds were loaded for no record: 12 % of an empty ticket list's CPU, bench/ab.ts at 10k).
 */
import { present, type ResourceDef } from '../../src/http/resource';
import { Ticket } from '../../src/db/models';

const ctx = { view: 'list' as const, query: {}, grants: () => true };

it('loads no relations for no records, and loads them once for a page', async () => {
  const load = jest.fn(async (records: Ticket[]) => new Map(records.map((r) => [r.id, `related to ${r.id}`])));
  const serialize = jest.fn((record: Ticket, related: Map<number, string>) => ({ id: record.id, related: related.get(record.id) }));
  const def = { path: '/things', model: Ticket, label: 'thing', load, serialize } as unknown as ResourceDef<Ticket, Map<number, string>>;

  expect(await present(def, [], ctx)).toEqual([]);
  expect(load).not.toHaveBeenCalled();

  const page = [{ id: 7 }, { id: 9 }] as Ticket[];
  expect(await present(def, page, ctx)).toEqual([{ id: 7, related: 'related to 7' }, { id: 9, related: 'related to 9' }]);
  expect(load).toHaveBeenCalledTimes(1);
  expect(load.mock.calls[0][0]).toBe(page);
});
