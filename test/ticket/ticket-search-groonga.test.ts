/**
 * The ticket search on a Groonga server (SEARCH_ENGINE=groonga): a server of the test's own,
 * its documents written from the tickets' change stream by the scheduler's `search.index` job
 * (every write of tickets and messages through the API, and a customer's delete), the list's
 * searches of words with field terms and filters answered by it (count and page), every other
 * search and every search while it is down answered by the SQL path, and what was written while
 * it was down, or before it was new, written when it is back; where the selects start (a small
 * filter's tickets, else the words), and a schema left by an earlier version completed.
 */
import { groongaPort } from './groongaEnv';
import { readFileSync } from 'node:fs';
import { GroongaServer } from '../helpers/groongaServer';
import { sequelize } from '../../src/db/sequelize';
import { QueryTypes } from 'sequelize';
import { searchEngine } from '../../src/ticket/tickets/search/engine';
import { groongaSearch } from '../../src/ticket/tickets/search/groonga';
import { Brand } from '../../src/db/models';
import { groongaCommand, groongaTables } from '../../src/ticket/tickets/search/groongaServer';
import { searchIndexJob, syncGroongaIndex } from '../../src/ticket/tickets/search/groongaIndex';
import { schedulerSpec } from '../../src/wiring';
import { unique, useApi } from '../helpers/app';
import { expectList } from '../helpers/envelope';
import { enginePage, expectFilterStarts } from './filterStartCase';
import { indexed, word } from './groongaSupport';
import { ids, ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const server = new GroongaServer(groongaPort);
// Before the app's preparation (useApi's), which makes the server's tables.
beforeAll(() => server.start({ fresh: true }));
afterAll(() => server.remove());

describe('the ticket search on a Groonga server', () => {
  const api = useApi();
  let ctx: TicketContext;
  const f = ticketFactories(api, () => ctx);
  const BASE = '/api/ticket/ticket';
  const found = async (q: Record<string, unknown>) => {
    const res = await api.get(BASE, { limit: 200, ...q });
    expect(res.status).toBe(200);
    return { ids: ids(res.body.data), count: res.body.count };
  };
  const search = async (q: Record<string, unknown>) => ids(expectList(await api.get(BASE, { limit: 200, ...q })));
  /** The documents on the server whose text holds `w` (the server's own answer, not the API's). */
  const documents = async (w: string): Promise<number[]> => {
    const [result] = await groongaCommand<unknown[][][]>('select', {
      table: groongaTables().documents, match_columns: 'body', query: w, output_columns: '_key', sort_keys: '_key', limit: 100, cache: 'no',
    });
    return result.slice(2).map((r) => Number(r[0]));
  };
  beforeAll(async () => {
    ctx = await ticketContext();
  });

  it('is the engine, its tables made on the server once, its job on the scheduler', async () => {
    expect(searchEngine().name).toBe('groonga');
    await searchEngine().prepare();
    const tables = ((await groongaCommand<unknown[][]>('table_list', {})).slice(1)).map((r) => String(r[1]));
    const t = groongaTables();
    expect(tables.filter((name) => [t.documents, t.terms, t.filterWords, t.state].includes(name)).sort()).toEqual([t.documents, t.filterWords, t.state, t.terms].sort());
    expect(schedulerSpec().jobs).toContain(searchIndexJob);
    expect(searchIndexJob.schedule!.every()).toBe(1000);
  });

  it('finds subjects and messages (drafts left out), counts them exactly, pages them both ways', async () => {
    const [w1, w2, w3] = [word(), word(), word()];
    const x = await f.ticket({ subject: `Scanner ${w1} offline` });
    const v = await f.ticket({ subject: `Split ${w3}`, text: `Body ${w2}x` });
    const y = await f.ticket({ subject: 'Another one', text: `The ${w1} does not start, ${w2}.` });
    const z = await f.ticket({ subject: 'A third' });
    await f.message(z, { text: `Also the ${w1} again` });
    await f.message(x, { text: `draft ${w2}`, is_draft: 1 });
    await indexed();
    // The server's own documents, then the API's answers from them.
    expect(await documents(w1)).toEqual([x.id, y.id, z.id]);
    expect(await documents(w2)).toEqual([y.id]);
    expect(await found({ search: w1 })).toEqual({ ids: [x.id, y.id, z.id], count: 3 });
    expect(await found({ search: w1, order_direction: 'desc' })).toEqual({ ids: [z.id, y.id, x.id], count: 3 });
    expect(await found({ search: w1, start: 2, limit: 1 })).toEqual({ ids: [y.id], count: 3 });
    expect(await found({ search: `${w1} ${w2}` })).toEqual({ ids: [y.id], count: 1 });
    // Every word somewhere in the ticket: the server's answer (the SQL path wants them in the subject or in one message).
    expect(await found({ search: `${w3} ${w2}x` })).toEqual({ ids: [v.id], count: 1 });
    // A page among the newest ids is found in the window (two selects on the server: the window's,
    // then the count's); one reaching further than 1,000 is the sorted select's (one): the same
    // pages and count either way.
    const selects = async () => Number((await groongaCommand<{ n_queries: number }>('status', {})).n_queries);
    const before = await selects();
    expect(await found({ search: w1, order_direction: 'desc', limit: 2 })).toEqual({ ids: [z.id, y.id], count: 3 });
    expect(await selects() - before).toBe(2);
    const sorted = await selects();
    expect(await found({ search: w1, order_direction: 'desc', start: 2, limit: 1000 })).toEqual({ ids: [y.id, x.id], count: 3 });
    expect(await selects() - sorted).toBe(1);
    // The start of a word finds it; the number finds its ticket (the SQL path); a word as a column (`body:x`) is a word.
    expect(await found({ search: w1.slice(0, -2) })).toEqual({ ids: [x.id, y.id, z.id], count: 3 });
    expect(await found({ search: y.number })).toEqual({ ids: [y.id], count: 1 });
    expect(await found({ search: `body:${w1}` })).toEqual({ ids: [], count: 0 });
  });

  it('narrows by field terms and the list\'s filters, on the server', async () => {
    const w = word();
    const sub = await f.department({ name: unique('Sub'), parent_id: ctx.departmentId });
    const a = await f.ticket({ subject: `Alpha ${w}` });
    const b = await f.ticket({ subject: `Beta ${w}`, status: ctx.otherStatus });
    const c = await f.ticket({ subject: `Gamma ${w}`, status: ctx.otherStatus, department: sub.id });
    // Words in the subject and in a message: only the server finds them together (the SQL path wants one or the other).
    const [v1, v2] = [word(), word()];
    const d = await f.ticket({ subject: `Delta ${v1}`, text: `More ${v2}`, status: ctx.otherStatus, department: sub.id });
    await indexed();
    expect(await found({ search: `${v1} ${v2}`, status: ctx.otherStatus })).toEqual({ ids: [d.id], count: 1 });
    expect(await found({ search: `${v1} ${v2} department:${sub.id}` })).toEqual({ ids: [d.id], count: 1 });
    expect(await found({ search: `${v1} ${v2}`, status: ctx.openStatus })).toEqual({ ids: [], count: 0 });
    expect(await found({ search: `${w} status:${ctx.otherStatus}` })).toEqual({ ids: [b.id, c.id], count: 2 });
    expect(await found({ search: w, status: ctx.openStatus })).toEqual({ ids: [a.id], count: 1 });
    expect(await found({ search: `${w} status:"In Progress"` })).toEqual({ ids: [b.id, c.id], count: 2 });
    // A department is its tree.
    expect(await found({ search: `${w} department:${sub.id}` })).toEqual({ ids: [c.id], count: 1 });
    expect(await found({ search: w, department: ctx.departmentId })).toEqual({ ids: [a.id, b.id, c.id], count: 3 });
    expect(await found({ search: `${w} user:${a.user_id}` })).toEqual({ ids: [a.id], count: 1 });
    expect(await found({ search: `${w} status:"No such status"` })).toEqual({ ids: [], count: 0 });
    // Not the server's: a phrase beside an exclusion (the SQL path), with the same answer.
    expect(await found({ search: `${w} -Alpha` })).toEqual({ ids: [b.id, c.id], count: 2 });
  });

  const engine = (search: string, filters?: Record<string, unknown>) => enginePage(groongaSearch, search, filters);
  /** How many documents a filter finds on the server. */
  const counted = async (filter: string) => {
    const [all] = await groongaCommand<unknown[][][]>('select', {
      table: groongaTables().documents, filter, limit: 0, cache: 'no', match_escalation_threshold: -1,
    });
    return Number((all[0] as unknown as number[])[0]);
  };

  it('starts from a filter of few tickets (the index of filter_words), else from the words: the same page and exact count', async () => {
    await expectFilterStarts({ engine: groongaSearch, api, f, word, written: indexed });
    // A value is looked up as a whole word of filter_words: user_id:1 is not user_id:12 (nor 10, 100...).
    const [{ maxUser }] = await sequelize().query<{ maxUser: number }>('SELECT MAX(user_id) AS maxUser FROM tickets', { type: QueryTypes.SELECT });
    for (const [column, value] of [['user_id', 1], ['user_id', Math.floor(maxUser / 10)], ['status_id', ctx.openStatus], ['brand_id', ctx.brandId], ['internal', 0]] as const) {
      const checked = await counted(`${column} == ${value}`);
      expect({ column, value, indexed: await counted(`filter_words @ "${column}:${value}"`) }).toEqual({ column, value, indexed: checked });
    }
  });

  it('completes a schema made by an earlier version (no filter words) and writes every document again', async () => {
    const w = word();
    const brand = await Brand.create({ name: unique('SchemaBrand') });
    const department = await f.department({ name: unique('SchemaDept') }, brand.id);
    const customer = await f.user({ brand_id: brand.id });
    const a = await f.ticket({ brand: brand.id, department: department.id, user: customer.id, subject: `Schema ${w}` });
    await indexed();
    const t = groongaTables();
    // As an earlier version left the server: no filter_words column, no index of it.
    await groongaCommand('table_remove', { name: t.filterWords });
    await groongaCommand('column_remove', { table: t.documents, name: 'filter_words' });
    await searchIndexJob.handle({}, {} as never);
    await indexed();
    expect(await counted(`filter_words @ "brand_id:${brand.id}"`)).toBe(1);
    expect(await engine(w, { brand: brand.id })).toEqual({ ids: [a.id], count: 1, start: 'brand_id' });
  });

  /** The server's TCP connections now (its side of them, from /proc/net/tcp): ESTABLISHED, and closed waiting (TIME_WAIT). */
  const connections = () => {
    const port = groongaPort.toString(16).toUpperCase().padStart(4, '0');
    const rows = readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1).map((l) => l.trim().split(/\s+/)).filter((r) => r[1]?.endsWith(`:${port}`));
    return { open: rows.filter((r) => r[3] === '01').length, closed: rows.filter((r) => r[3] === '06').length };
  };

  it('speaks GQTP on connections kept open (at most eight), made again after the server restarts', async () => {
    expect(process.env.SEARCH_GROONGA_URL).toBe(`gqtp://127.0.0.1:${groongaPort}`);
    const w = word();
    const a = await f.ticket({ subject: `Connected ${w}` });
    await indexed();
    const before = connections();
    // Forty searches, twenty at a time: each two or three commands, on at most eight connections, none closed.
    for (let round = 0; round < 2; round++) {
      const pages = await Promise.all(Array.from({ length: 20 }, () => engine(w)));
      expect(pages).toEqual(Array.from({ length: 20 }, () => ({ ids: [a.id], count: 1, start: 'words' })));
    }
    const after = connections();
    expect(after.open).toBeGreaterThan(0);
    expect(after.open).toBeLessThanOrEqual(8);
    expect(after.closed).toBeLessThanOrEqual(before.closed);
    // The server restarted: its connections are gone; the next commands make new ones.
    await server.stop();
    await server.start();
    expect(await engine(w)).toEqual({ ids: [a.id], count: 1, start: 'words' });
    expect(connections().open).toBeGreaterThan(0);
  });

  it('follows every write of tickets and messages through the API, and a customer\'s delete', async () => {
    const [subject, first, reply, edited, renamed, sourceWord] = Array.from({ length: 6 }, word);
    const t = await f.ticket({ subject: `Subject ${subject}`, text: `First ${first}` });
    const m = await f.message(t, { text: `Reply ${reply}` });
    await indexed();
    expect(await search({ search: reply })).toEqual([t.id]);

    // An edit, a delete of a message, a new subject.
    expect((await api.put(`/api/ticket/message/${m.id}`, { text: `Edited ${edited}` })).status).toBe(200);
    expect((await api.put(`${BASE}/${t.id}`, { subject: `Renamed ${renamed}` })).status).toBe(200);
    await indexed();
    expect(await documents(reply)).toEqual([]);
    expect(await search({ search: edited })).toEqual([t.id]);
    expect(await search({ search: renamed })).toEqual([t.id]);
    expect((await api.del(`/api/ticket/message/${m.id}`)).status).toBe(200);
    await indexed();
    expect(await documents(edited)).toEqual([]);

    // Trashed: off the server (found in the trash by the SQL path); restored: back.
    expect((await api.del(`${BASE}/${t.id}`)).status).toBe(200);
    await indexed();
    expect(await documents(renamed)).toEqual([]);
    expect(await search({ search: renamed })).toEqual([]);
    expect(await search({ search: renamed, trashed: 1 })).toEqual([t.id]);
    expect((await api.post(`${BASE}/${t.id}/restore`, {})).status).toBe(200);
    await indexed();
    expect(await search({ search: renamed })).toEqual([t.id]);

    // Merged: the source leaves the server; its subject and messages are the target's.
    const source = await f.ticket({ subject: `Source ${sourceWord}`, text: `Source text ${sourceWord}q`, user: t.user_id });
    await indexed();
    expect(await documents(sourceWord)).toEqual([source.id]);
    expect((await api.post(`${BASE}/${t.id}/merge`, { ids: [source.id] })).status).toBe(200);
    await indexed();
    expect(await documents(sourceWord)).toEqual([t.id]);
    expect(await found({ search: `${sourceWord}q` })).toEqual({ ids: [t.id], count: 1 });

    // The customer deleted: their tickets go (tombstones), and their documents with them.
    expect((await api.del(`/api/user/user/${t.user_id}`)).status).toBe(200);
    await indexed();
    expect(await documents(first)).toEqual([]);
    expect(await found({ search: first })).toEqual({ ids: [], count: 0 });
  });

  it('a page row changed since the index was written is shown as it is now, and left out once it no longer matches', async () => {
    const w = word();
    const [a, b] = [await f.ticket({ subject: `One ${w}` }), await f.ticket({ subject: `Two ${w}` })];
    await indexed();
    // Not indexed yet: the trash and the status are the database's.
    expect((await api.del(`${BASE}/${a.id}`)).status).toBe(200);
    expect((await api.put(`${BASE}/${b.id}`, { status: ctx.otherStatus })).status).toBe(200);
    const lagging = await api.get(BASE, { search: w, status: ctx.openStatus });
    expect(ids(lagging.body.data)).toEqual([]);
    // The count is the index's until it catches up.
    expect(lagging.body.count).toBe(2);
    await indexed();
    expect(await found({ search: w, status: ctx.openStatus })).toEqual({ ids: [], count: 0 });
    expect(await found({ search: w, status: ctx.otherStatus })).toEqual({ ids: [b.id], count: 1 });
  });

  it('while the server is down, searches take the SQL path, and what was written meanwhile is indexed when it is back', async () => {
    const w = word();
    const a = await f.ticket({ subject: `Before ${w}` });
    await indexed();
    await server.stop();
    try {
      // Answered by InnoDB's FULLTEXT (a word in the subject: the same answer).
      expect(await found({ search: w })).toEqual({ ids: [a.id], count: 1 });
      const b = await f.ticket({ subject: `Meanwhile ${w}` });
      await expect(syncGroongaIndex()).rejects.toThrow();
      expect(await found({ search: w })).toEqual({ ids: [a.id, b.id], count: 2 });
      await server.start();
      await indexed();
      expect(await documents(w)).toEqual([a.id, b.id]);
      expect(await found({ search: w })).toEqual({ ids: [a.id, b.id], count: 2 });
    } finally {
      if (!server.running) await server.start();
    }
  });

  it('a new server is filled from the beginning: every listed ticket, by the scheduler\'s job', async () => {
    const w = word();
    const a = await f.ticket({ subject: `Kept ${w}` });
    await indexed();
    // Started afresh while the processes run: no tables (searches take the SQL path) until the job makes them.
    await server.stop();
    await server.start({ fresh: true });
    expect(await found({ search: w })).toEqual({ ids: [a.id], count: 1 });
    // The job's own run (as the scheduler runs it), then until it holds everything up to now.
    const run = await searchIndexJob.handle({}, {} as never);
    expect(Number((run as { changes: number }).changes)).toBeGreaterThan(0);
    expect(await documents(w)).toEqual([a.id]);
    await indexed();
    expect(await documents(w)).toEqual([a.id]);
    const [{ n }] = await sequelize().query<{ n: number }>(
      'SELECT COUNT(*) AS n FROM tickets WHERE deleted_at IS NULL AND merged_into_id IS NULL', { type: QueryTypes.SELECT },
    );
    const [all] = await groongaCommand<unknown[][][]>('select', { table: groongaTables().documents, limit: 0, cache: 'no' });
    expect(Number((all[0] as unknown as number[])[0])).toBe(Number(n));
  });
});
