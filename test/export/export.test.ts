/**
 * The incremental export: whole objects as show presents them, changed since a cursor or a
 * start_time, tombstones for deleted records, a hold-back so a late commit is never skipped, and a
 * reader following the cursor from zero ending with an exact copy of the database while writes go on.
 */
import './exportEnv';
import { Op, QueryTypes, type WhereOptions } from 'sequelize';
import { Article, DomainEvent, Organisation, Ticket, TicketMessage, TicketTag, User } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { transaction } from '../../src/db/transaction';
import { config } from '../../src/config';
import { decodeCursor, encodeCursor } from '../../src/export/feed';
import { pruneTombstones, tombstonePruneJob } from '../../src/export/prune';
import { schedulerIdOf } from '../../src/queue/jobs';
import { schedulerSpec } from '../../src/wiring';
import { nowSec, useApi } from '../helpers/app';
import { expectError, expectSuccess, expectList } from '../helpers/envelope';
import { waitFor, waitForProgress } from '../helpers/smtp';
import { runningStatements } from '../helpers/races';
import { factories } from '../selfservice/support';
import { ticketContext, ticketFactories, type TicketContext } from '../ticket/ticketSupport';

const api = useApi();
let ctx: TicketContext;
beforeAll(async () => {
  ctx = await ticketContext();
});
const f = ticketFactories(api, () => ctx);
const ss = factories(api);

type Copy = Map<number, any>;
interface Reader { copy: Copy; cursor?: string; pages: number }

/** Reads one page into the copy; returns the page. */
async function readPage(resource: string, reader: Reader, limit: number): Promise<any> {
  const page = expectSuccess(await api.get(`/api/export/${resource}`, { limit, ...(reader.cursor ? { cursor: reader.cursor } : {}) }));
  for (const r of page.records) reader.copy.set(r.id, r);
  for (const t of page.tombstones) reader.copy.delete(t.id);
  reader.cursor = page.after_cursor;
  reader.pages += 1;
  return page;
}

/** Follows the cursor until the stream ends with a copy complete up to `until` (seconds). */
async function catchUp(resource: string, reader: Reader, until: number, limit = 50): Promise<void> {
  // Bounded by progress: a small page walks the whole worker database (other files' records too),
  // so the wait fails only when the cursor stops moving, not after a time.
  await waitForProgress(async () => {
    const page = await readPage(resource, reader, limit);
    return { done: page.end_of_stream && page.end_time >= until, cursor: reader.cursor };
  }, (p) => p.done, `${resource} export to reach ${until}`, 30000);
}

const TABLES: Record<string, string> = {
  tickets: 'SELECT id, updated_at FROM tickets',
  messages: 'SELECT id, updated_at FROM ticket_messages',
  users: "SELECT id, updated_at FROM users WHERE type = 'user'",
  organisations: 'SELECT id, updated_at FROM organisations',
  articles: 'SELECT id, updated_at FROM articles',
};

/** The copy holds exactly the database's rows, each as of its last change. */
async function expectExactCopy(resource: string, copy: Copy): Promise<void> {
  const rows = await sequelize().query<{ id: number; updated_at: number }>(TABLES[resource], { type: QueryTypes.SELECT });
  expect([...copy.keys()].sort((a, b) => a - b)).toEqual(rows.map((r) => Number(r.id)).sort((a, b) => a - b));
  for (const r of rows) expect([resource, r.id, copy.get(Number(r.id)).updated_at]).toEqual([resource, r.id, Number(r.updated_at)]);
}

describe('GET /api/export/{resource}', () => {
  it('answers whole objects, as show presents them, with a cursor to continue from', async () => {
    const ticket = await f.ticket();
    await waitFor(async () => nowSec() - 2 > ticket.updated_at, 10000, 'the hold-back to pass');
    const reader: Reader = { copy: new Map(), pages: 0 };
    await catchUp('tickets', reader, ticket.updated_at, 1000);
    expect(reader.copy.get(ticket.id)).toEqual(expectSuccess(await api.get(`/api/ticket/ticket/${ticket.id}`)));
    const messages: Reader = { copy: new Map(), pages: 0 };
    await catchUp('messages', messages, ticket.updated_at, 1000);
    const [first] = await TicketMessage.findAll({ where: { ticket_id: ticket.id } });
    expect(messages.copy.get(first.id)).toEqual(expectSuccess(await api.get(`/api/ticket/message/${first.id}`)));
    // Nothing changed since: the next page is empty, with the same cursor.
    const again = expectSuccess(await api.get('/api/export/tickets', { cursor: reader.cursor }));
    expect(again).toMatchObject({ records: [], tombstones: [], after_cursor: reader.cursor, end_of_stream: true });
  });

  it('holds back the last seconds: a change shows once they have passed, and start_time starts at a time', async () => {
    const ticket = await f.ticket();
    const page = expectSuccess(await api.get('/api/export/tickets', { start_time: ticket.updated_at }));
    expect(page.end_time).toBeLessThan(ticket.updated_at);
    expect(page.records).toEqual([]);
    const later = await waitFor(async () => {
      const p = expectSuccess(await api.get('/api/export/tickets', { start_time: ticket.updated_at }));
      return p.records.length ? p : null;
    }, 10000, 'the ticket to be exported');
    expect(later.records.map((r: any) => r.id)).toContain(ticket.id);
    expect(later.records.every((r: any) => r.updated_at >= ticket.updated_at)).toBe(true);
  });

  it('a write transaction open longer than the hold-back holds the export back until it ends: its change is never skipped', async () => {
    const [late, other] = [await f.ticket(), await f.ticket()];
    const reader: Reader = { copy: new Map(), pages: 0 };
    await waitFor(async () => nowSec() - 2 > other.updated_at, 10000, 'the hold-back to pass');
    await catchUp('tickets', reader, other.updated_at, 1000);
    const t = await sequelize().transaction();
    let stamped: number;
    try {
      // Stamped now, committed seconds later; meanwhile a change one second younger commits at once.
      stamped = nowSec();
      await Ticket.update({ subject: 'Committed late', updated_at: stamped }, { where: { id: late.id }, transaction: t, hooks: false });
      await Ticket.update({ subject: 'Committed at once', updated_at: stamped + 1 }, { where: { id: other.id }, hooks: false });
      await waitFor(async () => nowSec() - 2 > stamped + 1, 10000, 'the hold-back to pass both changes');
      // The reader stays before the open transaction began: neither change is read yet.
      const page = await readPage('tickets', reader, 1000);
      expect(page.end_time).toBeLessThan(stamped);
      expect([reader.copy.get(late.id).subject, reader.copy.get(other.id).subject]).toEqual([late.subject, other.subject]);
      await t.commit();
    } catch (err) {
      await t.rollback();
      throw err;
    }
    await catchUp('tickets', reader, stamped + 1, 1000);
    expect([reader.copy.get(late.id).subject, reader.copy.get(late.id).updated_at]).toEqual(['Committed late', stamped]);
    expect([reader.copy.get(other.id).subject, reader.copy.get(other.id).updated_at]).toEqual(['Committed at once', stamped + 1]);
  });

  it('a row an open transaction changes again within the same second is held back at its place until it commits, then sent as committed', async () => {
    const ticket = await f.ticket();
    const t = await sequelize().transaction();
    let page: any;
    const reader: Reader = { copy: new Map(), pages: 0 };
    try {
      // Same row, same second: only what it holds tells the two versions apart.
      await Ticket.update({ subject: 'Changed again' }, { where: { id: ticket.id }, transaction: t, hooks: false, silent: true });
      expect((await Ticket.findByPk(ticket.id, { transaction: t }))!.updated_at).toBe(ticket.updated_at);
      await waitFor(async () => nowSec() - 2 > ticket.updated_at, 10000, 'the hold-back to pass');
      page = expectSuccess(await api.get('/api/export/tickets', { start_time: ticket.updated_at, limit: 1000 }));
      expect(page.records.map((r: any) => r.id)).not.toContain(ticket.id);
      expect(page.end_time).toBeLessThan(ticket.updated_at);
      reader.cursor = page.after_cursor;
      await t.commit();
    } catch (err) {
      await t.rollback();
      throw err;
    }
    await catchUp('tickets', reader, ticket.updated_at, 1000);
    expect(reader.copy.get(ticket.id)).toMatchObject({ subject: 'Changed again', updated_at: ticket.updated_at });
  });

  /**
   * Deletes a customer while a lock on some messages, held here, stops the delete at its statement
   * holding `waitsAt`, past the hold-back, while another ticket changes and the reader goes on past
   * that change; then lets the delete finish. Returns the other ticket as changed.
   */
  async function deleteHeldUp(customerId: number, lockedMessages: WhereOptions, waitsAt: string, reader: Reader, another: any): Promise<any> {
    const lock = await sequelize().transaction();
    let deleted: Promise<{ status: number }> | undefined;
    let other: any;
    try {
      expect((await TicketMessage.findAll({ where: lockedMessages, transaction: lock, lock: lock.LOCK.UPDATE })).length).toBeGreaterThan(0);
      const began = nowSec();
      deleted = api.del(`/api/user/user/${customerId}`).then((res) => res);
      deleted.catch(() => undefined); // awaited below
      await waitFor(async () => (await runningStatements(waitsAt)) > 0, 10000, 'the delete to wait on the lock');
      // A second later than anything the delete has stamped so far.
      const waiting = nowSec();
      await waitFor(async () => nowSec() > waiting, 5000, 'the next second');
      // A change, not a new ticket: the delete's locking read of the customer's tickets holds the
      // index gap a new customer's ticket goes into.
      other = expectSuccess(await api.put(`/api/ticket/ticket/${another.id}`, { subject: 'Changed while the delete waits' }), 'Successfully updated the ticket!');
      await waitFor(async () => nowSec() - 2 > Math.max(began, other.updated_at), 10000, 'the hold-back to pass the other ticket');
      await catchUp('tickets', reader, other.updated_at, 1000);
      expect(reader.copy.get(other.id).subject).toBe('Changed while the delete waits');
    } finally {
      await lock.rollback();
    }
    expect((await deleted!).status).toBe(200);
    return other;
  }

  it('a customer\'s delete held up between its statements past the hold-back: the tickets\' tombstones still reach a reader who went on meanwhile', async () => {
    const customer = await f.user();
    const ticket = await f.ticket({ user: customer.id });
    const another = await f.ticket();
    const reader: Reader = { copy: new Map(), pages: 0 };
    await waitFor(async () => nowSec() - 2 > another.updated_at, 10000, 'the hold-back to pass');
    await catchUp('tickets', reader, another.updated_at, 1000);
    // Held at the messages' tombstones, written before the tickets'.
    const other = await deleteHeldUp(customer.id, { ticket_id: ticket.id }, "SELECT 'messages'", reader, another);
    const page = await waitFor(async () => {
      const p = await readPage('tickets', reader, 1000);
      return p.tombstones.some((t: any) => t.id === ticket.id) ? p : null;
    }, 10000, 'the ticket\'s tombstone after the reader\'s cursor');
    expect(page.tombstones.find((t: any) => t.id === ticket.id).deleted_at).toBeGreaterThanOrEqual(other.updated_at);
    expect(reader.copy.has(ticket.id)).toBe(false);
  });

  it('a customer\'s delete held up while it gives back a ticket merged into theirs: the ticket, unmerged, still reaches a reader who went on meanwhile', async () => {
    const customer = await f.user();
    const mine = await f.ticket({ user: customer.id });
    const alices = await f.ticket();
    expectSuccess(await api.post(`/api/ticket/ticket/${mine.id}/merge`, { ids: [alices.id] }), 'Successfully updated the ticket!');
    const another = await f.ticket();
    const reader: Reader = { copy: new Map(), pages: 0 };
    await waitFor(async () => nowSec() - 2 > another.updated_at, 10000, 'the hold-back to pass');
    await catchUp('tickets', reader, another.updated_at, 1000);
    expect(reader.copy.get(alices.id).merged_into_id).toBe(mine.id);
    // Held at giving Alice's messages back, before her ticket leaves the merge.
    const other = await deleteHeldUp(customer.id, { original_ticket_id: alices.id }, 'SET m.ticket_id = g.from_ticket_id', reader, another);
    await waitFor(async () => {
      await readPage('tickets', reader, 1000);
      return reader.copy.get(alices.id).merged_into_id === null;
    }, 10000, 'Alice\'s ticket, unmerged, after the reader\'s cursor');
    expect(reader.copy.get(alices.id).updated_at).toBeGreaterThanOrEqual(other.updated_at);
  });

  it('hands deleted records over as tombstones: a message, an organisation, an article, a user with their tickets and messages', async () => {
    const start = nowSec();
    const user = await f.user();
    const ticket = await f.ticket({ user: user.id });
    const other = await f.ticket();
    const reply = await f.message(other);
    const org = expectSuccess(await api.post('/api/user/organisation', { name: `Org ${start}-${Math.random()}` }), 'Successfully created new organisation!');
    const article = await ss.article();
    const [message] = await TicketMessage.findAll({ where: { ticket_id: ticket.id } });
    await api.del(`/api/ticket/message/${reply.id}`).expect(200);
    await api.del(`/api/user/organisation/${org.id}`).expect(200);
    await api.del(`/api/selfservice/article/${article.id}`).expect(200);
    await api.del(`/api/user/user/${user.id}`).expect(200);
    const end = nowSec();
    const tombs = async (resource: string) => {
      const reader: Reader = { copy: new Map(), pages: 0 };
      const seen: any[] = [];
      await waitFor(async () => {
        const page = expectSuccess(await api.get(`/api/export/${resource}`, { start_time: start, limit: 1000, ...(reader.cursor ? { cursor: reader.cursor } : {}) }));
        seen.push(...page.tombstones);
        reader.cursor = page.after_cursor;
        return page.end_of_stream && page.end_time >= end;
      }, 15000, `${resource} tombstones`);
      for (const t of seen) expect(t.deleted_at).toBeGreaterThanOrEqual(start);
      return seen.map((t) => t.id);
    };
    expect(await tombs('messages')).toEqual(expect.arrayContaining([reply.id, message.id]));
    expect(await tombs('organisations')).toEqual([org.id]);
    expect(await tombs('articles')).toEqual([article.id]);
    expect(await tombs('users')).toEqual([user.id]);
    expect(await tombs('tickets')).toEqual([ticket.id]);
    expect(await Ticket.findByPk(ticket.id)).toBeNull();
  });

  it('a deleted user\'s tickets go; another customer\'s ticket merged into one is given back (its messages with it), not deleted, and the export follows both', async () => {
    const start = nowSec();
    const victim = await f.user();
    const mine = await f.ticket({ user: victim.id });
    const alices = await f.ticket();
    const alicesMessages = (await TicketMessage.findAll({ where: { ticket_id: alices.id } })).map((m) => m.id);
    expect(alicesMessages.length).toBeGreaterThan(0);
    expectSuccess(await api.post(`/api/ticket/ticket/${mine.id}/merge`, { ids: [alices.id] }), 'Successfully updated the ticket!');
    const [merged] = await Ticket.findAll({ where: { id: alices.id } });
    expect(merged.merged_into_id).toBe(mine.id);
    expect(await TicketMessage.count({ where: { id: alicesMessages, ticket_id: mine.id } })).toBe(alicesMessages.length);
    // A message left on the merged ticket (written there since the merge).
    const left = await TicketMessage.create({ ...(await TicketMessage.findOne({ where: { ticket_id: mine.id }, raw: true }))!, id: undefined, ticket_id: alices.id, original_ticket_id: null } as any);
    const made = nowSec();
    const tickets: Reader = { copy: new Map(), pages: 0 };
    const messages: Reader = { copy: new Map(), pages: 0 };
    const follow = async (resource: string, reader: Reader, until: number) => waitFor(async () => {
      const page = await readPage(resource, reader, 1000);
      return page.end_of_stream && page.end_time >= until;
    }, 15000, `${resource} export to reach ${until}`);
    const read = expectSuccess(await api.get('/api/export/tickets', { start_time: start }));
    tickets.cursor = read.after_cursor;
    for (const r of read.records) tickets.copy.set(r.id, r);
    await follow('tickets', tickets, made);
    const m = expectSuccess(await api.get('/api/export/messages', { start_time: start }));
    messages.cursor = m.after_cursor;
    for (const r of m.records) messages.copy.set(r.id, r);
    await follow('messages', messages, made);
    expect([tickets.copy.has(mine.id), tickets.copy.has(alices.id), messages.copy.has(left.id)]).toEqual([true, true, true]);

    const lastEvent = (await DomainEvent.max<number, DomainEvent>('id')) ?? 0;
    await api.del(`/api/user/user/${victim.id}`).expect(200);
    const deleted = nowSec();
    expect(await Ticket.findByPk(mine.id)).toBeNull();
    // Alice's ticket is hers again, listed, with her messages.
    expect(await Ticket.findByPk(alices.id)).toMatchObject({ merged_into_id: null, merged: 0 });
    expect((await TicketMessage.findAll({ where: { ticket_id: alices.id }, order: [['id', 'ASC']] })).map((x) => x.id)).toEqual([...alicesMessages, left.id]);
    expect(expectSuccess(await api.get(`/api/ticket/ticket/${alices.id}`))).toMatchObject({ merged_into_id: null });
    expect((expectList(await api.get(`/api/ticket/ticket/${alices.id}/audit`, { limit: 100 })) as any[]).at(-1))
      .toMatchObject({ action: 'updated', changes: { merged_into_id: { before: mine.id, after: null } } });
    // Its ticket.updated, the deleted ticket's ticket.deleted and user.deleted, in one INSERT of the delete's transaction.
    const events = await DomainEvent.findAll({ where: { id: { [Op.gt]: lastEvent } }, order: [['id', 'ASC']] });
    expect(events.map((e) => [e.name, JSON.parse(e.payload)])).toEqual([
      ['ticket.updated', expect.objectContaining({ ticketId: alices.id, changes: ['merged'] })],
      ['ticket.deleted', { ticketId: mine.id }],
      ['user.deleted', { userId: victim.id }],
    ]);
    expect(events.map((e) => e.id - events[0].id)).toEqual([0, 1, 2]);
    await follow('tickets', tickets, deleted);
    await follow('messages', messages, deleted);
    expect([tickets.copy.has(mine.id), tickets.copy.has(alices.id), messages.copy.has(left.id)]).toEqual([false, true, true]);
    for (const id of alicesMessages) expect(messages.copy.get(id)).toMatchObject({ ticket_id: alices.id });
  });

  it('422 for a cursor this server did not write, 404 for an unknown resource, 405 for a write', async () => {
    for (const cursor of ['nope!', Buffer.from('1.2.3').toString('base64url'), Buffer.from('x.0.1').toString('base64url')]) {
      expectError(await api.get('/api/export/tickets', { cursor }), 422, 'The selected cursor is invalid.');
    }
    expectError(await api.get('/api/export/tickets', { limit: 0 }), 422, 'The limit must be at least 1.');
    expectError(await api.get('/api/export/tickets', { start_time: 'yesterday' }), 422, 'The start time must be an integer.');
    expectError(await api.get('/api/export/operators'), 404, 'The requested URL GET /api/export/operators was not found.');
    expect((await api.post('/api/export/tickets', {})).status).toBe(405);
  });

  it('refuses a cursor of another resource\'s export (its position would skip records of this one)', async () => {
    const ticketsCursor = expectSuccess(await api.get('/api/export/tickets', { limit: 1 })).after_cursor;
    expectError(await api.get('/api/export/users', { cursor: ticketsCursor }), 422, 'The selected cursor is invalid.');
    expectSuccess(await api.get('/api/export/tickets', { cursor: ticketsCursor }));
  });

  it('reads an empty parameter as one not given, as the lists do (`cursor=` on a first call)', async () => {
    const page = expectSuccess(await api.get('/api/export/users', { cursor: '', limit: '', start_time: '' }));
    expect(page.records.length).toBeLessThanOrEqual(100);
    expect(expectSuccess(await api.get('/api/export/tickets', { search: '' })).records).toBeInstanceOf(Array);
  });

  it('422 for a cursor later than now (a forged position or copy start); every cursor handed out, the last page\'s too, keeps working', async () => {
    const t = nowSec();
    const year2100 = Date.UTC(2100, 0, 1) / 1000;
    for (const cursor of [
      encodeCursor({ t: t + 3600, k: 0, id: 1, s: t }, 'tickets'),
      encodeCursor({ t: year2100, k: 1, id: 1, s: year2100 }, 'tickets'),
      encodeCursor({ t: t - 60, k: 0, id: 1, s: t + 3600 }, 'tickets'),
      Buffer.from(`${t + 3600}.0.1`).toString('base64url'),
    ]) {
      expectError(await api.get('/api/export/tickets', { cursor }), 422, 'The selected cursor is invalid.');
    }
    // A start time in the future starts now: its cursor is one this server takes back.
    const future = expectSuccess(await api.get('/api/export/tickets', { start_time: year2100 }));
    expect(future).toMatchObject({ records: [], tombstones: [], end_of_stream: true });
    expectSuccess(await api.get('/api/export/tickets', { cursor: future.after_cursor }));

    // At the very end of the stream: a reader from zero that has read everything, and one that started now.
    const reader: Reader = { copy: new Map(), pages: 0 };
    await catchUp('tickets', reader, t, 1000);
    const fromNow = expectSuccess(await api.get('/api/export/tickets', { start_time: nowSec() }));
    expect(fromNow).toMatchObject({ records: [], end_of_stream: true });
    for (const cursor of [reader.cursor!, fromNow.after_cursor]) {
      expect(expectSuccess(await api.get('/api/export/tickets', { cursor }))).toMatchObject({ records: [], after_cursor: cursor, end_of_stream: true });
    }
    // A change arrives: both cursors go on to it.
    const ticket = await f.ticket();
    for (const cursor of [reader.cursor!, fromNow.after_cursor]) {
      const page = await waitFor(async () => {
        const p = expectSuccess(await api.get('/api/export/tickets', { cursor, limit: 1000 }));
        return p.records.some((r: any) => r.id === ticket.id) ? p : null;
      }, 10000, 'the new ticket after the end cursor');
      expectSuccess(await api.get('/api/export/tickets', { cursor: page.after_cursor }));
    }
  });

  it('a reader that starts from zero and follows the cursor ends with an exact copy of every resource while writes go on', async () => {
    const readers: Record<string, Reader> = Object.fromEntries(Object.keys(TABLES).map((r) => [r, { copy: new Map(), pages: 0 }]));
    let writing = true;
    const writes: string[] = [];
    const seed = await Promise.all([f.ticket(), f.ticket(), f.ticket(), f.ticket()]);
    const writer = (async () => {
      const tickets = [...seed];
      for (let i = 0; writing; i++) {
        const t = tickets[i % tickets.length];
        switch (i % 8) {
          case 0: tickets.push(await f.ticket()); writes.push('create'); break;
          case 1: await api.put(`/api/ticket/ticket/${t.id}`, { subject: `Changed ${i}`, status: ctx.otherStatus }).expect(200); writes.push('update'); break;
          case 2: await f.message(t); writes.push('reply'); break;
          case 3: {
            const [m] = await TicketMessage.findAll({ where: { ticket_id: t.id }, order: [['id', 'DESC']], limit: 1 });
            if (m) await api.del(`/api/ticket/message/${m.id}`).expect(200);
            writes.push('delete message');
            break;
          }
          case 4: {
            // A slow transaction: the row is stamped, then the commit comes most of a second later.
            await transaction(async (tx) => {
              await Ticket.update({ subject: `Slow ${i}` }, { where: { id: t.id }, transaction: tx });
              await new Promise((r) => setTimeout(r, 800));
            });
            writes.push('slow update');
            break;
          }
          case 5: await api.del(`/api/ticket/ticket/${(await f.ticket()).id}`).expect(200); writes.push('trash'); break;
          case 6: {
            // The user goes, and with them their ticket and its messages.
            const doomed = await f.ticket();
            await f.message(doomed);
            await api.del(`/api/user/user/${doomed.user_id}`).expect(200);
            writes.push('delete user');
            break;
          }
          default: {
            const org = expectSuccess(await api.post('/api/user/organisation', { name: `Org ${i}-${Math.random()}` }), 'Successfully created new organisation!');
            const article = await ss.article();
            if (i % 16 === 7) {
              await api.del(`/api/user/organisation/${org.id}`).expect(200);
              await api.del(`/api/selfservice/article/${article.id}`).expect(200);
            }
            writes.push('org and article');
          }
        }
      }
    })();
    // Readers page through (small pages, many cursors) while the writer does every kind of write twice.
    const deadline = Date.now() + 90000;
    while (writes.length < 17 && Date.now() < deadline) {
      for (const [resource, reader] of Object.entries(readers)) await readPage(resource, reader, 25);
    }
    writing = false;
    await writer;
    const lastWrite = nowSec();
    expect(writes.length).toBeGreaterThanOrEqual(17);
    for (const [resource, reader] of Object.entries(readers)) {
      await catchUp(resource, reader, lastWrite, 200);
      await expectExactCopy(resource, reader.copy);
      expect(reader.pages).toBeGreaterThan(1);
    }
    // The tickets the writer touched, whole: as show presents them now.
    for (const t of seed) {
      const shown = await api.get(`/api/ticket/ticket/${t.id}`);
      if (shown.status === 200) expect(readers.tickets.copy.get(t.id)).toEqual(shown.body.data);
      else expect(readers.tickets.copy.has(t.id)).toBe(false);
    }
    expect(await User.count({ where: { type: 'user' } })).toBe(readers.users.copy.size);
    expect(await Organisation.count()).toBe(readers.organisations.copy.size);
    expect(await Article.count()).toBe(readers.articles.copy.size);
  });
});

describe('narrowed by a search', () => {
  const span = config().exportSearchSpan;
  afterEach(() => {
    config().exportSearchSpan = span;
  });

  /** A second some days ago, at random: the tickets a test moves there are alone in their seconds. */
  const daysAgo = () => nowSec() - 86400 * (3 + Math.floor(Math.random() * 50)) - Math.floor(Math.random() * 86400);

  /** How many tickets are in the change order after cursor `a` (or from `start`) up to cursor `b`: the span a page read. */
  async function ticketsBetween(a: string | number, b: string): Promise<number> {
    const from = typeof a === 'number' ? { t: a, k: 0, id: 0 } : decodeCursor(a, 'tickets')!;
    const to = decodeCursor(b, 'tickets')!;
    const [{ n }] = await sequelize().query<{ n: number }>(
      `SELECT COUNT(*) AS n FROM tickets
        WHERE (updated_at > :ft OR (updated_at = :ft AND :fk = 0 AND id > :fid))
          AND (updated_at < :tt OR (updated_at = :tt AND (:tk = 1 OR id <= :tid)))`,
      { replacements: { ft: from.t, fk: from.k, fid: from.id, tt: to.t, tk: to.k, tid: to.id }, type: QueryTypes.SELECT },
    );
    return Number(n);
  }

  it('a search few tickets match reads a bounded span of the change order a page: each page tests at most EXPORT_SEARCH_SPAN tickets, every match and tombstone is sent once, a change an open transaction holds stops it', async () => {
    config().exportSearchSpan = 10;
    const tag = await TicketTag.create({ name: `Export span ${nowSec()} ${Math.random()}` });
    const doomed = await f.user();
    const made: any[] = [];
    for (let i = 0; i < 40; i++) {
      made.push(await f.ticket({ ...([2, 25, 38].includes(i) ? { tag: [tag.id] } : {}), ...(i === 20 ? { user: doomed.id } : {}) }));
    }
    // Days ago, four a second (the span's ends fall inside seconds too), apart from other tests' tickets.
    const base = daysAgo();
    for (const [i, t] of made.entries()) await Ticket.update({ updated_at: base + Math.floor(i / 4) }, { where: { id: t.id }, hooks: false });
    // One of them goes with its customer: its tombstone placed among them.
    expect((await api.del(`/api/user/user/${doomed.id}`)).status).toBe(200);
    await sequelize().query("UPDATE export_tombstones SET deleted_at = :t WHERE resource = 'tickets' AND record_id = :id", { replacements: { t: base + 5, id: made[20].id } });
    const tagged = [made[2].id, made[25].id, made[38].id];

    const found: number[] = [];
    const tombstones: number[] = [];
    let cursor: string | undefined;
    let emptyPages = 0;
    let held = false;
    const t = await sequelize().transaction();
    try {
      // A tagged ticket changed again in the same second by a transaction left open: held back at its place.
      await Ticket.update({ subject: 'Held in the span' }, { where: { id: made[25].id }, transaction: t, hooks: false, silent: true });
      for (let i = 0; i < 1000; i++) {
        const page = expectSuccess(await api.get('/api/export/tickets', { search: `tag:${tag.id}`, limit: 100, ...(cursor ? { cursor } : { start_time: base }) }));
        expect(await ticketsBetween(cursor ?? base, page.after_cursor)).toBeLessThanOrEqual(10);
        found.push(...page.records.map((r: any) => r.id));
        tombstones.push(...page.tombstones.map((x: any) => x.id));
        if (!page.records.length && !page.tombstones.length && !page.end_of_stream) emptyPages += 1;
        cursor = page.after_cursor;
        if (held && (page.end_of_stream || decodeCursor(cursor!, 'tickets')!.t > base + 9)) break;
        if (page.end_of_stream) {
          // Stopped before the ticket the transaction holds (second base + 6), which is not sent yet.
          expect(page.end_time).toBe(base + 5);
          expect(found).toEqual([made[2].id]);
          held = true;
          await t.commit();
        }
      }
    } finally {
      if (!held) await t.rollback();
    }
    expect(found).toEqual(tagged);
    expect(tombstones).toContain(made[20].id);
    expect(emptyPages).toBeGreaterThan(0);
  });

  it('a search most tickets match fills its pages as the whole stream does', async () => {
    config().exportSearchSpan = 10;
    const made: any[] = [];
    for (let i = 0; i < 12; i++) made.push(await f.ticket());
    const base = daysAgo();
    for (const [i, t] of made.entries()) await Ticket.update({ updated_at: base + Math.floor(i / 4) }, { where: { id: t.id }, hooks: false });
    const page = expectSuccess(await api.get('/api/export/tickets', { search: 'created>2000-01-01', limit: 5, start_time: base }));
    expect(page.records.map((r: any) => r.id)).toEqual(made.slice(0, 5).map((x) => x.id));
    expect(page.end_of_stream).toBe(false);
    const next = expectSuccess(await api.get('/api/export/tickets', { search: 'created>2000-01-01', limit: 5, cursor: page.after_cursor }));
    expect(next.records.map((r: any) => r.id)).toEqual(made.slice(5, 10).map((x) => x.id));
  });
});

describe('tombstone retention', () => {
  const retention = () => config().exportTombstoneRetentionSeconds;
  const tombstone = async (recordId: number, deletedAt: number) => sequelize().query(
    "INSERT INTO export_tombstones (resource, record_id, deleted_at) VALUES ('organisations', :recordId, :deletedAt)",
    { replacements: { recordId, deletedAt }, type: QueryTypes.INSERT },
  );
  const kept = async (recordIds: number[]) => (await sequelize().query<{ record_id: number }>(
    "SELECT record_id FROM export_tombstones WHERE resource = 'organisations' AND record_id IN (:recordIds) ORDER BY record_id",
    { replacements: { recordIds }, type: QueryTypes.SELECT },
  )).map((r) => Number(r.record_id));

  it('the scheduler\'s housekeeping job prunes the tombstones older than the retention (90 days by default), and only those', async () => {
    expect(retention()).toBe(90 * 86400);
    expect(schedulerSpec().jobs.filter((j) => j.schedule).map(schedulerIdOf)).toContain(schedulerIdOf(tombstonePruneJob));
    const base = 900_000_000 + Math.floor(Math.random() * 1_000_000);
    const t = nowSec();
    await tombstone(base + 1, t - retention() - 3600);
    await tombstone(base + 2, t - retention() - 1);
    await tombstone(base + 3, t - retention() + 3600);
    await tombstone(base + 4, t);
    expect(await pruneTombstones(t)).toBeGreaterThanOrEqual(2);
    expect(await kept([base + 1, base + 2, base + 3, base + 4])).toEqual([base + 3, base + 4]);
    // Again: nothing left to prune among these.
    await pruneTombstones(t);
    expect(await kept([base + 3, base + 4])).toEqual([base + 3, base + 4]);
  });

  it('a cursor or start_time older than the retention answers a clear 422 (start again from zero), never a page with a silent gap', async () => {
    const t = nowSec();
    const old = t - retention() - 60;
    // A cursor this server wrote for a reader whose copy began longer ago than the retention.
    const expired = encodeCursor({ t: old, k: 0, id: 1, s: old }, 'tickets');
    expectError(await api.get('/api/export/tickets', { cursor: expired }), 422,
      'The cursor has expired: deletions are kept for 90 days only. Start the export again without a cursor.');
    // A cursor written before cursors carried when the copy began counts from its position.
    expectError(await api.get('/api/export/tickets', { cursor: Buffer.from(`${old}.0.1`).toString('base64url') }), 422,
      'The cursor has expired: deletions are kept for 90 days only. Start the export again without a cursor.');
    expectError(await api.get('/api/export/tickets', { start_time: old }), 422,
      'The start time is more than 90 days ago, longer than deletions are kept: start without one.');
    // Still within the retention: pages as usual.
    expectSuccess(await api.get('/api/export/tickets', { cursor: Buffer.from(`${t - 60}.0.1`).toString('base64url') }));
    expectSuccess(await api.get('/api/export/tickets', { start_time: t - retention() + 60 }));
  });

  it('a reader from zero walks records last changed long ago: its copy began now, so its cursors do not expire', async () => {
    const [ancient, later] = [await f.ticket(), await f.ticket()];
    const long = nowSec() - retention() - 86400;
    const age = (id: number, at: number) => sequelize().query('UPDATE tickets SET updated_at = :at WHERE id = :id', { replacements: { at, id }, type: QueryTypes.UPDATE });
    await age(ancient.id, long);
    await age(later.id, long + 1);
    // The oldest records first: their positions are older than the retention, the copy is not.
    const reader: Reader = { copy: new Map(), pages: 0 };
    const first = await readPage('tickets', reader, 1);
    expect(first.records[0].updated_at).toBeLessThanOrEqual(long);
    // The next page starts at the first one's cursor, a position older than the retention. (Pages
    // of one would read every other ticket of the worker's database a request each.)
    await catchUp('tickets', reader, long + 1);
    expect(reader.copy.get(later.id).updated_at).toBe(long + 1);
    expect(reader.copy.get(ancient.id).updated_at).toBe(long);
  });
});
