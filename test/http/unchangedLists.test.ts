/**
 * Related lists sent unchanged write nothing (src/db/links.ts: setRows/setLinks read the owner's
 * stored rows with a lock and skip the DELETE and INSERT when they hold the same values): for every
 * resource that replaces a list on update, a PUT carrying its lists as stored (id lists also in
 * another order, values in another spelling that normalises to the same) answers success with
 * `updated_at` as it was, runs no INSERT, UPDATE or DELETE, and emits no `*.updated` event; a
 * change of one list still writes, moves `updated_at` and emits the event. Phones, additional
 * emails and organisation domains are ordered: the same values in another order are a change.
 *
 * Every record is the file's own (its brands, groups, departments, operators): fields and
 * priorities confined to them apply to no other file's records.
 */
import { Op } from 'sequelize';
import type { Model, ModelCtor } from 'sequelize-typescript';
import {
  Article, ArticleCategory, ArticleTag, Brand, CannedResponse, CannedResponseGroup, CannedResponseTag, CustomField, CustomFieldBrand,
  CustomFieldDepartment, Department, DepartmentBrand, DepartmentGroup, DomainEvent, Group, OperatorDepartment, Organisation,
  OrganisationDomain, Permission, PriorityDepartment, Role, RoleGroup, RolePermission, SlaPlan, SlaPlanSchedule, SlaPlanTarget,
  Ticket, TicketAssignee, TicketFilter, TicketFilterCondition, TicketFilterGroup, TicketLink, TicketPriority, TicketTag,
  TicketTagLink, TicketWatcher, Translation, User, UserEmail, UserGroup, UserPhone,
} from '../../src/db/models';
import { countQueries } from '../../src/db/sequelize';
import { type TestApi, newEmail, nowSec, phoneNumbers, unique, useApi } from '../helpers/app';
import { expectSuccess } from '../helpers/envelope';
import { ticketContext, ticketFactories, type TicketContext } from '../ticket/ticketSupport';
import { factories } from '../selfservice/support';

const api = useApi();
let ctx: TicketContext;
const f = ticketFactories(api, () => ctx);
const selfservice = factories(api);
const newPhone = phoneNumbers('4');
const OLD = 1_000_000;

/** The records the cases share, all of this file's own. */
interface Fixtures {
  brands: [number, number];
  operatorGroups: [number, number];
  userGroups: [number, number];
  departments: [number, number];
  operators: [number, number];
}
const fx = {} as Fixtures;

beforeAll(async () => {
  ctx = await ticketContext();
  const brand = async () => (await Brand.create({ name: unique('Lists brand') })).id;
  const group = async (type: 'operator' | 'user') => (await Group.create({ type, name: unique(`Lists ${type}s`) })).id;
  fx.brands = [await brand(), await brand()];
  fx.operatorGroups = [await group('operator'), await group('operator')];
  fx.userGroups = [await group('user'), await group('user')];
  fx.departments = [(await f.department()).id, (await f.department()).id];
  fx.operators = [(await f.operator()).id, (await f.operator()).id];
});

/** A body sent as JSON (the others are form-encoded, bracket arrays, as the spec's clients send them). */
class Json {
  constructor(readonly body: Record<string, unknown>) {}
}
type Body = Record<string, unknown> | Json;
const put = (t: TestApi, path: string, body: Body) => (body instanceof Json ? t.putJson(path, body.body) : t.put(path, body));

/**
 * Every statement of one request, without Sequelize's `Executing (<connection>): ` and a token's use
 * (recorded once a minute). Not warmed (helpers/queries countWarm): the request made before,
 * uncounted, would be the one to write, and the counted one would find nothing left to write.
 * What a cold request loads into caches is read, never written.
 */
async function statementsOf(request: () => PromiseLike<any>) {
  const { result, queries } = await countQueries(async () => request());
  return { result, sql: queries.map((q) => q.replace(/^Executing \([^)]*\): /, '')).filter((q) => !/api_tokens/.test(q)) };
}
const WRITE = /^\s*(INSERT|UPDATE|DELETE|REPLACE)\b/i;

/** Whether the statements read `table` with a lock: what setRows does before it decides that a list is unchanged. */
const lockedRead = (sql: string[], table: string) => sql.some((q) => /^SELECT /.test(q) && q.includes(`FROM \`${table}\``) && /FOR UPDATE;?$/.test(q));

/** The events emitted since `after` (an event id) about the record, by name. */
async function eventsAbout(after: number, key: string, id: number): Promise<string[]> {
  const rows = await DomainEvent.findAll({ where: { id: { [Op.gt]: after } }, order: [['id', 'ASC']] });
  return rows.filter((e) => JSON.parse(e.payload)[key] === id).map((e) => e.name);
}
const lastEvent = async () => (await DomainEvent.max<number, DomainEvent>('id')) ?? 0;

const ids = (rows: Array<{ id: number }>) => rows.map((r) => r.id);
const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
/** The values of `column` of a link table's rows of one owner, ascending. */
async function linked(model: ModelCtor<Model>, where: Record<string, number>, column: string): Promise<number[]> {
  const rows = await model.findAll({ where, attributes: [column], raw: true }) as unknown as Array<Record<string, number>>;
  return sorted(rows.map((r) => Number(r[column])));
}

interface Step {
  body: Body;
  /** What shows the lists after the request (the response, the database). */
  check(data: any): Promise<void> | void;
}

interface Setup {
  id: number;
  /** The lists as stored: the same values (id lists also in another order, other spellings of the same values). */
  unchanged: Body[];
  /** What the record holds as created: every unchanged PUT leaves it so. */
  stored(data: any): Promise<void> | void;
  /** A real change of one list. */
  change: Step;
  /** Ordered lists: the same values in another order, which is a change, listed in the new order. */
  reordered?: Step[];
}

interface ListCase {
  name: string;
  /** The resource's path: PUT `<path>/<id>`. */
  path: string;
  /** `Successfully updated the <label>!` */
  label: string;
  model: ModelCtor<Model>;
  /** The `*.updated` event of the resource and the payload key naming the record; none for resources without one. */
  event?: { name: string; key: string };
  /** It has ordered lists (phones, additional emails, domains): the same values in another order are a change. */
  ordered?: boolean;
  /** The link tables whose rows an unchanged PUT reads (locked) and keeps. */
  lists: Array<ModelCtor<Model>>;
  /** Creates the record through the API, with non-empty lists. */
  setup(): Promise<Setup>;
}

/** Creates a custom field through the API (`path`: the kind's resource). */
async function customField(path: string, body: Record<string, unknown>): Promise<any> {
  return expectSuccess(await api.post(path, { name: unique('List field'), ...body }), 'Successfully created new custom field!');
}

const cases: ListCase[] = [
  {
    name: 'user (phone, groups, additional_email, customfield)',
    path: '/api/user/user',
    label: 'user',
    model: User,
    event: { name: 'user.updated', key: 'userId' },
    ordered: true,
    lists: [UserPhone, UserGroup, UserEmail],
    async setup() {
      const [brand] = fx.brands;
      const text = await customField('/api/user/customfield', { type: 8, brand: [brand] });
      const checklist = await customField('/api/user/customfield', { type: 2, brand: [brand], options: [{ value: 'a' }, { value: 'b' }, { value: 'c' }] });
      const [oa, , oc] = ids(checklist.options);
      const phones = [newPhone(), newPhone()];
      const emails = [newEmail('more1'), newEmail('more2')];
      const [g1, g2] = fx.userGroups;
      const customfield = { [text.id]: 'ACME-1', [checklist.id]: [oa, oc] };
      const user = expectSuccess(await api.post('/api/user/user', {
        brand_id: brand, email: newEmail('lists'), firstname: 'Lisa', phone: phones.map((p) => p.e164), groups: [g1, g2], additional_email: emails, customfield,
      }), 'Successfully created new user!');
      const stored = (data: any) => {
        expect(data.phonenumbers.map((p: any) => p.number)).toEqual(phones.map((p) => p.e164));
        expect(sorted(ids(data.groups))).toEqual(sorted([g1, g2]));
        expect(data.additional_emails.map((e: any) => e.email)).toEqual(emails);
        expect(data.customfields.map((v: any) => [v.field_id, v.value]).sort()).toEqual([[text.id, 'ACME-1'], [checklist.id, `${oa},${oc}`]].sort());
      };
      stored(user);
      return {
        id: user.id,
        unchanged: [
          { phone: phones.map((p) => p.e164), groups: [g1, g2], additional_email: emails, customfield },
          // Numbers as typed (normalised to the stored E.164), groups in another order, a text value with spaces around.
          { phone: phones.map((p) => p.spaced), groups: [g2, g1], additional_email: emails, customfield: { [text.id]: '  ACME-1 ', [checklist.id]: [oa, oc] } },
          new Json({ phone: phones.map((p) => p.e164), groups: [g2, g1], additional_email: emails, customfield: { [checklist.id]: [oa, oc], [text.id]: 'ACME-1' } }),
        ],
        stored,
        reordered: [
          { body: { phone: [phones[1].e164, phones[0].e164] }, check: (data) => expect(data.phonenumbers.map((p: any) => p.number)).toEqual([phones[1].e164, phones[0].e164]) },
          { body: { additional_email: [emails[1], emails[0]] }, check: (data) => expect(data.additional_emails.map((e: any) => e.email)).toEqual([emails[1], emails[0]]) },
        ],
        change: { body: { groups: [g2] }, check: (data) => expect(ids(data.groups)).toEqual([g2]) },
      };
    },
  },
  {
    name: 'operator (groups, depts, phone)',
    path: '/api/user/operator',
    label: 'operator',
    model: User,
    event: { name: 'operator.updated', key: 'userId' },
    ordered: true,
    lists: [UserGroup, OperatorDepartment, UserPhone],
    async setup() {
      const [g1, g2] = fx.operatorGroups;
      const [d1, d2] = fx.departments;
      const phones = [newPhone(), newPhone()];
      const operator = expectSuccess(await api.post('/api/user/operator', {
        firstname: 'Olga', lastname: 'Lists', email: newEmail('listop'), groups: [g1, g2], depts: [d1, d2], phone: phones.map((p) => p.e164),
      }), 'Successfully created new operator!');
      const stored = async (data: any) => {
        expect(sorted(ids(data.groups))).toEqual(sorted([g1, g2]));
        expect(data.phonenumbers.map((p: any) => p.number)).toEqual(phones.map((p) => p.e164));
        expect(await linked(OperatorDepartment, { user_id: operator.id }, 'department_id')).toEqual(sorted([d1, d2]));
      };
      await stored(operator);
      return {
        id: operator.id,
        unchanged: [
          { groups: [g1, g2], depts: [d1, d2], phone: phones.map((p) => p.e164) },
          { groups: [g2, g1], depts: [d2, d1], phone: phones.map((p) => p.spaced) },
        ],
        stored,
        reordered: [
          { body: { phone: [phones[1].e164, phones[0].e164] }, check: (data) => expect(data.phonenumbers.map((p: any) => p.number)).toEqual([phones[1].e164, phones[0].e164]) },
        ],
        change: {
          body: { depts: [d2] },
          check: async () => expect(await linked(OperatorDepartment, { user_id: operator.id }, 'department_id')).toEqual([d2]),
        },
      };
    },
  },
  {
    name: 'organisation (domain)',
    path: '/api/user/organisation',
    label: 'organisation',
    model: Organisation,
    event: { name: 'organisation.updated', key: 'organisationId' },
    ordered: true,
    lists: [OrganisationDomain],
    async setup() {
      const [a, b, c] = [0, 1, 2].map(() => `${unique('lists')}.example.com`.toLowerCase());
      const org = expectSuccess(await api.post('/api/user/organisation', { name: unique('Lists Ltd'), domain: [a, b] }), 'Successfully created new organisation!');
      const stored = (data: any) => expect(data.domains).toEqual([a, b]);
      stored(org);
      return {
        id: org.id,
        // Domains are stored lower-case: upper-case ones are the same values.
        unchanged: [{ domain: [a, b] }, { domain: [a.toUpperCase(), b.toUpperCase()] }],
        stored,
        reordered: [{ body: { domain: [b, a] }, check: (data) => expect(data.domains).toEqual([b, a]) }],
        change: { body: { domain: [b, c] }, check: (data) => expect(data.domains).toEqual([b, c]) },
      };
    },
  },
  {
    name: 'role (permission, group)',
    path: '/api/user/role',
    label: 'role',
    model: Role,
    lists: [RolePermission, RoleGroup],
    async setup() {
      const [p1, p2, p3] = ids(await Permission.findAll({ order: [['id', 'ASC']], limit: 3 }));
      const [g1, g2] = fx.operatorGroups;
      const role = expectSuccess(await api.postJson('/api/user/role', {
        name: unique('Lists role'), group: [g1, g2], permission: { [p1]: 1, [p2]: 1, [p3]: 0 },
      }), 'Successfully created new role!');
      const stored = async (data: any) => {
        expect(ids(data.permissions)).toEqual([p1, p2]);
        expect(await linked(RoleGroup, { role_id: role.id }, 'group_id')).toEqual(sorted([g1, g2]));
      };
      await stored(role);
      return {
        id: role.id,
        unchanged: [
          new Json({ group: [g1, g2], permission: { [p1]: 1, [p2]: 1, [p3]: 0 } }),
          // The same grants: a permission marked 0 is one the role has not, named or not.
          { group: [g2, g1], permission: { [p2]: 'true', [p1]: '1' } },
        ],
        stored,
        change: { body: new Json({ permission: { [p1]: 1, [p2]: 0, [p3]: 1 } }), check: (data) => expect(ids(data.permissions)).toEqual([p1, p3]) },
      };
    },
  },
  {
    name: 'article (category, tag, translations)',
    path: '/api/selfservice/article',
    label: 'article',
    model: Article,
    event: { name: 'article.updated', key: 'articleId' },
    lists: [ArticleCategory, ArticleTag, Translation],
    async setup() {
      const type = await selfservice.type();
      const [c1, c2] = [(await selfservice.category(type.id)).id, (await selfservice.category(type.id)).id];
      const [t1, t2] = [unique('Lists tag'), unique('Lists tag')];
      const translations = { 'title:fr': 'Les listes', 'excerpt:de': 'Listen' };
      const article = await selfservice.article({ category: [c1, c2], tag: [t1, t2], ...translations });
      const stored = (data: any) => {
        expect(sorted(ids(data.categories))).toEqual(sorted([c1, c2]));
        expect(data.tags.map((t: any) => t.name).sort()).toEqual([t1, t2].sort());
        expect(data.translations).toEqual(expect.arrayContaining([
          expect.objectContaining({ locale: 'de', excerpt: 'Listen', title: null }), expect.objectContaining({ locale: 'fr', title: 'Les listes', excerpt: null }),
        ]));
        expect(data.translations).toHaveLength(2);
      };
      stored(article);
      return {
        id: article.id,
        unchanged: [
          { category: [c1, c2], tag: [t1, t2], ...translations },
          { category: [c2, c1], tag: [t2, t1], 'excerpt:de': ' Listen ', 'title:fr': 'Les listes' },
        ],
        stored,
        change: { body: { tag: [t2] }, check: (data) => expect(data.tags.map((t: any) => t.name)).toEqual([t2]) },
      };
    },
  },
  {
    name: 'department (brand, groups, operators)',
    path: '/api/ticket/department',
    label: 'department',
    model: Department,
    lists: [DepartmentBrand, DepartmentGroup, OperatorDepartment],
    async setup() {
      const [b1, b2] = fx.brands;
      const [g1, g2] = fx.operatorGroups;
      const [o1, o2] = fx.operators;
      const department = expectSuccess(await api.post('/api/ticket/department', {
        name: unique('Lists dept'), brand: [b1, b2], groups: [g1, g2], operators: [o1, o2],
      }), 'Successfully created new department!');
      const stored = async (data: any) => {
        expect(sorted(ids(data.groups))).toEqual(sorted([g1, g2]));
        expect(sorted(ids(data.operators))).toEqual(sorted([o1, o2]));
        expect(await linked(DepartmentBrand, { department_id: department.id }, 'brand_id')).toEqual(sorted([b1, b2]));
      };
      await stored(department);
      return {
        id: department.id,
        unchanged: [{ brand: [b1, b2], groups: [g1, g2], operators: [o1, o2] }, { brand: [b2, b1], groups: [g2, g1], operators: [o2, o1] }],
        stored,
        change: { body: { operators: [o2] }, check: (data) => expect(ids(data.operators)).toEqual([o2]) },
      };
    },
  },
  {
    name: 'priority (depts)',
    path: '/api/ticket/priority',
    label: 'priority',
    model: TicketPriority,
    lists: [PriorityDepartment],
    async setup() {
      const [d1, d2] = fx.departments;
      const priority = expectSuccess(await api.post('/api/ticket/priority', { name: unique('Lists priority'), depts: [d1, d2] }), 'Successfully created new priority!');
      const depts = () => linked(PriorityDepartment, { priority_id: priority.id }, 'department_id');
      const stored = async () => expect(await depts()).toEqual(sorted([d1, d2]));
      await stored();
      return {
        id: priority.id,
        unchanged: [{ depts: [d1, d2] }, { depts: [d2, d1] }],
        stored,
        change: { body: { depts: [d1] }, check: async () => expect(await depts()).toEqual([d1]) },
      };
    },
  },
  {
    name: 'canned response (tag, groups)',
    path: '/api/ticket/cannedresponse',
    label: 'canned response',
    model: CannedResponse,
    lists: [CannedResponseTag, CannedResponseGroup],
    async setup() {
      const [t1, t2] = [unique('Lists tag'), unique('Lists tag')];
      const [g1, g2] = fx.operatorGroups;
      const response = expectSuccess(await api.post('/api/ticket/cannedresponse', {
        name: unique('Lists reply'), text: 'Hello {{ user.firstname }}', tag: [t1, t2], groups: [g1, g2],
      }), 'Successfully created new canned response!');
      const stored = (data: any) => {
        expect(data.tags.map((t: any) => t.name).sort()).toEqual([t1, t2].sort());
        expect(sorted(ids(data.groups))).toEqual(sorted([g1, g2]));
      };
      stored(response);
      return {
        id: response.id,
        unchanged: [{ tag: [t1, t2], groups: [g1, g2] }, { tag: [t2, ` ${t1} `], groups: [g2, g1] }],
        stored,
        change: { body: { groups: [g1] }, check: (data) => expect(ids(data.groups)).toEqual([g1]) },
      };
    },
  },
  {
    name: 'SLA plan (schedule, targets)',
    path: '/api/ticket/slaplan',
    label: 'SLA plan',
    model: SlaPlan,
    lists: [SlaPlanSchedule, SlaPlanTarget],
    async setup() {
      const [p1, p2] = ids(await TicketPriority.findAll({ order: [['id', 'ASC']], limit: 2 }));
      const schedule = { 1: { start: '09:00', end: '17:00' }, 3: { start: '08:30', end: '12:00' } };
      const targets = { [p1]: { first_reply: 60, resolution: 480 }, [p2]: { first_reply: 15 } };
      const plan = expectSuccess(await api.post('/api/ticket/slaplan', { name: unique('Lists plan'), business_hours: 1, schedule, targets }), 'Successfully created new SLA plan!');
      const asStored = {
        schedule: [{ day: 1, start: '09:00', end: '17:00' }, { day: 3, start: '08:30', end: '12:00' }],
        targets: [{ priority_id: p1, first_reply: 60, resolution: 480 }, { priority_id: p2, first_reply: 15, resolution: null }],
      };
      const stored = (data: any) => expect({ schedule: data.schedule, targets: data.targets }).toEqual(asStored);
      stored(plan);
      return {
        id: plan.id,
        unchanged: [
          { schedule, targets },
          // JSON: the schedule as an array indexed by weekday (null: closed), minutes as text, an empty resolution.
          new Json({
            schedule: [null, { start: '09:00', end: '17:00' }, null, { start: ' 08:30', end: '12:00' }],
            targets: { [p2]: { first_reply: '15', resolution: '' }, [p1]: { resolution: '480', first_reply: 60 } },
          }),
        ],
        stored,
        change: {
          body: { targets: { [p1]: { first_reply: 30, resolution: 480 }, [p2]: { first_reply: 15 } } },
          check: (data) => expect(data.targets).toEqual([{ priority_id: p1, first_reply: 30, resolution: 480 }, { priority_id: p2, first_reply: 15, resolution: null }]),
        },
      };
    },
  },
  {
    name: 'ticket filter (conditions, groups)',
    path: '/api/ticket/filter',
    label: 'filter',
    model: TicketFilter,
    lists: [TicketFilterCondition, TicketFilterGroup],
    async setup() {
      const [g1, g2] = fx.operatorGroups;
      const rule = (item: string, operator: string, value: unknown) => ({ item, operator, value });
      const conditions = [
        { type: 1, rules: [rule('status', 'equals', ctx.openStatus), rule('subject', 'contains', 'refund')] },
        { rules: [rule('priority', 'equals', ctx.priorityId)] },
      ];
      const filter = expectSuccess(await api.post('/api/ticket/filter', { name: unique('Lists filter'), groups: [g1, g2], conditions }), 'Successfully created new filter!');
      const asStored = [
        { type: 1, rules: [{ item: 'status', operator: 'equals', value: ctx.openStatus }, { item: 'subject', operator: 'contains', value: 'refund' }] },
        { type: 0, rules: [{ item: 'priority', operator: 'equals', value: ctx.priorityId }] },
      ];
      const stored = (data: any) => {
        expect(data.conditions).toEqual(asStored);
        expect(sorted(ids(data.groups))).toEqual(sorted([g1, g2]));
        expect(data.all_groups).toBe(0);
      };
      stored(filter);
      return {
        id: filter.id,
        unchanged: [
          { groups: [g1, g2], conditions },
          // The same conditions spelt otherwise: operators in capitals, values padded, the default group type given.
          {
            groups: [g2, g1],
            conditions: [
              { type: '1', rules: [rule('status', 'EQUALS', ` ${ctx.openStatus}`), rule('subject', 'Contains', ' refund ')] },
              { type: 0, rules: [rule('priority', 'equals', String(ctx.priorityId))] },
            ],
          },
        ],
        stored,
        change: { body: { conditions: [conditions[0]] }, check: (data) => expect(data.conditions).toEqual([asStored[0]]) },
      };
    },
  },
  {
    name: 'ticket custom field (depts, brand)',
    path: '/api/ticket/customfield',
    label: 'custom field',
    model: CustomField,
    lists: [CustomFieldDepartment, CustomFieldBrand],
    async setup() {
      const [d1, d2] = fx.departments;
      const [b1, b2] = fx.brands;
      const field = await customField('/api/ticket/customfield', { type: 8, depts: [d1, d2], brand: [b1, b2] });
      const stored = async (data: any) => {
        expect(data.depts).toEqual(sorted([d1, d2]));
        expect(await linked(CustomFieldBrand, { field_id: field.id }, 'brand_id')).toEqual(sorted([b1, b2]));
      };
      await stored(field);
      return {
        id: field.id,
        unchanged: [{ depts: [d1, d2], brand: [b1, b2] }, { depts: [d2, d1], brand: [b2, b1] }],
        stored,
        change: { body: { depts: [d2] }, check: (data) => expect(data.depts).toEqual([d2]) },
      };
    },
  },
  {
    name: 'user custom field (brand)',
    path: '/api/user/customfield',
    label: 'custom field',
    model: CustomField,
    lists: [CustomFieldBrand],
    async setup() {
      const [b1, b2] = fx.brands;
      const field = await customField('/api/user/customfield', { type: 8, brand: [b1, b2] });
      const brands = () => linked(CustomFieldBrand, { field_id: field.id }, 'brand_id');
      const stored = async () => expect(await brands()).toEqual(sorted([b1, b2]));
      await stored();
      return {
        id: field.id,
        unchanged: [{ brand: [b1, b2] }, { brand: [b2, b1] }],
        stored,
        change: { body: { brand: [b2] }, check: async () => expect(await brands()).toEqual([b2]) },
      };
    },
  },
  {
    name: 'ticket (tag, assignedto, watching, link, unlink, customfield)',
    path: '/api/ticket/ticket',
    label: 'ticket',
    model: Ticket,
    event: { name: 'ticket.updated', key: 'ticketId' },
    lists: [TicketTagLink, TicketAssignee, TicketWatcher, TicketLink],
    async setup() {
      const [department] = fx.departments;
      const [o1, o2] = fx.operators;
      const order = await customField('/api/ticket/customfield', { type: 8, depts: [department] });
      const colour = await customField('/api/ticket/customfield', { type: 8, depts: [department] });
      const [t1, t2] = ids(await TicketTag.bulkCreate([{ name: unique('Lists tag') }, { name: unique('Lists tag') }]));
      const customfield = { [order.id]: 'ORD-1', [colour.id]: 'Blue' };
      const ticket = await f.ticket({ department, tag: [t1, t2], assignedto: [o1, o2], watching: [o1, o2], customfield });
      const [l1, l2, other] = [(await f.ticket()).id, (await f.ticket()).id, (await f.ticket()).id];
      expect(expectSuccess(await api.put(`/api/ticket/ticket/${ticket.id}`, { link: [l1, l2] }), 'Successfully updated the ticket!').linked).toEqual([l1, l2]);
      const stored = (data: any) => {
        expect({
          tags: ids(data.tags), assigned: ids(data.assigned), watching: ids(data.watching), linked: data.linked,
          customfields: data.customfields.map((v: any) => [v.field_id, v.value]).sort(),
        }).toEqual({
          tags: sorted([t1, t2]), assigned: sorted([o1, o2]), watching: sorted([o1, o2]), linked: [l1, l2],
          customfields: [[order.id, 'ORD-1'], [colour.id, 'Blue']].sort(),
        });
      };
      stored(expectSuccess(await api.get(`/api/ticket/ticket/${ticket.id}`)));
      return {
        id: ticket.id,
        unchanged: [
          { tag: [t1, t2], assignedto: [o1, o2], watching: [o1, o2], link: [l1, l2], unlink: [other], customfield },
          { tag: [t2, t1], assignedto: [o2, o1], watching: [o2, o1], link: [l2, l1], unlink: [other], customfield: { [colour.id]: ' Blue ', [order.id]: 'ORD-1' } },
        ],
        stored,
        change: { body: { tag: [t1] }, check: (data) => expect(ids(data.tags)).toEqual([t1]) },
      };
    },
  },
];

async function makeOld(c: ListCase, id: number) {
  await c.model.update({ updated_at: OLD }, { where: { id }, hooks: false });
  expect(await storedAt(c, id)).toBe(OLD);
}
async function storedAt(c: ListCase, id: number): Promise<number> {
  const row = await c.model.findOne({ where: { id }, attributes: ['updated_at'], raw: true }) as unknown as { updated_at: number } | null;
  return Number(row?.updated_at);
}

/** The step's PUT writes: success, updated_at moved to the request's second (response and database), the event. */
async function expectWritten(c: ListCase, id: number, step: Step) {
  await makeOld(c, id);
  const cursor = await lastEvent();
  const started = nowSec();
  const data = expectSuccess(await put(api, `${c.path}/${id}`, step.body), `Successfully updated the ${c.label}!`);
  await step.check(data);
  expect(data.updated_at).toBeGreaterThanOrEqual(started);
  expect(await storedAt(c, id)).toBe(data.updated_at);
  if (c.event) expect(await eventsAbout(cursor, c.event.key, id)).toEqual([c.event.name]);
}

describe.each(cases)('$name', (c) => {
  let s: Setup;
  beforeAll(async () => { s = await c.setup(); });

  it('sent unchanged (id lists also in another order): success, updated_at kept, no INSERT/UPDATE/DELETE, no event', async () => {
    for (const [n, body] of s.unchanged.entries()) {
      await makeOld(c, s.id);
      const cursor = await lastEvent();
      const { result, sql } = await statementsOf(() => put(api, `${c.path}/${s.id}`, body));
      const data = expectSuccess(result, `Successfully updated the ${c.label}!`);
      // One comparison, so that a failure shows all of it: which body, what was written, what moved.
      expect({
        body: n,
        writes: sql.filter((q) => WRITE.test(q)),
        listsNotCompared: c.lists.map((m) => m.tableName).filter((table) => !lockedRead(sql, table)),
        updatedAt: data.updated_at,
        storedUpdatedAt: await storedAt(c, s.id),
        events: c.event ? await eventsAbout(cursor, c.event.key, s.id) : [],
      }).toEqual({ body: n, writes: [], listsNotCompared: [], updatedAt: OLD, storedUpdatedAt: OLD, events: [] });
      expect(data.id).toBe(s.id);
      await s.stored(data);
    }
  });

  if (c.ordered) {
    it('the same values in another order (an ordered list): a change, listed in the new order', async () => {
      expect(s.reordered?.length).toBeGreaterThan(0);
      for (const step of s.reordered!) await expectWritten(c, s.id, step);
    });
  }

  it('a change of one list writes it, moves updated_at (and emits the event)', async () => {
    await expectWritten(c, s.id, s.change);
  });
});
