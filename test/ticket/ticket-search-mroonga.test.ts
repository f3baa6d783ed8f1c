/**
 * The ticket search on Mroonga (SEARCH_ENGINE=mroonga): the cases of ./searchCases.ts, the index
 * written by the statement that writes a ticket or a message (create, reply, edit, draft, delete
 * of a message, subject, trash, restore, merge, delete of a ticket, hand-written SQL), and a word's
 * count and page answered by the index (Mroonga's fast count and fast ORDER BY LIMIT).
 */
import './mroongaEnv';
import { QueryTypes } from 'sequelize';
import { sequelize } from '../../src/db/sequelize';
import { searchEngine } from '../../src/ticket/tickets/search/engine';
import { useApi } from '../helpers/app';
import { expectList } from '../helpers/envelope';
import { searchCases } from './searchCases';
import { ids, ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

searchCases();

describe('the Mroonga index', () => {
  const api = useApi();
  let ctx: TicketContext;
  const f = ticketFactories(api, () => ctx);
  const BASE = '/api/ticket/ticket';
  const word = () => Array.from({ length: 12 }, () => 'abcdefghijklmnopqrstuvwxyz'[Math.floor(Math.random() * 26)]).join('');
  const select = <T extends object>(sql: string, replacements: unknown[] = []) => sequelize().query<T>(sql, { replacements, type: QueryTypes.SELECT });
  /** Where the ticket's document is (`listed`, `hidden` or nowhere) and what it holds. */
  const doc = async (id: number) => {
    const [listed] = await select<{ body: string }>('SELECT body FROM ticket_search WHERE ticket_id = ?', [id]);
    const [hidden] = await select<{ body: string }>('SELECT body FROM ticket_search_hidden WHERE ticket_id = ?', [id]);
    if (listed && hidden) throw new Error(`ticket ${id} is in both tables`);
    return listed ? { in: 'listed', body: listed.body } : hidden ? { in: 'hidden', body: hidden.body } : { in: 'nowhere', body: '' };
  };
  const search = async (q: Record<string, unknown>) => ids(expectList(await api.get(BASE, { limit: 200, ...q })));

  beforeAll(async () => {
    ctx = await ticketContext();
  });

  it('is the engine, and preparing it again is a no-op', async () => {
    expect(searchEngine().name).toBe('mroonga');
    const before = await select<{ n: number }>('SELECT COUNT(*) AS n FROM ticket_search');
    await searchEngine().prepare();
    expect(await select<{ n: number }>('SELECT COUNT(*) AS n FROM ticket_search')).toEqual(before);
    const triggers = await select<{ name: string }>("SELECT TRIGGER_NAME AS name FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME LIKE 'ticket\\_search\\_%' ORDER BY 1");
    expect(triggers.map((t) => t.name)).toHaveLength(6);
  });

  it('follows every write of tickets and messages, in the statement that makes it', async () => {
    const [subject, first, reply, edited, draft, sourceWord, rawWord] = Array.from({ length: 7 }, word);
    const t = await f.ticket({ subject: `Subject ${subject}`, text: `First ${first}` });
    expect(await doc(t.id)).toEqual({ in: 'listed', body: expect.stringMatching(new RegExp(`${subject}.*${first}`)) });

    // A reply is appended; a draft is not; editing a message writes the document again.
    const m = await f.message(t, { text: `Reply ${reply}` });
    await f.message(t, { text: `Draft ${draft}`, is_draft: 1 });
    expect((await doc(t.id)).body).toContain(reply);
    expect((await doc(t.id)).body).not.toContain(draft);
    expect((await api.put(`/api/ticket/message/${m.id}`, { text: `Edited ${edited}` })).status).toBe(200);
    expect((await doc(t.id)).body).toContain(edited);
    expect((await doc(t.id)).body).not.toContain(reply);
    expect(await search({ search: edited })).toEqual([t.id]);
    expect(await search({ search: reply })).toEqual([]);
    expect((await api.del(`/api/ticket/message/${m.id}`)).status).toBe(200);
    expect((await doc(t.id)).body).not.toContain(edited);

    // The subject, by the API and by hand (no application code in between).
    expect((await api.put(`${BASE}/${t.id}`, { subject: `Renamed ${subject}x` })).status).toBe(200);
    expect((await doc(t.id)).body).toMatch(new RegExp(`^Renamed ${subject}x`));
    await sequelize().query('UPDATE tickets SET subject = ? WHERE id = ?', { replacements: [`By hand ${rawWord}`, t.id] });
    expect(await search({ search: rawWord })).toEqual([t.id]);

    // Trash: to the hidden table (found with trashed=1); restored by hand: back.
    expect((await api.del(`${BASE}/${t.id}`)).status).toBe(200);
    expect((await doc(t.id)).in).toBe('hidden');
    expect(await search({ search: rawWord })).toEqual([]);
    expect(await search({ search: rawWord, trashed: 1 })).toEqual([t.id]);
    await sequelize().query('UPDATE tickets SET deleted_at = NULL WHERE id = ?', { replacements: [t.id] });
    expect((await doc(t.id)).in).toBe('listed');
    expect(await search({ search: rawWord })).toEqual([t.id]);

    // Merge: the source is hidden; its subject and messages are the target's.
    const source = await f.ticket({ subject: `Source ${sourceWord}`, text: `Source text ${sourceWord}q`, user: t.user_id });
    expect((await api.post(`${BASE}/${t.id}/merge`, { ids: [source.id] })).status).toBe(200);
    expect((await doc(source.id)).in).toBe('hidden');
    expect((await doc(t.id)).body).toContain(`Source ${sourceWord}`);
    expect((await doc(t.id)).body).toContain(`${sourceWord}q`);
    expect(await search({ search: sourceWord })).toEqual([t.id]);
    expect(await search({ search: `${sourceWord}q` })).toEqual([t.id]);

    // Deleted (the housekeeping's hard delete): gone; the merged source's text leaves the target.
    await sequelize().query('DELETE FROM tickets WHERE id = ?', { replacements: [source.id] });
    expect(await doc(source.id)).toEqual({ in: 'nowhere', body: '' });
    expect((await doc(t.id)).body).not.toContain(`Source ${sourceWord}`);
    await sequelize().query('DELETE FROM tickets WHERE id = ?', { replacements: [t.id] });
    expect(await doc(t.id)).toEqual({ in: 'nowhere', body: '' });
    expect(await search({ search: rawWord })).toEqual([]);
  });

  it('written inside the writing transaction: visible to it before the commit', async () => {
    const w = word();
    const t = await f.ticket();
    await sequelize().transaction(async (transaction) => {
      await sequelize().query('UPDATE tickets SET subject = ? WHERE id = ?', { replacements: [`Inside ${w}`, t.id], transaction });
      const [row] = await sequelize().query<{ n: number }>('SELECT COUNT(*) AS n FROM ticket_search WHERE ticket_id = ? AND MATCH (body) AGAINST (? IN BOOLEAN MODE)', { replacements: [t.id, `+${w}`], type: QueryTypes.SELECT, transaction });
      expect(Number(row.n)).toBe(1);
    });
    expect(await search({ search: w })).toEqual([t.id]);
  });

  it('answers a word alone with its fast count and fast ORDER BY LIMIT (no read of the matches)', async () => {
    const w = word();
    const made = [await f.ticket({ subject: `Fast ${w}` }), await f.ticket({ subject: `Fast ${w} too` })];
    const status = async () => Object.fromEntries((await select<{ Variable_name: string; Value: string }>("SHOW GLOBAL STATUS LIKE 'Mroonga_%'")).map((r) => [r.Variable_name, Number(r.Value)]));
    const before = await status();
    const res = await api.get(BASE, { search: w, order_direction: 'desc' });
    expect(ids(expectList(res))).toEqual(made.map((t) => t.id).reverse());
    expect(res.body.count).toBe(2);
    const after = await status();
    expect(after.Mroonga_count_skip).toBeGreaterThan(before.Mroonga_count_skip);
    expect(after.Mroonga_fast_order_limit).toBeGreaterThan(before.Mroonga_fast_order_limit);
  });
});
