/**
 * Organisations' and customers' tickets beside counted filters (`organisation`, `user` or
 * `user_email` and a priority, a department, a status and a priority, the unassigned, the flags;
 * listed or `trashed=1`): `count` sums migration 091's counters per organisation and 092's per
 * customer, exact through creates, status, priority, department and assignment changes, a change
 * of customer, a customer joining, moving and leaving an organisation, the trash and back, a
 * merge, a delete for good and an organisation's delete (through the API and by a cascade); never
 * a COUNT of their tickets. The page past the middle is read from the far end.
 */
import { capture } from '../../bench/capture';
import { ORGANISATION_COUNTS } from '../../migrations/091_ticket_organisation_counts';
import { USER_COUNTS } from '../../migrations/092_ticket_user_counts_by_filter';
import { Organisation, Ticket, TicketPriority } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { departmentsBelow } from '../../src/ticket/tickets/departmentsBelow';
import { unique, useApi } from '../helpers/app';
import { expectList, expectSuccess } from '../helpers/envelope';
import { expectKeyedCounts, ids, query, ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
const BASE = '/api/ticket/ticket';
let ctx: TicketContext;
const f = ticketFactories(api, () => ctx);
let otherPriority: number;

beforeAll(async () => {
  ctx = await ticketContext();
  otherPriority = (await TicketPriority.create({ name: unique('Org count priority'), order: 1001 })).id;
});

const organisation = async () => (await Organisation.create({ name: unique('CountedOrg'), brand_id: ctx.brandId })).id;

/** The filters checked beside the organisations and customers: as the list's parameters, and as a condition on tickets `t` (`tree`: the department's). */
const besides = (tree: number[]): Array<[Record<string, unknown>, string, unknown[]]> => [
  [{ priority: ctx.priorityId }, 't.priority_id = ?', [ctx.priorityId]],
  [{ priority: otherPriority }, 't.priority_id = ?', [otherPriority]],
  [{ department: ctx.departmentId }, 't.department_id IN (?)', [tree]],
  [{ status: ctx.statuses[0], priority: ctx.priorityId }, 't.status_id = ? AND t.priority_id = ?', [ctx.statuses[0], ctx.priorityId]],
  [{ assigned: -1 }, 't.assigned = 0', []],
  [{ internal: 0, priority: otherPriority }, 't.internal = 0 AND t.priority_id = ?', [otherPriority]],
];

/** The list's parameter, the tickets' condition on its values, and the counters that hold its count. */
const KEYS = {
  organisation: { where: 't.user_id IN (SELECT id FROM users WHERE organisation_id IN (?))', counters: 'ticket_organisation_counts' },
  user: { where: 't.user_id IN (?)', counters: 'ticket_user_counts' },
  user_email: { where: 't.user_id IN (SELECT user_id FROM person_emails WHERE email = ?)', counters: 'ticket_user_counts' },
} as const;

/** The tickets of `values` of `by` the plain way (an organisation: its customers' now), listed or trashed, not merged, in id order. */
const actual = async (by: keyof typeof KEYS, values: unknown, trashed: boolean, condition: string, others: unknown[]) => (await query<{ id: number }>(
  `SELECT t.id FROM tickets t WHERE ${KEYS[by].where} AND t.merged_into_id IS NULL
     AND t.deleted_at IS ${trashed ? 'NOT ' : ''}NULL AND ${condition} ORDER BY t.id`,
  [values, ...others],
)).map((r) => Number(r.id));

/**
 * Each of `values` of `by` alone and (but addresses) all of them together, beside each filter,
 * listed and trashed: the count and pages exact, counted by their counters.
 */
async function check(by: keyof typeof KEYS, values: Array<number | string>) {
  const tree = await departmentsBelow([ctx.departmentId]);
  for (const of of [...values.map((v) => [v]), ...(by === 'user_email' ? [] : [values])]) {
    for (const [filter, condition, others] of besides(tree)) {
      for (const trashed of [false, true]) {
        const q = { [by]: of.join(','), limit: 100, ...filter, ...(trashed ? { trashed: 1 } : {}) };
        const want = await actual(by, by === 'user_email' ? of[0] : of, trashed, condition, others);
        const { statements, result } = await capture(() => api.get(BASE, q));
        expect({ q, count: result.body.count, ids: ids(expectList(result)) }).toEqual({ q, count: want.length, ids: want });
        // The count from their counters: no COUNT of their tickets.
        expect({
          q, counters: statements.filter((s) => new RegExp(`FROM ${KEYS[by].counters}`).test(s.sql)).length,
          counts: statements.filter((s) => /COUNT\(/.test(s.sql)).length,
        }).toEqual({ q, counters: 1, counts: 0 });
        // Past the middle (from the far end) and the last page.
        for (const start of [Math.floor(want.length / 2) + 1, want.length].filter((x) => x >= 1)) {
          const deep = await api.get(BASE, { ...q, start, limit: 2 });
          expect({ q, start, count: deep.body.count, ids: ids(expectList(deep)) }).toEqual({ q, start, count: want.length, ids: want.slice(start - 1, start + 1) });
        }
      }
    }
  }
}

const expectFilled = () => expectKeyedCounts(ORGANISATION_COUNTS);

describe("organisations' and customers' tickets beside counted filters, counted by migrations 091 and 092", () => {
  it('are counted exactly through every write of a ticket, a customer and an organisation', async () => {
    const [a, b] = [await organisation(), await organisation()];
    const [u1, u2, u3, loner] = [await f.user({ organisation_id: a }), await f.user({ organisation_id: a }), await f.user({ organisation_id: b }), await f.user()];
    const people = [u1, u2, u3, loner];
    /** The customers by id and by address, and their counters against the tickets. */
    const checkPeople = async () => {
      await check('user', people.map((u) => u.id));
      await check('user_email', people.map((u) => u.email));
      await expectKeyedCounts(USER_COUNTS);
    };
    const department = await f.department();
    const made: Array<{ id: number }> = [];
    for (let i = 0; i < 12; i++) {
      made.push(await f.ticket({
        user: people[i % 4].id, status: ctx.statuses[i % 2], priority: i % 3 ? ctx.priorityId : otherPriority,
        department: i % 5 ? ctx.departmentId : department.id,
      }));
    }
    await check('organisation', [a, b]);
    await checkPeople();
    expect(await expectFilled()).toBeGreaterThan(0);

    // Through the API: a status, a priority, a department, an assignment, a customer changed; two to the trash.
    const operator = await f.operator();
    expectSuccess(await api.put(`${BASE}/${made[0].id}`, { status: ctx.statuses[1], priority: otherPriority }), 'Successfully updated the ticket!');
    expectSuccess(await api.put(`${BASE}/${made[1].id}`, { department: department.id }), 'Successfully updated the ticket!');
    expectSuccess(await api.put(`${BASE}/${made[2].id}`, { assignedto: [operator.id] }), 'Successfully updated the ticket!');
    expectSuccess(await api.put(`${BASE}/${made[3].id}`, { user: u1.id }), 'Successfully updated the ticket!');
    expect((await api.del(`${BASE}/${made[4].id}`)).status).toBe(200);
    expect((await api.del(`${BASE}/${made[5].id}`)).status).toBe(200);
    await check('organisation', [a, b]);
    await checkPeople();
    await expectFilled();

    // Customers joining, moving and leaving (through the API); a ticket back from the trash, a
    // merge and a delete for good (by hand).
    expectSuccess(await api.put(`/api/user/user/${loner.id}`, { organisation_id: b }), 'Successfully updated the user!');
    expectSuccess(await api.put(`/api/user/user/${u2.id}`, { organisation_id: b }), 'Successfully updated the user!');
    expectSuccess(await api.put(`/api/user/user/${u3.id}`, { organisation_id: 0 }), 'Successfully updated the user!');
    await Ticket.update({ deleted_at: null }, { where: { id: made[4].id } });
    expectSuccess(await api.post(`${BASE}/${made[8].id}/merge`, { ids: [made[0].id] }), 'Successfully updated the ticket!');
    await sequelize().query('DELETE FROM tickets WHERE id = ?', { replacements: [made[7].id] });
    await check('organisation', [a, b]);
    await checkPeople();
    await expectFilled();

    // The organisation's delete through the API (its members leave it first), and one by a
    // cascade no trigger of tickets sees: their counters go with them.
    expect((await api.del(`/api/user/organisation/${b}`)).status).toBe(200);
    await sequelize().query('DELETE FROM organisations WHERE id = ?', { replacements: [a] });
    expect(await query(`SELECT * FROM ${ORGANISATION_COUNTS.table} WHERE organisation_id IN (?)`, [[a, b]])).toEqual([]);
    await check('organisation', [a, b]);
    await expectFilled();
  });

  it('leaves the counters alone for customers of no organisation, and a filter they do not hold to a COUNT', async () => {
    const org = await organisation();
    const [member, loner] = [await f.user({ organisation_id: org }), await f.user()];
    const before = await query<{ n: number }>(`SELECT COALESCE(SUM(n), 0) AS n FROM ${ORGANISATION_COUNTS.table}`);
    await f.ticket({ user: loner.id });
    expect(await query<{ n: number }>(`SELECT COALESCE(SUM(n), 0) AS n FROM ${ORGANISATION_COUNTS.table}`)).toEqual(before);
    const operator = await f.operator();
    const theirs = [await f.ticket({ user: member.id, assignedto: [operator.id] }), await f.ticket({ user: member.id })];
    // An operator and a flag beside the organisation: neither the counters nor the operator's list
    // (migration 094: a priority would be read there) hold the flag, a COUNT of the organisation's entries.
    const q = { organisation: org, assigned: operator.id, internal: 0 };
    const { statements, result } = await capture(() => api.get(BASE, q));
    expect({ count: result.body.count, ids: ids(expectList(result)) }).toEqual({ count: 1, ids: [theirs[0].id] });
    expect(statements.some((s) => /FROM ticket_organisation_counts/.test(s.sql))).toBe(false);
    expect(statements.filter((s) => /^SELECT COUNT\(\*\) AS n FROM `tickets`/.test(s.sql))).toHaveLength(1);
    await expectFilled();
  });
});
