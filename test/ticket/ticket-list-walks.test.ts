/**
 * Bounded walks (listPage's walkedPage): a page read by walking an order's index stops at its
 * bound (LIMIT ROWS EXAMINED) where the list's matches lie far along that order, and is then read
 * through the filter's own index and sorted: the same page either way (and for a while read so at
 * once, the stop remembered). Here an organisation's (and its customer's) tickets in `number`
 * order, their numbers after every other ticket's (in `subject` order their tickets are a range
 * of their own, migration 090), and a department's, all of one subject family that sorts after
 * every other ticket's, in `subject` order: ascending, the walk passes every other ticket first and is stopped;
 * descending, their tickets come first and the walk ends within its bound. A walk that tests its
 * filter on the index entries alone (an organisation's or customer's, migration 087; a counted
 * filter's in a wide order or `subject`, migrations 025 and 088) may go further than one that
 * reads each entry's ticket (boundedWalks.perCovered): the last three tests.
 */
import { QueryTypes } from 'sequelize';
import { capture, explainOf, type Statement } from '../../bench/capture';
import { ORGANISATION_INDEX } from '../../migrations/086_ticket_organisation';
import { CUSTOMER_SUBJECT_INDEX, ORGANISATION_SUBJECT_INDEX } from '../../migrations/090_customer_subject_indexes';
import { Organisation } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { boundedWalks, stoppedFor } from '../../src/ticket/tickets/listPage';
import { unique, useApi } from '../helpers/app';
import { expectList } from '../helpers/envelope';
import { ids, query, ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
const BASE = '/api/ticket/ticket';
let ctx: TicketContext;
const f = ticketFactories(api, () => ctx);

beforeAll(async () => { ctx = await ticketContext(); });

const kept = { walks: { ...boundedWalks, perSorted: { ...boundedWalks.perSorted }, perCovered: { ...boundedWalks.perCovered } }, ms: stoppedFor.ms };
afterEach(() => { Object.assign(boundedWalks, kept.walks); stoppedFor.ms = kept.ms; });

const LIMIT = 2;

/** The page statements of a request's (a walk's, or the page read the other way). */
const pageStatements = <S extends { sql: string }>(statements: S[]): S[] =>
  statements.filter((st) => /^(SET STATEMENT .* FOR )?SELECT STRAIGHT_JOIN t\.\* FROM \(SELECT/.test(st.sql));

/** The listed tickets of `where` (of `value`). */
const listedOf = async (where: string, value: number) => Number((await query<{ n: number }>(
  `SELECT COUNT(*) AS n FROM tickets WHERE ${where} AND deleted_at IS NULL AND merged_into_id IS NULL`, [value]))[0].n);

/** The listed tickets of the whole database (the list unfiltered). */
const listedTotal = async () => Number((await query<{ n: number }>('SELECT COUNT(*) AS n FROM tickets WHERE deleted_at IS NULL AND merged_into_id IS NULL'))[0].n);

/**
 * `made` copied by SQL into `n` more tickets of its customer, department and subject (the counters
 * follow by their triggers), of its times: none in the future, which a change stream (the search
 * server's writer, in a later file of this worker) holds back until then.
 */
async function copies(made: { id: number }, n: number): Promise<void> {
  await sequelize().query(`INSERT INTO tickets (number, department_id, brand_id, channel_id, user_id, status_id, priority_id, subject, last_reply_by,
      locked, merged, internal, token, created_at, updated_at)
    SELECT CONCAT(t.number, '-', s.seq), t.department_id, t.brand_id, t.channel_id, t.user_id, t.status_id, t.priority_id, t.subject, t.last_reply_by,
      0, 0, 0, SHA1(RAND()), t.created_at, t.updated_at
    FROM tickets t JOIN seq_1_to_${n} s WHERE t.id = ?`, { replacements: [made.id] });
}

/**
 * A ticket `made` copied into enough tickets that walking the subject order is the expected
 * cheaper way to a page of LIMIT (their number squared over the reach times every listed ticket),
 * among at least FILLED listed tickets of subjects before theirs (the walk ascending passes them).
 */
const FILLED = 400;
async function many(made: { id: number }): Promise<void> {
  const before = await listedTotal();
  if (before < FILLED) await copies(await f.ticket({ subject: `Walk filler ${unique('f')}` }), FILLED - before);
  await copies(made, Math.ceil(Math.sqrt(16 * LIMIT * Math.max(before, FILLED))));
}

/**
 * `made`, of `value` in `column` (`subject` or `number`, after every other listed ticket's), copied
 * into `1 / share` as many tickets as a walk ascending passes before theirs (the listed tickets of
 * values before it): then the tickets of the filter (`where`, of `value`) and the entries that walk passes.
 */
async function coveredFamily(
  made: { id: number }, column: 'subject' | 'number', first: string, share: number, where: string, value: number,
): Promise<{ mine: number; walked: number }> {
  const before = await listedTotal();
  if (before < FILLED) await copies(await f.ticket({ subject: `Walk filler ${unique('f')}` }), FILLED - before);
  // `column` is one of the two names above, never a value from a request.
  const passed = async () => Number((await query<{ n: number }>(
    `SELECT COUNT(*) AS n FROM tickets WHERE deleted_at IS NULL AND merged_into_id IS NULL AND ${column} < ?`, [first]))[0].n);
  await copies(made, Math.ceil((await passed()) / share) - 1);
  const mine = Number((await query<{ n: number }>(`SELECT COUNT(*) AS n FROM tickets WHERE ${where} AND deleted_at IS NULL`, [value]))[0].n);
  return { mine, walked: await passed() };
}

/**
 * The first page of the list `q` in `column` order, the same as the plain way's (`where`, of
 * `value`; `count` of them): its page statements, and each one's index and whether it is bounded.
 */
async function firstPage(q: Record<string, unknown>, column: 'subject' | 'number', where: string, value: number, count: number) {
  const want = (await query<{ id: number }>(
    `SELECT id FROM tickets WHERE ${where} AND deleted_at IS NULL AND merged_into_id IS NULL ORDER BY ${column}, id LIMIT ?`, [value, LIMIT],
  )).map((r) => Number(r.id));
  const { statements, result } = await capture(() => api.get(BASE, { ...q, order_column: column, start: 1, limit: LIMIT }));
  expect({ ids: ids(expectList(result)), count: result.body.count }).toEqual({ ids: want, count });
  const pages = pageStatements(statements);
  return { pages, read: pages.map((st) => ({ index: /FORCE INDEX \((\w+)\)/.exec(st.sql)?.[1], bounded: / ROWS EXAMINED /.test(st.sql) })) };
}

/** How a page statement reads the tickets (EXPLAIN): the index, and whether its entries alone. */
async function ticketAccess(st: Statement): Promise<Array<{ key: unknown; indexOnly: boolean }>> {
  const plan = await sequelize().query<Record<string, unknown>>(explainOf(st.sql), { replacements: st.params, type: QueryTypes.SELECT });
  return plan.filter((r) => r.table === 'Ticket').map((r) => ({ key: r.key, indexOnly: /Using index/.test(String(r.Extra)) }));
}

/**
 * The list `q` in `column` order both ways equals the plain way's (`where`, SQL over the
 * tickets), first page and past the middle. Ascending, the walk of the order's index is stopped
 * (a page statement bounded, then one through `index`); descending it ends within its bound (one
 * page statement, bounded).
 */
async function expectWalks(q: Record<string, unknown>, column: 'subject' | 'number', where: string, values: unknown[], index: string) {
  for (const [dir, stopped] of [['asc', true], ['desc', false]] as const) {
    const want = (await query<{ id: number }>(
      `SELECT id FROM tickets WHERE ${where} AND deleted_at IS NULL AND merged_into_id IS NULL ORDER BY ${column} ${dir}, id ${dir}`, values,
    )).map((r) => Number(r.id));
    for (const start of [1, 5]) {
      const asked = { ...q, order_column: column, order_direction: dir, start, limit: LIMIT };
      const { statements, result } = await capture(() => api.get(BASE, asked));
      expect({ asked, ids: ids(expectList(result)), count: result.body.count })
        .toEqual({ asked, ids: want.slice(start - 1, start - 1 + LIMIT), count: want.length });
      const pages = pageStatements(statements).map((st) => st.sql);
      const read = pages.map((sql) => ({
        bounded: / ROWS EXAMINED /.test(sql), walked: sql.includes(`FORCE INDEX (tickets_list_${column})`), through: sql.includes(`FORCE INDEX (${index})`),
      }));
      const walk = { bounded: true, walked: true, through: false };
      const through = { bounded: false, walked: false, through: true };
      // Once stopped, a page as deep or deeper of the list is read the other way at once.
      expect({ asked, read }).toEqual({ asked, read: !stopped ? [walk] : start === 1 ? [walk, through] : [through] });
    }
    // Tried again once the stop is old.
    stoppedFor.ms = 0;
    const again = { ...q, order_column: column, order_direction: dir, start: 5, limit: LIMIT };
    const retried = await capture(() => api.get(BASE, again));
    expect({ again, ids: ids(expectList(retried.result)) }).toEqual({ again, ids: want.slice(4, 4 + LIMIT) });
    expect({ again, bounded: retried.statements.filter((st) => / ROWS EXAMINED /.test(st.sql)).length }).toEqual({ again, bounded: 1 });
    stoppedFor.ms = kept.ms;
    // After an `after_id` what is left of the list is unknown: the walk is not bounded, and ends.
    const after = { ...q, order_column: column, order_direction: dir, after_id: want[1], limit: LIMIT };
    const { statements, result } = await capture(() => api.get(BASE, after));
    expect({ after, ids: ids(expectList(result)) }).toEqual({ after, ids: want.slice(2, 2 + LIMIT) });
    expect(statements.some((st) => / ROWS EXAMINED /.test(st.sql))).toBe(false);
  }
}

describe('a walk of the order index for a page is bounded, and the page read through the filter when the walk is stopped', () => {
  it("an organisation's and its customer's tickets, all after every other ticket in number order", async () => {
    // Their walks read no ticket (covered): bounded here as one that reads them is, to be stopped.
    boundedWalks.perCovered = { customers: 1, counted: 1 };
    const org = await Organisation.create({ name: unique('WalkOrg'), brand_id: ctx.brandId });
    const member = await f.user({ organisation_id: org.id });
    const made = await f.ticket({ user: member.id });
    // Its number, and its copies' (its own then `-n`), after every other ticket's.
    await sequelize().query("UPDATE tickets SET number = CONCAT('zzzz-', id) WHERE id = ?", { replacements: [made.id] });
    await many(made);
    await expectWalks({ organisation: org.id }, 'number', 'organisation_id = ?', [org.id], ORGANISATION_INDEX);
    // Their one customer's, by id and by address: through the customer's index.
    await expectWalks({ user: member.id }, 'number', 'user_id = ?', [member.id], 'tickets_filter_user_id');
    await expectWalks({ user_email: member.email }, 'number', 'user_id = ?', [member.id], 'tickets_filter_user_id');
    // In `subject` order their tickets are a range of their own (migration 090): no walk, exact.
    for (const [q, index] of [[{ organisation: org.id }, ORGANISATION_SUBJECT_INDEX], [{ user: member.id }, CUSTOMER_SUBJECT_INDEX]] as const) {
      const { read } = await firstPage(q, 'subject', 'organisation_id = ?', org.id, await listedOf('organisation_id = ?', org.id));
      expect({ q, read }).toEqual({ q, read: [{ index, bounded: false }] });
    }

    // Whatever the bound, the same page: a walk stopped while it reads (the rows it had) or while
    // the page's rows are sorted (an error, ER_FILSORT_ABORT) is read the other way. With their
    // status in `number` order the walk reads each entry's ticket (the number index holds no
    // status; the subject's does, migration 088), so it is taken whatever perCovered is, and
    // bounded here by `fixed` alone. Their numbers made to sort after every other ticket's.
    await sequelize().query("UPDATE tickets SET number = CONCAT('zzzz-', id) WHERE organisation_id = ?", { replacements: [org.id] });
    for (const dir of ['asc', 'desc']) {
      const want = (await query<{ id: number }>(
        `SELECT id FROM tickets WHERE organisation_id = ? AND status_id = ? AND deleted_at IS NULL AND merged_into_id IS NULL ORDER BY number ${dir}, id ${dir} LIMIT 1, ${LIMIT}`,
        [org.id, made.status_id],
      )).map((r) => Number(r.id));
      // No stop remembered: each request walks at its bound.
      stoppedFor.ms = 0;
      const ways = new Set<string>();
      for (let bound = 1; bound <= 40; bound++) {
        Object.assign(boundedWalks, { perSorted: { ASC: 0, DESC: 0 }, perRow: 0, fixed: bound });
        const asked = { organisation: org.id, status: made.status_id, order_column: 'number', order_direction: dir, start: 2, limit: LIMIT };
        const { statements, result } = await capture(() => api.get(BASE, asked));
        expect({ asked, bound, ids: ids(expectList(result)) }).toEqual({ asked, bound, ids: want });
        const pages = pageStatements(statements);
        // The walk first, bounded; then, when it stopped, the page through the organisation's index.
        expect({ asked, bound, walked: / ROWS EXAMINED /.test(pages[0]?.sql ?? '') }).toEqual({ asked, bound, walked: true });
        ways.add(pages.length === 1 ? 'walked' : 'stopped');
      }
      // Descending their tickets come first: the small bounds stop the walk, the larger ones let it end.
      expect({ dir, ways: [...ways].sort() }).toEqual({ dir, ways: dir === 'asc' ? ['stopped'] : ['stopped', 'walked'] });
    }
  });

  it("a department's tickets, all after every other ticket in subject order", async () => {
    const department = await f.department();
    // After the organisation's subjects too (`zzzz ...`): descending, the department's come first.
    const made = await f.ticket({ department: department.id, subject: `zzzzz ${unique('Walked')}` });
    // The subject index holds the department (migration 088): its walk reads no ticket. Bounded
    // here as one that reads them is, to be stopped.
    boundedWalks.perCovered = { customers: 1, counted: 1 };
    await many(made);
    await expectWalks({ department: department.id }, 'subject', 'department_id = ?', [department.id], 'tickets_list_department_id');
  });

  it("an organisation's walk tests it on the order index's entries, and goes past more tickets than it has", async () => {
    const org = await Organisation.create({ name: unique('CoveredOrg'), brand_id: ctx.brandId });
    const member = await f.user({ organisation_id: org.id });
    const made = await f.ticket({ user: member.id });
    // After the first test's numbers (`zzzz-...`) too.
    const number = `zzzzzz-${made.id}`;
    await sequelize().query('UPDATE tickets SET number = ? WHERE id = ?', { replacements: [number, made.id] });
    // A quarter as many tickets of theirs as the walk passes: more than a walk that reads its
    // entries' tickets may pass (one entry per match sorted), within perCovered.customers (8) per match.
    const { mine, walked } = await coveredFamily(made, 'number', number, 4, 'organisation_id = ?', org.id);
    expect(walked).toBeGreaterThan(mine);
    expect(walked + LIMIT).toBeLessThan(boundedWalks.perCovered.customers * mine);

    // One page statement: the walk, bounded, not stopped (no second read through the organisation's index).
    const { pages, read } = await firstPage({ organisation: org.id }, 'number', 'organisation_id = ?', org.id, mine);
    expect(read).toEqual([{ index: 'tickets_list_number', bounded: true }]);
    // Index only: the walk reads the number index's entries (it holds the organisation, migration 087), no ticket's row.
    expect(await ticketAccess(pages[0])).toEqual([{ key: 'tickets_list_number', indexOnly: true }]);
  });

  it("a department's walk of the subject index tests it on the entries (migration 088): it goes past more tickets than it has", async () => {
    const department = await f.department();
    const subject = `zzzzzzz ${unique('CoveredDepartment')}`;
    const made = await f.ticket({ department: department.id, subject });
    // A third as many tickets of theirs as the walk passes: more than a walk that reads its
    // entries' tickets may pass (one entry per match sorted), within perCovered.counted (4) per match.
    const { mine, walked } = await coveredFamily(made, 'subject', subject, 3, 'department_id = ?', department.id);
    expect(walked).toBeGreaterThan(mine);
    expect(walked + LIMIT).toBeLessThan(boundedWalks.perCovered.counted * mine);

    const read = () => firstPage({ department: department.id }, 'subject', 'department_id = ?', department.id, mine);
    // One page statement: the walk, bounded, not stopped (no second read through the department's index).
    const { pages, read: walk } = await read();
    expect(walk).toEqual([{ index: 'tickets_list_subject', bounded: true }]);
    // Index only: the walk reads the subject index's entries, no ticket's row.
    expect(await ticketAccess(pages[0])).toEqual([{ key: 'tickets_list_subject', indexOnly: true }]);
    // Bounded as a walk that reads rows, it is stopped: the page through the department's index.
    boundedWalks.perCovered = { ...boundedWalks.perCovered, counted: 1 };
    stoppedFor.ms = 0;
    expect((await read()).read).toEqual([{ index: 'tickets_list_subject', bounded: true }, { index: 'tickets_list_department_id', bounded: false }]);
  });

  it("a department's walk of a wide order's index tests it on the entries: it is taken, and goes, past more tickets than it has", async () => {
    const department = await f.department();
    const made = await f.ticket({ department: department.id });
    const before = await listedTotal();
    if (before < FILLED) await copies(await f.ticket({ subject: `Walk filler ${unique('f')}` }), FILLED - before);
    // Listed tickets before theirs in id order (theirs are the newest): each a walk ascending passes.
    const passed = async () => Number((await query<{ n: number }>(
      'SELECT COUNT(*) AS n FROM tickets WHERE deleted_at IS NULL AND merged_into_id IS NULL AND id < ?', [made.id]))[0].n);
    // A third as many tickets of theirs as the walk passes: within perCovered.counted (4) per match.
    await copies(made, Math.ceil((await passed()) / 3) - 1);
    const mine = Number((await query<{ n: number }>('SELECT COUNT(*) AS n FROM tickets WHERE department_id = ? AND deleted_at IS NULL', [department.id]))[0].n);
    const total = await listedTotal();
    const walked = await passed();
    expect(walked).toBeGreaterThan(mine);
    expect(walked + LIMIT).toBeLessThan(boundedWalks.perCovered.counted * mine);

    /** The department's page at `start` in id order `dir`: the oracle's, and read in one page statement of `index`, bounded. */
    const expectPage = async (dir: 'asc' | 'desc', start: number, index: string) => {
      const want = (await query<{ id: number }>(
        `SELECT id FROM tickets WHERE department_id = ? AND deleted_at IS NULL AND merged_into_id IS NULL ORDER BY id ${dir} LIMIT ?, ?`, [department.id, start - 1, LIMIT],
      )).map((r) => Number(r.id));
      const asked = { department: department.id, order_direction: dir, start, limit: LIMIT };
      const { statements, result } = await capture(() => api.get(BASE, asked));
      expect({ asked, ids: ids(expectList(result)), count: result.body.count }).toEqual({ asked, ids: want, count: mine });
      const pages = pageStatements(statements);
      expect({ asked, pages: pages.map((st) => ({ index: /FORCE INDEX \((\w+)\)/.exec(st.sql)?.[1], bounded: / ROWS EXAMINED /.test(st.sql) })) })
        .toEqual({ asked, pages: [{ index, bounded: index === 'tickets_list_id' }] });
      return pages[0];
    };
    // Ascending the walk passes every other ticket first: more than a walk that reads its
    // entries' tickets may (one entry per match sorted), within perCovered.counted per match. Not stopped.
    const page = await expectPage('asc', 1, 'tickets_list_id');
    // Index only: the walk reads the id index's entries, no ticket's row.
    expect(await ticketAccess(page)).toEqual([{ key: 'tickets_list_id', indexOnly: true }]);
    // Descending a third of theirs in, the walk is expected to read reach × total / count entries:
    // more than their tickets (a walk that reads rows is not taken: through the department's own
    // index), within perCovered.counted per match (taken).
    const start = Math.ceil(mine / 3);
    const expected = ((start - 1 + LIMIT) * total) / mine;
    expect(expected).toBeGreaterThan(mine);
    expect(expected).toBeLessThan(boundedWalks.perCovered.counted * mine);
    await expectPage('desc', start, 'tickets_list_id');
    boundedWalks.perCovered = { ...boundedWalks.perCovered, counted: 1 };
    await expectPage('desc', start, 'tickets_list_department_id');
  });
});
