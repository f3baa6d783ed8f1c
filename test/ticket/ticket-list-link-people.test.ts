/**
 * One operator's or one tag's tickets of some customers or organisations (`assigned` or `tag`
 * beside `user`, `user_email` or `organisation`, with a status, a priority or a department or not, listed or
 * `trashed=1`): a range of the
 * link list's index of the customer (migration 083) or the organisation (094), in every order the
 * list holds, after an id too; the count reads that range alone (never the customers' or the
 * organisation's tickets, nor a look-up per ticket). Exact through a customer's change of
 * organisation, a ticket's change of customer, the trash and a merge; the lists' copies of the
 * organisation equal the tickets', and migration 094 goes down and up.
 */
import { capture, explainOf, type Statement } from '../../bench/capture';
import * as m030 from '../../migrations/030_ticket_assignee_list';
import * as m082 from '../../migrations/082_ticket_tag_list';
import * as m083 from '../../migrations/083_link_list_orders';
import * as m094 from '../../migrations/094_link_list_organisations';
import { QueryTypes } from 'sequelize';
import { Organisation, TicketPriority, User } from '../../src/db/models';
import { departmentsBelow } from '../../src/ticket/tickets/departmentsBelow';
import { sequelize } from '../../src/db/sequelize';
import { unique, useApi } from '../helpers/app';
import { expectList, expectSuccess } from '../helpers/envelope';
import { expectAfterPages, expectLinkListed, ids, query, scrambleOrders, ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
const BASE = '/api/ticket/ticket';
let ctx: TicketContext;
const f = ticketFactories(api, () => ctx);

beforeAll(async () => { ctx = await ticketContext(); });

const organisation = async () => (await Organisation.create({ name: unique('LinkOrg'), brand_id: ctx.brandId })).id;

/** Every order the link lists hold, the directions taking turns (as SQL over tickets `t`). */
const ORDERS: Array<[string, string, string]> = m083.LINK_ORDER_COLUMNS.map((c, i) => {
  const d = i % 2 ? 'DESC' : 'ASC';
  return [c, d.toLowerCase(), c === 'id' ? `t.id ${d}` : `t.${c} ${d}, t.id ${d}`];
});

/** The link of a list's parameter: its links' table and key. */
const LINKS = { assigned: ['ticket_assignees', 'user_id'], tag: ['ticket_tag_links', 'tag_id'] } as const;

/** The people a list names: customers, an address, organisations. */
type By = 'user' | 'user_email' | 'organisation';

/** Filters beside: as the list's parameters, and as a condition on tickets `t` with its values. */
type Beside = [Record<string, unknown>, string, unknown[]];

/** The tickets the plain way: linked to `key`, of the customers or (their customers' now) organisations, listed or trashed, not merged. */
async function actual(link: keyof typeof LINKS, key: number, by: By, of: Array<number | string>, [, condition, values]: Beside, trashed: boolean, order: string) {
  const [links, column] = LINKS[link];
  const people = { user: 't.user_id IN (?)', user_email: 't.user_id IN (SELECT user_id FROM person_emails WHERE email IN (?))', organisation: 't.user_id IN (SELECT id FROM users WHERE organisation_id IN (?))' }[by];
  return (await query<{ id: number }>(
    `SELECT t.id FROM tickets t WHERE t.id IN (SELECT ticket_id FROM ${links} WHERE ${column} = ?) AND ${people}
       AND t.merged_into_id IS NULL AND t.deleted_at IS ${trashed ? 'NOT ' : ''}NULL AND ${condition} ORDER BY ${order}`,
    // (An address as person_emails keeps it: lower-cased.)
    [key, of.map((v) => (typeof v === 'string' ? v.toLowerCase() : v)), ...values],
  )).map((r) => Number(r.id));
}

/** The list's statements that read tickets or a link list (its own: the count and the page). */
const own = (statements: Statement[]) => statements.filter((s) => /FROM `tickets`|FROM ticket_(assignee|tag)_list|COUNT\(/.test(s.sql));

/**
 * Each link key beside each set of customers, addresses and organisations, alone, with a status,
 * a priority, or a department's tree and a status (the lists' copies), listed and trashed, in
 * every order (every fifth beside a filter other than the status or by address, every fourth in
 * the trash): the count and the pages exact, from the list's index of the people in two
 * statements (its COUNT a range of that index), pages past the middle and after an id too.
 */
async function check(keys: Array<[keyof typeof LINKS, number]>, people: Array<[By, Array<number | string>]>, besides: Beside[]) {
  for (const [link, key] of keys) {
    for (const [by, of] of people) {
      const index = `${link === 'assigned' ? m030.ASSIGNEE_LIST.list : m082.TAG_LIST.list}_${by === 'organisation' ? 'organisation_id' : 'customer_id'}`;
      for (const beside of besides) {
        const [filter] = beside;
        const status = filter.status;
        // Every fifth order beside a filter other than the status, and for an address (customers' otherwise).
        const some = Object.keys(filter).some((k) => k !== 'status') || by === 'user_email';
        for (const trashed of [false, true]) {
          for (const [order_column, order_direction, order] of ORDERS.filter((_, i) => (!trashed || i % 4 === 0) && (!some || i % 5 === 0))) {
            const q = { [link]: key, [by]: of.join(','), limit: 100, order_column, order_direction, ...filter, ...(trashed ? { trashed: 1 } : {}) };
            const want = await actual(link, key, by, of, beside, trashed, order);
            const { statements, result } = await capture(() => api.get(BASE, q));
            expect({ q, count: result.body.count, ids: ids(expectList(result)) }).toEqual({ q, count: want.length, ids: want });
            const mine = own(statements);
            const counts = mine.filter((s) => /COUNT\(/.test(s.sql));
            expect({ q, own: mine.length, counts: counts.map((s) => s.sql.includes(`FORCE INDEX (${index})`)), page: mine.some((s) => s.sql.includes(`a FORCE INDEX (${index})`)) })
              .toEqual({ q, own: 2, counts: [true], page: true });
            for (const start of [Math.floor(want.length / 2) + 1, want.length].filter((x) => x >= 1)) {
              const deep = await api.get(BASE, { ...q, start, limit: 2 });
              expect({ q, start, count: deep.body.count, ids: ids(expectList(deep)) }).toEqual({ q, start, count: want.length, ids: want.slice(start - 1, start + 1) });
            }
            if (!trashed && !status && !some && order_column === 'subject') {
              await expectAfterPages(api, BASE, q, want, order, (sql) => sql.some((s) => s.includes(`a FORCE INDEX (${index})`)));
            }
          }
        }
      }
    }
  }
}

/** The count's and the page's plans: ranges of the people's index of the list (`ref` for one value: a range too; no full scan, no COUNT of tickets). */
async function expectPlans(q: Record<string, unknown>, index: string) {
  const { statements } = await capture(() => api.get(BASE, q));
  for (const s of own(statements)) {
    const plan = await sequelize().query<Record<string, unknown>>(explainOf(s.sql), { replacements: s.params as Record<string, unknown>, type: QueryTypes.SELECT });
    const reads = plan.filter((r) => r.table === 'a' || /ticket_(assignee|tag)_list/.test(String(r.table)) || r.table === 'Ticket');
    expect({ q, reads: reads.map((r) => `${r.key} ${r.type === 'ref' ? 'range' : r.type}`) }).toEqual({ q, reads: [`${index} range`] });
  }
}

describe("one operator's or one tag's tickets of customers or organisations (migrations 083 and 094)", () => {
  it('are counted and paged from the link lists\' index of the people, in every order, through moves, the trash and a merge', async () => {
    const [orgA, orgB] = [await organisation(), await organisation()];
    const [a1, a2, b1, loner] = [
      await f.user({ organisation_id: orgA }), await f.user({ organisation_id: orgA }), await f.user({ organisation_id: orgB }), await f.user(),
    ];
    const operator = await f.operator();
    const tag = expectSuccess(await api.post('/api/ticket/tag', { name: unique('Link people') }), 'Successfully created new tag!').id;
    const otherPriority = (await TicketPriority.create({ name: unique('Link people priority'), order: 1002 })).id;
    const customers = [a1, a2, b1, loner];
    const made = [];
    for (let i = 0; i < 12; i++) {
      made.push(await f.ticket({
        user: customers[i % 4].id, status: ctx.statuses[i % 3 === 0 ? 1 : 0],
        ...(i % 3 !== 2 ? { assignedto: [operator.id] } : {}), ...(i % 2 === 0 ? { tag: [tag] } : {}),
      }));
    }
    // Other orders than the ids' (subject, number, resolution, channel, department, customer).
    for (const [i, t] of made.entries()) {
      await sequelize().query('UPDATE tickets SET updated_at = ?, due_time = ?, last_reply_time = ?, priority_id = ? WHERE id = ?', {
        replacements: [
          1_700_000_000 + ((i * 5) % 12) * 60, i % 3 ? 1_700_100_000 + ((i * 7) % 12) * 60 : null, i % 4 ? 1_700_200_000 + ((i * 5) % 12) * 60 : null,
          i % 5 ? ctx.priorityId : otherPriority, t.id,
        ],
      });
    }
    await scrambleOrders(made.map((t) => t.id), customers.map((c) => c.id), [ctx.departmentId, (await f.department()).id]);
    const keys: Array<[keyof typeof LINKS, number]> = [['assigned', operator.id], ['tag', tag]];
    const people: Array<[By, Array<number | string>]> = [
      ['user', [a1.id]], ['user', [a2.id, loner.id]], ['user_email', [a2.email.toUpperCase()]], ['organisation', [orgA]], ['organisation', [orgA, orgB]],
    ];
    const expectCopies = async () => { await expectLinkListed(m030.ASSIGNEE_LIST); await expectLinkListed(m082.TAG_LIST); };
    await expectCopies();
    const tree = await departmentsBelow([ctx.departmentId]);
    const besides: Beside[] = [
      [{}, 'TRUE', []], [{ status: ctx.statuses[1] }, 't.status_id = ?', [ctx.statuses[1]]], [{ priority: otherPriority }, 't.priority_id = ?', [otherPriority]],
      [{ department: ctx.departmentId, status: ctx.statuses[0] }, 't.department_id IN (?) AND t.status_id = ?', [tree, ctx.statuses[0]]],
    ];
    await check(keys, people, besides);
    await expectPlans({ tag, organisation: orgA }, `${m082.TAG_LIST.list}_organisation_id`);
    await expectPlans({ assigned: operator.id, user: a1.id, status: ctx.statuses[1] }, `${m030.ASSIGNEE_LIST.list}_customer_id`);
    // A customer moves to the other organisation, and one leaves theirs; a ticket changes customer;
    // two go to the trash, one is merged into another.
    await User.update({ organisation_id: orgB }, { where: { id: a2.id } });
    await User.update({ organisation_id: null }, { where: { id: b1.id } });
    expectSuccess(await api.put(`${BASE}/${made[4].id}`, { user: loner.id }), 'Successfully updated the ticket!');
    for (const t of [made[0], made[5]]) expect((await api.del(`${BASE}/${t.id}`)).status).toBe(200);
    expectSuccess(await api.post(`${BASE}/${made[8].id}/merge`, { ids: [made[1].id] }), 'Successfully updated the ticket!');
    await expectCopies();
    await check(keys, people, besides);
  });

  it('migration 094 goes down (the column, its index and the copies gone) and up again (filled from the tickets, then kept)', async () => {
    const qi = sequelize().getQueryInterface();
    const org = await organisation();
    const customer = await f.user({ organisation_id: org });
    const operator = await f.operator();
    const first = await f.ticket({ user: customer.id, assignedto: [operator.id] });
    await m094.down(qi);
    const column = async () => (await query("SELECT 1 FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'ticket_assignee_list' AND COLUMN_NAME = 'organisation_id'")).length;
    expect(await column()).toBe(0);
    // Made while the copies are gone: filled by the migration.
    const second = await f.ticket({ user: customer.id, assignedto: [operator.id] });
    await m094.up(qi);
    expect(await column()).toBe(1);
    await expectLinkListed(m030.ASSIGNEE_LIST);
    const listed = async () => ids(expectList(await api.get(BASE, { assigned: operator.id, organisation: org })));
    expect(await listed()).toEqual([first.id, second.id]);
    await User.update({ organisation_id: null }, { where: { id: customer.id } });
    expect(await listed()).toEqual([]);
    await expectLinkListed(m030.ASSIGNEE_LIST);
  });
});
