/**
 * Record factories shared by the ticket, message, forward and attachment tests (not a test file
 * itself). Every record gets a unique name or address; tests narrow lists to their own records
 * (the files of one jest worker share a database).
 */
import {
  Brand, Department, DepartmentBrand, DepartmentEmail, Setting, TicketPriority, TicketStatus, User,
} from '../../src/db/models';
import { QueryTypes } from 'sequelize';
import { sequelize } from '../../src/db/sequelize';
import { COUNT_SLOTS, type TicketCounts } from '../../migrations/018_ticket_list_indexes';
import { COUNTED } from '../../migrations/025_ticket_list_assigned';
import { ticketColumn, type LinkList } from '../../migrations/030_ticket_assignee_list';
import { LIST_STATE } from '../../migrations/084_link_list_trash';
import { LINK_LIST_COPIED_ORGANISATION as LINK_LIST_COPIED } from '../../migrations/094_link_list_organisations';
import type { EventName } from '../../src/events';
import { subscribe } from '../../src/events';
import { capture } from '../../bench/capture';
import { type TestApi, newEmail, unique } from '../helpers/app';
import { expectList, expectSuccess } from '../helpers/envelope';

export const TICKET_KEYS = [
  'id', 'number', 'department_id', 'department_email_id', 'brand_id', 'channel_id', 'user_id', 'status_id', 'priority_id', 'sla_plan_id',
  'subject', 'due_time', 'resolved_time', 'cc', 'locked', 'merged', 'internal', 'created_at', 'updated_at', 'deleted_at', 'frontend_url',
  'operator_url', 'token', 'department', 'channel', 'user', 'status', 'priority', 'slaplan', 'reply_due_time', 'resolve_due_time',
  'reopened_time', 'last_reply_time', 'merged_into_id', 'tags', 'assigned', 'watching', 'customfields', 'linked',
];
export const MESSAGE_KEYS = [
  'id', 'ticket_id', 'channel_id', 'user_id', 'user_ip_address', 'by', 'type', 'text', 'is_draft', 'social_id', 'created_at', 'updated_at',
  'pinned', 'original_ticket_id', 'cc', 'user', 'attachments',
];
export const USER_SUMMARY_KEYS = [
  'id', 'firstname', 'lastname', 'email', 'email_verified', 'organisation_id', 'organisation_access_level', 'country', 'language_code',
  'timezone', 'avatar', 'twofa_enabled', 'twofa_secret', 'twofa_token', 'twitter_id', 'twitter_handle', 'facebook_id', 'created_at',
  'updated_at', 'formatted_name',
];

export const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64');
export const ids = (data: Array<{ id: number }>) => data.map((d) => d.id);

/** The rows of a statement (`?` replacements in order). */
export const query = <T extends object>(sql: string, replacements?: unknown[]): Promise<T[]> => sequelize().query<T>(sql, { replacements, type: QueryTypes.SELECT });

/**
 * A link list's rows (migrations 030, 031, 082, 083 and 084) against its links and their tickets, row
 * by row: a row per link with its ticket's state (084's) and every copied column.
 */
export async function expectLinkListed({ list, links, key }: LinkList): Promise<void> {
  const listed = await query<Record<string, unknown>>(`SELECT ${key}, ticket_id, listed, ${LINK_LIST_COPIED.join(', ')} FROM ${list} ORDER BY 1, 2`);
  const fromLinks = await query<Record<string, unknown>>(
    `SELECT a.${key}, t.id AS ticket_id, ${LIST_STATE('t')} AS listed,
       ${LINK_LIST_COPIED.map((c) => `t.${ticketColumn(c)} AS ${c}`).join(', ')} FROM ${links} a JOIN tickets t ON t.id = a.ticket_id ORDER BY 1, 2`,
  );
  expect(listed).toEqual(fromLinks);
}

/**
 * Gives tickets values of the list's string, customer, channel, department and resolution orders
 * out of their id order, with ties and NULLs (by hand: the link lists' copies follow by trigger).
 */
export async function scrambleOrders(ticketIds: number[], customers: number[], departments: number[]): Promise<void> {
  const channels = (await query<{ id: number }>('SELECT id FROM channels ORDER BY id LIMIT 2')).map((r) => r.id);
  for (const [i, id] of ticketIds.entries()) {
    await sequelize().query('UPDATE tickets SET subject = ?, number = CONCAT(?, id), resolved_time = ?, user_id = ?, channel_id = ?, department_id = ? WHERE id = ?', {
      replacements: [
        `Order ${(i * 3) % 4}`, `N${(i * 5) % 7}-`, i % 3 === 1 ? null : 1_700_300_000 + ((i * 5) % 7) * 60,
        customers[(i * 3) % customers.length], channels[i % channels.length], departments[(i * 7) % departments.length], id,
      ],
    });
  }
}

/**
 * Keyset pages (`after_id`, two tickets) of the list `query` of `base`, whose tickets in `order`
 * (SQL over `tickets t`) are `want`: after its first ticket, its middle one and a ticket outside
 * it (the newest), the tickets of `want` past that ticket in `order`. `read` tells whether a
 * page's statements read it the expected way (a link list's range, say), given the anchor.
 */
export async function expectAfterPages(
  api: TestApi, base: string, q: Record<string, unknown>, want: number[], order: string, read: (sql: string[]) => boolean,
): Promise<void> {
  const [outside] = await query<{ id: number }>('SELECT id FROM tickets WHERE id NOT IN (?) ORDER BY id DESC LIMIT 1', [want.length ? want : [0]]);
  const anchors = [...new Set([want[0], want[Math.floor(want.length / 2)]].filter((id) => id !== undefined)), Number(outside.id)];
  for (const anchor of anchors) {
    const inOrder = (await query<{ id: number }>(`SELECT t.id FROM tickets t WHERE t.id IN (?) ORDER BY ${order}`, [[...want, anchor]])).map((r) => Number(r.id));
    const after = inOrder.slice(inOrder.indexOf(anchor) + 1).filter((id) => id !== anchor);
    const { statements, result } = await capture(() => api.get(base, { ...q, after_id: anchor, limit: 2 }));
    expect({ q, anchor, ids: ids(expectList(result)), count: result.body.count, read: read(statements.map((st) => st.sql)) })
      .toEqual({ q, anchor, ids: after.slice(0, 2), count: want.length, read: true });
  }
}

/** Rows as lists of numbers (null kept): counters and the rows they count, compared. */
export const numericRows = (list: Array<Record<string, number | null>>) => list.map((r) => Object.values(r).map((v) => (v === null ? null : Number(v))));

/**
 * Counters of tickets per key and the list counters' columns (migration 091's per organisation,
 * 092's per customer) against the tickets themselves, row by row, none negative; the number of rows.
 */
export async function expectKeyedCounts({ table, key }: TicketCounts): Promise<number> {
  const columns = [key!, 'state', ...COUNTED, 'slot'];
  const counted = await query<Record<string, number>>(`SELECT ${columns.join(', ')}, n FROM ${table} WHERE n <> 0 ORDER BY ${columns.join(', ')}`);
  const fromTickets = await query<Record<string, number>>(`SELECT ${key}, IF(deleted_at IS NULL, 0, 1) AS state, ${COUNTED.join(', ')},
      id MOD ${COUNT_SLOTS} AS slot, COUNT(*) AS n
    FROM tickets WHERE merged_into_id IS NULL AND ${key} IS NOT NULL
    GROUP BY ${columns.join(', ')} ORDER BY ${columns.join(', ')}`);
  expect(numericRows(counted)).toEqual(numericRows(fromTickets));
  expect(await query(`SELECT * FROM ${table} WHERE n < 0`)).toEqual([]);
  return fromTickets.length;
}

export interface TicketContext {
  brandId: number;
  departmentId: number;
  openStatus: number;
  resolvedStatus: number;
  otherStatus: number;
  priorityId: number;
  /** Every ticket status, in id order. */
  statuses: number[];
}

/** The installed brand, department, statuses and priority, and every status. */
export async function ticketContext(): Promise<TicketContext> {
  const brand = (await Brand.findOne({ order: [['id', 'ASC']] }))!;
  const dept = (await Department.findOne({ where: { name: 'General Enquiries' } }))!;
  const setting = async (name: string) => Number((await Setting.findOne({ where: { scope: 'ticket', name } }))!.value);
  const openStatus = await setting('default_open_status');
  const resolvedStatus = await setting('default_resolved_status');
  const other = (await TicketStatus.findOne({ where: { name: 'In Progress' } }))!;
  const priority = (await TicketPriority.findOne({ where: { name: 'Low' } }))!;
  const statuses = (await TicketStatus.findAll({ order: [['id', 'ASC']] })).map((s) => s.id);
  return { brandId: brand.id, departmentId: dept.id, openStatus, resolvedStatus, otherStatus: other.id, priorityId: priority.id, statuses };
}

export function ticketFactories(api: TestApi, ctx: () => TicketContext) {
  const f = {
    async user(values: Partial<User> = {}): Promise<User> {
      return User.create({ type: 'user', brand_id: ctx().brandId, email: newEmail('tu'), firstname: 'Uma', lastname: 'User', ...values });
    },
    async operator(values: Partial<User> = {}): Promise<User> {
      return User.create({ type: 'operator', email: newEmail('top'), firstname: 'Otto', lastname: 'Operator', ...values });
    },
    /** A department of the brand (with an address of the brand). */
    async department(values: Partial<Department> = {}, brandId = ctx().brandId): Promise<Department> {
      const d = await Department.create({ name: unique('Dept'), ...values });
      await DepartmentBrand.create({ department_id: d.id, brand_id: brandId });
      await DepartmentEmail.create({ department_id: d.id, brand_id: brandId, address: newEmail('dept') });
      return d;
    },
    body(extra: Record<string, unknown> = {}): Record<string, unknown> {
      const c = ctx();
      return {
        department: c.departmentId, status: c.openStatus, priority: c.priorityId, subject: `Subject ${unique('s')}`,
        text: 'Hello, something is broken.', send_user_email: 0, send_operators_email: 0, ...extra,
      };
    },
    /** A ticket by a new user (unless `user` or `user_email` is given), through the API. */
    async ticket(extra: Record<string, unknown> = {}): Promise<any> {
      const body = f.body(extra);
      if (body.user === undefined && body.user_email === undefined) body.user = (await f.user()).id;
      return expectSuccess(await api.post('/api/ticket/ticket', body), 'Successfully created new ticket!');
    },
    async message(ticket: { id: number; user_id: number }, extra: Record<string, unknown> = {}): Promise<any> {
      return expectSuccess(await api.post('/api/ticket/message', {
        ticket_id: ticket.id, user_id: ticket.user_id, text: `Reply ${unique('m')}`, ...extra,
      }), 'Successfully created new message!');
    },
  };
  return f;
}

/**
 * Records the events the ticket services emit (a subscriber added for the file's tests, as the
 * composition root adds the real ones): each with its payload and whether it came inside a transaction.
 */
export function captureEvents(): Array<{ name: EventName; payload: any; inTransaction: boolean }> {
  const seen: Array<{ name: EventName; payload: any; inTransaction: boolean }> = [];
  const names: EventName[] = ['ticket.created', 'ticket.updated', 'ticket.merged', 'ticket.trashed', 'ticket.restored', 'message.created', 'message.forwarded', 'message.updated', 'message.deleted', 'ticket.deleted'];
  const unsubscribe: Array<() => void> = [];
  beforeAll(() => {
    for (const name of names) {
      unsubscribe.push(subscribe(name, async (payload: any, transaction: any) => { seen.push({ name, payload, inTransaction: !!transaction?.id }); }));
    }
  });
  afterAll(() => {
    for (const off of unsubscribe) off();
  });
  return seen;
}
