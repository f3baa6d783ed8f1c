/**
 * The Groonga search server over its HTTP interface (SEARCH_GROONGA_URL `http://`), the other
 * transport beside GQTP (ticket-search-groonga.test.ts): the index written, the list's searches
 * answered by the server (where the selects start included), the SQL path while it is down.
 */
import { groongaPort } from './groongaHttpEnv';
import { GroongaServer } from '../helpers/groongaServer';
import { groongaSearch } from '../../src/ticket/tickets/search/groonga';
import { useApi } from '../helpers/app';
import { enginePage, expectFilterStarts } from './filterStartCase';
import { indexed, word } from './groongaSupport';
import { ids, ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const server = new GroongaServer(groongaPort, 'http');
beforeAll(() => server.start({ fresh: true }));
afterAll(() => server.remove());

describe('the Groonga search server over HTTP', () => {
  const api = useApi();
  let ctx: TicketContext;
  const f = ticketFactories(api, () => ctx);

  beforeAll(async () => {
    ctx = await ticketContext();
  });

  it('answers the list\'s searches from the server, starting where the filters say', async () => {
    expect(process.env.SEARCH_GROONGA_URL).toBe(`http://127.0.0.1:${groongaPort}`);
    await expectFilterStarts({ engine: groongaSearch, api, f, word, written: indexed });
  });

  it('takes the SQL path while the server is down, and catches up when it is back', async () => {
    const w = word();
    const a = await f.ticket({ subject: `Down ${w}` });
    await indexed();
    expect(await enginePage(groongaSearch, w)).toEqual({ ids: [a.id], count: 1, start: 'words' });
    await server.stop();
    try {
      expect(await groongaSearch.listedPage!({ term: w, booleanQuery: `+${w}*`, filters: [], desc: false, offset: 0, limit: 10 })).toBeNull();
      const res = await api.get('/api/ticket/ticket', { search: w });
      expect(ids(res.body.data)).toEqual([a.id]);
    } finally {
      await server.start();
    }
    const b = await f.ticket({ subject: `Back ${w}` });
    await indexed();
    expect(await enginePage(groongaSearch, w)).toEqual({ ids: [a.id, b.id], count: 2, start: 'words' });
  });
});
