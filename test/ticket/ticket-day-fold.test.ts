/**
 * The fold of past days' counter rows (migrations 051-053, src/ticket/tickets/dayCounterFold.ts):
 * one row per past day and status (or filter value) left, its span's sum kept with it, the counts
 * exact through every write after it and beside it, today's rows as they were, a held row never
 * waited on, and a deep page still positioned right where a folded day's row no longer counts the
 * tickets within its bounds.
 */
import * as m052 from '../../migrations/052_ticket_span_counts';
import * as m053 from '../../migrations/053_ticket_span_filter_counts';
import { VALUE_DAYS } from '../../migrations/061_ticket_day_order_counts';
import { CUSTOMER_ORDER_COL } from '../../migrations/062_ticket_customer_order_counts';
import * as m063 from '../../migrations/063_ticket_order_marks';
import * as m089 from '../../migrations/089_ticket_mark_filter_counts';
import { Channel, TicketPriority } from '../../src/db/models';
import { now } from '../../src/db/entity';
import { sequelize } from '../../src/db/sequelize';
import { transaction } from '../../src/db/transaction';
import { foldDayCounters } from '../../src/ticket/tickets/dayCounterFold';
import { useApi } from '../helpers/app';
import { expectList, expectSuccess } from '../helpers/envelope';
import { deepPages, expectDayCounts, expectDayFilterCounts, query } from './dayCounterSupport';
import { ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
const BASE = '/api/ticket/ticket';
const DAY = 86400;
let ctx: TicketContext;
const f = ticketFactories(api, () => ctx);

beforeAll(async () => { ctx = await ticketContext(); });

const today = () => Math.floor(now() / DAY);
const hand = (sql: string, replacements: unknown[]) => sequelize().query(sql, { replacements });

/** A past day of the day counters: before today, a time's day (migration 061) before today's, or a customer's (062) or a stretch of a string order's (063), any. */
const PAST = `(day < :today OR day BETWEEN ${VALUE_DAYS} AND ${VALUE_DAYS} + :today - 1 OR col IN (${[CUSTOMER_ORDER_COL, ...m063.MARK_COLS].join(', ')}))`;

/** Past days' groups with more than one row, or whose rows count nothing, in either table. */
async function unfolded(): Promise<number> {
  const [{ n }] = await query<{ n: number }>(
    `SELECT (SELECT COUNT(*) FROM (SELECT 1 FROM ticket_day_counts WHERE ${PAST} GROUP BY col, state, day, status_id HAVING COUNT(*) > 1 OR SUM(n) = 0) a)
          + (SELECT COUNT(*) FROM (SELECT 1 FROM ticket_day_filter_counts WHERE day < :today GROUP BY col, state, dim, val, val2, day, status_id HAVING COUNT(*) > 1 OR SUM(n) = 0) b) AS n`,
    { today: today() },
  );
  return Number(n);
}

/** Both counters' tables against the tickets. */
async function expectExact() {
  await expectDayCounts(true);
  await expectDayFilterCounts();
}

describe('the fold of past days\' day counters', () => {
  it('leaves a row per past day and status or value, keeps today\'s rows, and stays exact through every write after it', async () => {
    const priorities = (await TicketPriority.findAll({ order: [['id', 'ASC']] })).map((x) => x.id).slice(0, 2);
    const channels = (await Channel.findAll({ order: [['id', 'ASC']] })).map((x) => x.id).slice(0, 2);
    const department = await f.department();
    const operator = await f.operator();
    // Days of this test's own in the past: 24 tickets over three days, spread over every slot.
    const P = (8000 + Math.floor(Math.random() * 3000)) * DAY;
    const made = [];
    for (let i = 0; i < 24; i++) {
      made.push(await f.ticket({
        created_at: P + (i % 3) * DAY + i, status: ctx.statuses[i % 2], priority: priorities[i % 2], department: i % 4 ? ctx.departmentId : department.id,
        ...(i % 5 === 0 ? { internal: 1, user: operator.id } : {}),
      }));
    }
    await hand('UPDATE tickets SET updated_at = created_at + 60 WHERE id IN (?)', [made.map((t) => t.id)]);
    // Today's tickets (created and updated now): their rows stay as they are.
    for (let i = 0; i < 3; i++) await f.ticket();
    const todays = () => query(`SELECT * FROM ticket_day_counts WHERE NOT ${PAST} ORDER BY col, state, day, status_id, slot`, { today: today() });
    const todaysBefore = await todays();
    expect(todaysBefore.length).toBeGreaterThan(0);
    expect(await unfolded()).toBeGreaterThan(0);

    expect(await foldDayCounters()).toBeGreaterThan(0);
    expect(await unfolded()).toBe(0);
    expect(await todays()).toEqual(todaysBefore);
    await expectExact();
    // A date range's count from the folded days, through the API.
    const range = { created_at_min: P, created_at_max: P + 3 * DAY - 1, limit: 1 };
    expect(expectList(await api.get(BASE, range)).length).toBe(1);
    expect((await api.get(BASE, range)).body.count).toBe(24);
    expect((await api.get(BASE, { ...range, status: ctx.statuses[1] })).body.count).toBe(12);

    // Tickets leave the folded rows at slots that have none now: each write is counted.
    expectSuccess(await api.put(`${BASE}/${made[1].id}`, { priority: priorities[0], department: department.id, locked: 1 }), 'Successfully updated the ticket!');
    expectSuccess(await api.put(`${BASE}/${made[2].id}`, { assignedto: [operator.id] }), 'Successfully updated the ticket!');
    await expectExact();
    await hand('UPDATE tickets SET status_id = ?, channel_id = ?, internal = 1 - internal WHERE id IN (?)', [ctx.statuses[1], channels[1], [made[3].id, made[4].id, made[5].id]]);
    await hand('UPDATE tickets SET created_at = created_at + ?, updated_at = updated_at - ? WHERE id = ?', [3 * DAY, 5 * DAY, made[6].id]);
    await expectExact();
    expect((await api.del(`${BASE}/${made[7].id}`)).status).toBe(200); // the trash
    expectSuccess(await api.post(`${BASE}/${made[8].id}/merge`, { ids: [made[9].id, made[13].id] }), 'Successfully updated the ticket!');
    await hand('DELETE FROM tickets WHERE id IN (?)', [[made[11].id, made[12].id]]);
    await expectExact();
    expect((await api.get(BASE, range)).body.count).toBe(24 - 1 - 2 - 2 - 1); // trashed, merged, deleted, moved past the range
    expect(await unfolded()).toBeGreaterThan(0);

    // Folded again: compact and exact.
    expect(await foldDayCounters()).toBeGreaterThan(0);
    expect(await unfolded()).toBe(0);
    await expectExact();
    expect((await api.get(BASE, range)).body.count).toBe(18);

    // Migrations 053 and 052 down and up again: the folded rows stay where they are, their spans' sums are made again.
    // (089 and 063 first and last, as a way down and up takes them: 052 sums the spans of every column it finds.)
    const spans = async () => Number((await query<{ n: number }>('SELECT (SELECT COUNT(*) FROM ticket_span_counts) * (SELECT COUNT(*) FROM ticket_span_filter_counts) AS n'))[0].n);
    expect(await spans()).toBeGreaterThan(0);
    await m089.down(sequelize().getQueryInterface());
    await m063.down(sequelize().getQueryInterface());
    await m053.down(sequelize().getQueryInterface());
    await m052.down(sequelize().getQueryInterface());
    await m052.up(sequelize().getQueryInterface());
    await m053.up(sequelize().getQueryInterface());
    await m063.up(sequelize().getQueryInterface());
    await m089.up(sequelize().getQueryInterface());
    expect(await spans()).toBeGreaterThan(0);
    await expectExact();
  });

  it('never waits on a row a write holds: that span is left for the next run, and writes beside the fold are all counted', async () => {
    const priorities = (await TicketPriority.findAll({ order: [['id', 'ASC']] })).map((x) => x.id).slice(0, 2);
    const P = (11500 + Math.floor(Math.random() * 400)) * DAY;
    const made = [];
    for (let i = 0; i < 10; i++) made.push(await f.ticket({ created_at: P + i, status: ctx.statuses[i % 2] }));
    const rowsOfDay = async () => Number((await query<{ n: number }>('SELECT COUNT(*) AS n FROM ticket_day_counts WHERE col = 0 AND day = :d', { d: P / DAY }))[0].n);
    const before = await rowsOfDay();
    expect(before).toBeGreaterThan(2);

    // A write's transaction holds one of the day's rows (its own connection) while the fold runs.
    let release!: () => void;
    const released = new Promise<void>((r) => { release = r; });
    let held!: () => void;
    const holding = new Promise<void>((r) => { held = r; });
    const writer = sequelize().transaction(async (t) => {
      await sequelize().query('UPDATE ticket_day_counts SET n = n WHERE col = 0 AND state = 0 AND day = :d LIMIT 1', { replacements: { d: P / DAY }, transaction: t });
      held();
      await released;
    });
    await holding;
    // The write ends only after the fold: a fold that waited for its row would wait until the
    // statement timeout stopped it (an error); one that does not wait returns at once.
    try {
      await foldDayCounters();
    } finally {
      release();
      await writer;
    }
    expect(await rowsOfDay()).toBe(before);
    // Released: the next run folds the day.
    await foldDayCounters();
    expect(await rowsOfDay()).toBe(2);

    // Writes to past days beside repeated folds: none is lost. Each is a transaction of the app's
    // (src/db/transaction.ts), as a ticket's write is: ten at once move counts between the same
    // rows and may deadlock with each other (not with the fold), and the victim runs again.
    let writing = true;
    const folds = (async () => { let runs = 0; while (writing || runs < 2) { await foldDayCounters(); runs++; } return runs; })();
    try {
      for (let round = 0; round < 6; round++) {
        await Promise.all(made.map((t, i) => transaction((tx) => sequelize().query('UPDATE tickets SET status_id = ?, priority_id = ?, updated_at = updated_at - ? WHERE id = ?', {
          replacements: [ctx.statuses[(i + round) % 3], priorities[(i + round) % 2], DAY, t.id], transaction: tx,
        }))));
      }
    } finally {
      writing = false;
    }
    expect(await folds).toBeGreaterThanOrEqual(2);
    await expectExact();
  });

  it('positions a deep page from a folded day whose listed ticket is held by a row counting 0', async () => {
    const { listed, skipped, positioning } = deepPages(api, BASE);
    // Nine tickets in a row whose first id is not a multiple of 8 (their slots: x's, then all
    // eight), made on a past day of their own (a day's id bounds keep every id it counted while it
    // has tickets: not today's), those before them deleted.
    const P = (4000 + Math.floor(Math.random() * 3000)) * DAY;
    // A ticket before them, so that their page is a deep one in any database.
    const before = await f.ticket({ created_at: P - DAY });
    const tickets = [];
    do {
      tickets.push(await f.ticket({ created_at: P }));
    } while (tickets.length < 9 || tickets[tickets.length - 9].id % 8 === 0);
    const nine = tickets.slice(-9);
    if (tickets.length > 9) await hand('DELETE FROM tickets WHERE id IN (?)', [tickets.slice(0, -9).map((t) => t.id)]);
    const [x, z] = [nine[0], nine[8]]; // z's slot is x's
    // On a day of their own after every other ticket's: x in one status, the other eight in another.
    const F = (today() + 20000 + Math.floor(Math.random() * 1000)) * DAY;
    try {
      for (const [i, t] of nine.entries()) {
        await hand('UPDATE tickets SET created_at = ?, updated_at = ?, status_id = ? WHERE id = ?', [F + i, F + i, i ? ctx.statuses[0] : ctx.statuses[1], t.id]);
      }
      await foldDayCounters(F + DAY);
      // z leaves the folded row of its status (a row of -1 at its slot), x joins that status at the
      // same slot: that row counts 0 and holds x, the day's smallest id.
      await hand('UPDATE tickets SET status_id = ? WHERE id = ?', [ctx.statuses[2], z.id]);
      await hand('UPDATE tickets SET status_id = ? WHERE id = ?', [ctx.statuses[0], x.id]);
      await expectExact();
      await positioning(async () => {
        const { count } = await skipped({});
        const q = { order_column: 'id', start: count - 8 };
        const [got, want] = [await listed(q), await skipped(q)];
        expect(want.ids).toEqual(nine.slice(0, 3).map((t) => t.id));
        expect({ edge: got.edge, ids: got.ids }).toEqual({ edge: x.id, ids: want.ids });
      });
    } finally {
      // Dated decades ahead: gone again (as the date tests' own).
      await hand('DELETE FROM tickets WHERE id IN (?)', [[before, ...nine].map((t) => t.id)]);
    }
  });
});
