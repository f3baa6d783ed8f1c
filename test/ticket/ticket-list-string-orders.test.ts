/**
 * A deep page of the ticket list in a string order (`subject`, `number`), unfiltered, by status, by
 * another counted filter or by both (migration 089), positioned by migration 063's marks
 * (src/ticket/tickets/listPage.ts, markEdge): the stretch the
 * page starts in found from the stretches' counters summed in the marks' order, the page read
 * from the stretch's mark. Every page is the one the database's own ORDER BY gives, and the one
 * skipping gives; the counters stay exact through the writes that move a ticket between
 * stretches, through splits (src/ticket/tickets/orderMarks.ts), also beside a write in flight,
 * and after a fold.
 */
import { Transaction } from 'sequelize';
import { capture, explainOf, withoutSwitches, type Statement } from '../../bench/capture';
import * as m063 from '../../migrations/063_ticket_order_marks';
import * as m089 from '../../migrations/089_ticket_mark_filter_counts';
import { sequelize } from '../../src/db/sequelize';
import { foldDayCounters } from '../../src/ticket/tickets/dayCounterFold';
import { splitOrderMarks } from '../../src/ticket/tickets/orderMarks';
import { useApi } from '../helpers/app';
import { leftOpen, runningStatements } from '../helpers/races';
import { waitFor } from '../helpers/smtp';
import { comparePagesAt, deepPages, expectDayCounts, expectDayFilterCounts, ordered, query } from './dayCounterSupport';
import { ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
const BASE = '/api/ticket/ticket';
/** Tickets between marks in these tests: a stretch of more than twice as many is split. */
const EVERY = 3;
let ctx: TicketContext;
const f = ticketFactories(api, () => ctx);

beforeAll(async () => { ctx = await ticketContext(); });

const markCount = async (column: m063.MarkedOrder) => Number((await query<{ n: number }>('SELECT COUNT(*) AS n FROM ticket_order_marks WHERE col = ?', [m063.markCol(column)]))[0].n);

/** A subject of this test: `stem` (shared by tickets, in two cases) after a prefix of the run's own. */
const tag = `Strings ${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

describe('a deep page in the subject and number orders (migrations 063 and 089)', () => {
  const pages = deepPages(api, BASE);
  const { positioning } = pages;

  it('gives the database\'s pages both ways, unfiltered, by status, by a priority and by a flag, through splits, moves, the trash, a merge, a delete and a fold', async () => {
    // A second priority: this test's tickets have one or the other.
    const [priority] = await query<{ id: number }>('SELECT id FROM ticket_priorities WHERE id <> ? ORDER BY id LIMIT 1', [ctx.priorityId]);
    const priorities = [ctx.priorityId, Number(priority.id)];
    // Subjects shared (in two cases: equal to the collation), one a prefix of others.
    const stems = ['printer', 'Printer', 'printer', 'printer jam', 'mouse', 'Mouse', 'printer', 'zebra', 'printer', 'printer jam', 'keyboard', 'printer'];
    const made: number[] = [];
    for (const [i, stem] of stems.entries()) {
      const t = await f.ticket({ subject: `${tag} ${stem}`, status: ctx.statuses[i % 3 === 1 ? 1 : 0], priority: priorities[i % 4 === 2 ? 0 : 1] });
      made.push(t.id);
    }
    // Locked: half of them, of either status (a flag counted per stretch by both its values).
    await sequelize().query('UPDATE tickets SET locked = 1 WHERE id IN (?)', { replacements: [made.filter((_, i) => i % 2 === 0)] });
    /**
     * Both string orders both ways, unfiltered, by status, by the second priority and by both, by
     * a flag (locked, and with a status) and its complement (unlocked): around each of this test's
     * tickets, and at quarters.
     */
    const lists: Array<[number | undefined, Record<string, number>, Record<string, number>]> = [
      [undefined, {}, {}], [ctx.statuses[1], {}, {}], [undefined, { priority: priorities[1] }, { priority_id: priorities[1] }],
      [ctx.statuses[1], { priority: priorities[1] }, { priority_id: priorities[1] }],
      [undefined, { locked: 1 }, { locked: 1 }], [ctx.statuses[1], { locked: 1 }, { locked: 1 }], [undefined, { locked: 0 }, { locked: 0 }],
    ];
    const comparePages = () => positioning(async () => {
      for (const [status, filter, where] of lists) {
        for (const order_column of m063.MARKED_ORDERS) {
          for (const order_direction of ['asc', 'desc']) {
            const q0 = { ...(status ? { status } : {}), ...filter, order_column, order_direction };
            const at = await ordered(order_column, order_direction, status, where);
            const { positioned } = await comparePagesAt(pages, q0, at, made);
            // Positioned at a mark: a key of the order (its ticket's id), not necessarily this test's.
            expect({ q0, positioned: positioned.length > 0 }).toEqual({ q0, positioned: true });
          }
        }
      }
    });
    try {
      // Every stretch of more than 2 × EVERY listed tickets split, this worker's earlier tickets' too.
      expect(await splitOrderMarks(EVERY)).toBeGreaterThan(0);
      const marks = { subject: await markCount('subject'), number: await markCount('number') };
      expect(marks.subject).toBeGreaterThan(4);
      expect(marks.number).toBeGreaterThan(4);
      await expectDayCounts(true);
      await expectDayFilterCounts();
      await comparePages();
      // Moves: subjects changed (to another stretch, and to one equal to the collation), statuses,
      // the trash and back, a merge, a delete: the counters follow.
      await sequelize().query('UPDATE tickets SET subject = ? WHERE id = ?', { replacements: [`${tag} aardvark`, made[7]] });
      await sequelize().query('UPDATE tickets SET subject = ? WHERE id = ?', { replacements: [`${tag} PRINTER`, made[4]] });
      await sequelize().query('UPDATE tickets SET status_id = IF(status_id = ?, ?, ?) WHERE id IN (?)', { replacements: [ctx.statuses[0], ctx.statuses[1], ctx.statuses[0], [made[0], made[1], made[8]]] });
      await sequelize().query('UPDATE tickets SET deleted_at = UNIX_TIMESTAMP() WHERE id IN (?)', { replacements: [[made[2], made[3]]] });
      await sequelize().query('UPDATE tickets SET deleted_at = NULL WHERE id = ?', { replacements: [made[3]] });
      await sequelize().query('UPDATE tickets SET merged_into_id = ?, merged = 1 WHERE id = ?', { replacements: [made[6], made[5]] });
      await sequelize().query('DELETE FROM tickets WHERE id = ?', { replacements: [made[10]] });
      // A priority changed alone (its stretches stay), with a subject, with a status, and beside an unchanged department.
      await sequelize().query('UPDATE tickets SET priority_id = ? WHERE id IN (?)', { replacements: [priorities[0], [made[1], made[9]]] });
      await sequelize().query('UPDATE tickets SET priority_id = ?, subject = ? WHERE id = ?', { replacements: [priorities[1], `${tag} aaa`, made[2]] });
      await sequelize().query('UPDATE tickets SET priority_id = ?, status_id = ? WHERE id = ?', { replacements: [priorities[1], ctx.statuses[2], made[6]] });
      await sequelize().query('UPDATE tickets SET priority_id = IF(priority_id = ?, ?, ?), department_id = department_id WHERE id = ?', { replacements: [priorities[0], priorities[1], priorities[0], made[11]] });
      // A flag changed alone, and with a status.
      await sequelize().query('UPDATE tickets SET locked = 1 - locked WHERE id IN (?)', { replacements: [[made[3], made[7]]] });
      await sequelize().query('UPDATE tickets SET locked = 1 - locked, status_id = ? WHERE id = ?', { replacements: [ctx.statuses[1], made[9]] });
      await expectDayCounts(true);
      await expectDayFilterCounts();
      await comparePages();
      // More tickets of one subject: they all land in one stretch (the one whose mark is before
      // them), which grows past 2 × EVERY and is split again.
      const grown: number[] = [];
      for (let i = 0; i < 2 * EVERY + 2; i++) grown.push((await f.ticket({ subject: `${tag} printer`, status: ctx.statuses[i % 2], priority: priorities[i % 3 ? 1 : 0] })).id);
      await sequelize().query('UPDATE tickets SET locked = 1 WHERE id IN (?)', { replacements: [grown.filter((_, i) => i % 3 === 0)] });
      made.push(...grown);
      expect(await splitOrderMarks(EVERY)).toBeGreaterThan(0);
      expect(await markCount('subject')).toBeGreaterThan(marks.subject);
      await expectDayCounts(true);
      await expectDayFilterCounts();
      await comparePages();
      // Folded (the job folds these columns every minute): a stretch's rows summed into one.
      expect(await foldDayCounters(undefined, m063.MARK_COLS)).toBeGreaterThan(0);
      const unfolded = await query<{ n: number }>('SELECT COUNT(*) AS n FROM ticket_day_counts WHERE col IN (?) AND slot < 8', [m063.MARK_COLS]);
      expect(Number(unfolded[0].n)).toBe(0);
      const unfoldedFilters = await query<{ n: number }>('SELECT COUNT(*) AS n FROM ticket_day_filter_counts WHERE col IN (?) AND slot < 8', [m063.MARK_COLS]);
      expect(Number(unfoldedFilters[0].n)).toBe(0);
      await expectDayCounts(true);
      await expectDayFilterCounts();
      await comparePages();
    } finally {
      await sequelize().query('DELETE FROM tickets WHERE id IN (?)', { replacements: [made] });
    }
  });

  it('fills (migrations 063 and 089) a mark every N listed tickets and each stretch\'s counts from the tickets, a range at a time', async () => {
    const made: number[] = [];
    for (let i = 0; i < 2 * EVERY + 1; i++) made.push((await f.ticket({ subject: `${tag} fill ${i % 3}`, status: ctx.statuses[i % 2] })).id);
    try {
      const qi = sequelize().getQueryInterface();
      await m063.fillMarks(qi, EVERY);
      await m063.fillMarkCounts(qi);
      await m089.fillMarkFilterCounts(qi);
      await expectDayFilterCounts();
      const [{ n: listed }] = await query<{ n: number }>('SELECT COUNT(*) AS n FROM tickets WHERE deleted_at IS NULL AND merged_into_id IS NULL');
      // The sentinel, then the EVERY-th listed ticket, the 2 × EVERY-th, ...
      for (const column of m063.MARKED_ORDERS) expect({ column, marks: await markCount(column) }).toEqual({ column, marks: 1 + Math.floor(Number(listed) / EVERY) });
      await expectDayCounts(true);
      await positioning(async () => {
        // Unfiltered, and by the tickets' priority (the fill's rows of migration 089), with a status too.
        const lists: Array<[string, string, number?, number?]> = [['subject', 'asc'], ['number', 'desc'], ['subject', 'asc', undefined, ctx.priorityId], ['number', 'desc', undefined, ctx.priorityId], ['subject', 'desc', ctx.statuses[1], ctx.priorityId]];
        for (const [order_column, order_direction, status, priority] of lists) {
          const q0 = { order_column, order_direction, ...(status ? { status } : {}), ...(priority ? { priority } : {}) };
          const { positioned } = await comparePagesAt(pages, q0, await ordered(order_column, order_direction, status, priority ? { priority_id: priority } : {}), made);
          expect({ q0, positioned: positioned.length > 0 }).toEqual({ q0, positioned: true });
        }
      });
    } finally {
      await sequelize().query('DELETE FROM tickets WHERE id IN (?)', { replacements: [made] });
    }
  });

  it('reads a positioned page as a range of the order\'s index, in its order (no filesort), both ways', async () => {
    const made: number[] = [];
    for (let i = 0; i < 2 * EVERY + 1; i++) made.push((await f.ticket({ subject: `${tag} plan ${i}` })).id);
    try {
      await splitOrderMarks(EVERY);
      await positioning(async () => {
        // Unfiltered, and by these tickets' priority (migration 089's rows).
        for (const priority of [undefined, ctx.priorityId]) {
          for (const order_column of m063.MARKED_ORDERS) {
            for (const order_direction of ['asc', 'desc']) {
              const list = { order_column, order_direction, ...(priority ? { priority } : {}) };
              const at = await ordered(order_column, order_direction, undefined, priority ? { priority_id: priority } : {});
              let seen = 0;
              for (const id of made) {
                const { statements } = await capture(() => api.get(BASE, { ...list, start: at.indexOf(id) + 1, limit: 3 }));
                const page = statements.find((s: Statement) => withoutSwitches(s.sql).startsWith('SELECT STRAIGHT_JOIN t.* FROM (SELECT'))!;
                if ((page.params as Record<string, unknown>).pageId === undefined) continue;
                seen++;
                const inner = (await query<Record<string, any>>(explainOf(page.sql), page.params as Record<string, unknown>)).find((r) => r.select_type === 'DERIVED')!;
                expect({ list, plan: `${inner.key} ${inner.type}${/filesort/.test(String(inner.Extra)) ? ' filesort' : ''}` })
                  .toEqual({ list, plan: `tickets_list_${order_column} range` });
              }
              expect({ list, seen: seen > 0 }).toEqual({ list, seen: true });
            }
          }
        }
      });
    } finally {
      await sequelize().query('DELETE FROM tickets WHERE id IN (?)', { replacements: [made] });
    }
  });

  /** Tickets of one new subject, enough that their stretch is split: their ids. */
  async function grownStretch(stem: string): Promise<number[]> {
    const made: number[] = [];
    for (let i = 0; i < 3 * EVERY; i++) made.push((await f.ticket({ subject: `${tag} ${stem}` })).id);
    return made;
  }

  /**
   * Tickets of this test before the others (the sentinel's stretch is then none of theirs: a
   * look-up that found the sentinel would hold the latch's row itself), then every grown stretch split.
   */
  async function splitAfterOwnFirst(): Promise<number[]> {
    const first = await grownStretch('aaa');
    expect(await splitOrderMarks(EVERY)).toBeGreaterThan(0);
    return first;
  }

  it('splits a stretch only once a write whose trigger looked a stretch up has ended: the ticket it moved is counted where it now lies', async () => {
    const made = await splitAfterOwnFirst();
    made.push(...await grownStretch('held'));
    const moved = (await f.ticket({ subject: `${tag} elsewhere` })).id;
    made.push(moved);
    try {
      // A ticket moved to the end of the grown stretch (a new mark's stretch once split), left
      // uncommitted: the split waits for it on the latch, then counts it committed. At READ
      // COMMITTED, where nothing else holds the split back (at REPEATABLE READ the look-up's
      // next-key locks would also hold the split's new marks until the move commits).
      const held = await sequelize().transaction({ isolationLevel: Transaction.ISOLATION_LEVELS.READ_COMMITTED });
      let splitting: Promise<number> | undefined;
      try {
        await sequelize().query('UPDATE tickets SET subject = ? WHERE id = ?', { replacements: [`${tag} held`, moved], transaction: held });
        splitting = splitOrderMarks(EVERY, 60);
        await waitFor(async () => (await runningStatements('ticket_id = 0 FOR UPDATE')) > 0, 10000, 'the split waiting on the latch');
      } finally {
        await held.commit();
      }
      expect(await splitting).toBeGreaterThan(0);
      await expectDayCounts(true);
    } finally {
      await sequelize().query('DELETE FROM tickets WHERE id IN (?)', { replacements: [made] });
    }
  });

  it('looks a stretch up only once a split has committed, and sees its marks, at READ COMMITTED too', async () => {
    const made = await splitAfterOwnFirst();
    made.push(...await grownStretch('splitting'));
    const moved = (await f.ticket({ subject: `${tag} elsewhere` })).id;
    made.push(moved);
    let blocker: { commit(): Promise<void> } | undefined;
    let moving: Promise<unknown> | undefined;
    try {
      // The split held after writing its marks: a counter row of the grown stretch it moves tickets from is locked.
      const col = m063.markCol('subject');
      const [{ day }] = await query<{ day: number }>(
        `SELECT m.day FROM ticket_order_marks m WHERE m.col = ? AND (m.val < ? OR (m.val = ? AND m.ticket_id <= ?)) ORDER BY m.val DESC, m.ticket_id DESC LIMIT 1`,
        [col, `${tag} splitting`, `${tag} splitting`, made[made.length - 2]],
      );
      const rows = await query<{ status_id: number }>('SELECT DISTINCT status_id FROM tickets WHERE id IN (?)', [made]);
      blocker = await leftOpen((t: Transaction) => sequelize().query(
        `INSERT INTO ticket_day_counts (col, state, day, status_id, slot, n, lo_id, hi_id) VALUES ${rows.map(() => '(?, 0, ?, ?, ?, 0, 4294967295, 0)').join(', ')} ON DUPLICATE KEY UPDATE n = n`,
        { replacements: rows.flatMap((r) => [col, day, r.status_id, Number(day) % 8]), transaction: t },
      ));
      const splitting = splitOrderMarks(EVERY, 60);
      await waitFor(async () => (await runningStatements('ON DUPLICATE KEY UPDATE n = n + VALUES(n)')) > 0, 10000, 'the split waiting after its marks');
      // A ticket moved to the end of the stretch being split, at READ COMMITTED: its trigger waits
      // on the latch, then finds the new mark (its look-up is a locking read).
      moving = sequelize().transaction({ isolationLevel: Transaction.ISOLATION_LEVELS.READ_COMMITTED }, (t) => sequelize().query(
        'UPDATE tickets SET subject = ? WHERE id = ?', { replacements: [`${tag} splitting`, moved], transaction: t },
      ));
      // (The process list shows the trigger's statement that waits: the latch's.)
      await waitFor(async () => (await runningStatements('ticket_id = 0 LOCK IN SHARE MODE')) > 0, 10000, 'the move waiting on the latch');
      const held = blocker;
      blocker = undefined;
      await held.commit();
      expect(await splitting).toBeGreaterThan(0);
      await moving;
      await expectDayCounts(true);
    } finally {
      // (Whatever failed, nothing of this test is left holding locks.)
      await blocker?.commit();
      await moving?.catch(() => undefined);
      await sequelize().query('DELETE FROM tickets WHERE id IN (?)', { replacements: [made] });
    }
  });
});
