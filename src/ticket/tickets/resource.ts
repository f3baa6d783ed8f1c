import { Op } from 'sequelize';
import { ipAddress } from '../../lib/ip';
import { Ticket, TicketFilter, TicketFilterCondition, User } from '../../db/models';
import { ValidationError, invalid } from '../../errors';
import type { Condition } from '../../http/listQuery';
import { Written, resourceRouter, type CustomAction, type ListInstead, type ResourceDef } from '../../http/resource';
import { sqlCondition, sqlFragment, sqlText } from '../../db/sql';
import { select } from '../../db/select';
import { Joi, MAX_ID, field } from '../../lib/validation';
import { richText } from '../../content/html';
import { customFieldValuesSchema, isOptionOfField, plainOptionFields } from '../../customfields/values';
import { definitions } from '../../db/definitions';
import { attachmentsField } from '../attachment';
import { sharedWithGroupsOf } from '../filterUse';
import { filterConditionSql, listFiltersOf } from './conditions';
import { departmentTrees } from './departmentsBelow';
import { countedApart, onlyTheirs, operatorView } from './operatorVisibility';
import { NARROWING_PARAMS, ticketFilters, ticketListParams } from './listFilters';
import { searchAsListFilters } from './search/asListFilters';
import { countedByCounters, listTicketPage, oneLinked } from './listPage';
import { loadTicketRelations, serializeTicket, type KnownTicket, type TicketRelations } from './presenter';
import { splitTicket } from './split';
import { createTicket, mergeTickets, restoreTicket, trashTicket, updateTicket, type CreateTicketInput, type UpdateTicketInput } from './service';

/**
 * Tickets (`/api/ticket/ticket`): list (the spec's filters, a saved `filter`, `trashed`), show,
 * create, update, delete (to the trash) and merge. The rules live in ./service.ts; this maps the
 * API's parameters to its typed inputs.
 */

const TEXT_MAX = 1_000_000;

const ccField = () => Joi.array().items(field.email()).single().max(100).allow('', null);
const idList = () => field.idArray().allow('', null);
/** A reference that 0 or an empty value clears. */
const clearableRef = () => Joi.number().integer().min(0).max(MAX_ID).allow(null, '');
const clearableTime = () => field.timestamp().allow(null, '');

export const ticketCreateSchema = Joi.object({
  department: field.id().required(),
  status: field.id().required(),
  priority: field.id().required(),
  subject: field.string().required(),
  text: richText(TEXT_MAX).required(),
  user: field.id(),
  on_behalf_of: field.id(),
  user_firstname: field.nullable(),
  user_lastname: field.nullable(),
  user_email: field.email(),
  user_organisation: field.nullable(),
  user_ip_address: ipAddress().allow('', null),
  brand: field.id(),
  internal: field.flag().default(0),
  tag: idList(),
  assignedto: idList(),
  watching: idList(),
  customfield: customFieldValuesSchema(),
  cc: ccField(),
  send_user_email: field.flag().default(1),
  send_operators_email: field.flag().default(1),
  attachment: attachmentsField(),
  created_at: field.timestamp(),
  // Beyond the spec: an SLA plan for the new ticket.
  sla_plan: clearableRef(),
});

export const ticketUpdateSchema = Joi.object({
  brand: field.id(),
  user: field.id(),
  department: field.id(),
  department_email: clearableRef(),
  status: field.id(),
  priority: field.id(),
  subject: field.string(),
  tag: idList(),
  assignedto: idList(),
  watching: idList(),
  link: idList(),
  unlink: idList(),
  sla_plan: clearableRef(),
  reply_due_time: clearableTime(),
  resolve_due_time: clearableTime(),
  customfield: customFieldValuesSchema(),
  overwrite_customfield_values: field.flag().default(0),
  cc: ccField(),
  locked: field.flag(),
});

const orUndefined = <T>(v: T | null | undefined): T | undefined => (v === null ? undefined : v);

/** An empty list parameter (`tag=`) is the empty list: on update it clears, on create `assignedto=` means no one. */
const list = (v: number[] | null | undefined): number[] | undefined => (v === undefined ? undefined : v ?? []);

export function toCreateInput(b: Record<string, any>): CreateTicketInput {
  return {
    brandId: b.brand, departmentId: b.department, statusId: b.status, priorityId: b.priority, subject: b.subject, text: b.text,
    userId: b.user, onBehalfOf: b.on_behalf_of, userEmail: orUndefined(b.user_email), userFirstname: b.user_firstname,
    userLastname: b.user_lastname, userOrganisation: b.user_organisation, userIpAddress: b.user_ip_address ?? null,
    internal: b.internal === 1, channel: 'api', tagIds: list(b.tag), assignedTo: list(b.assignedto),
    watching: list(b.watching), customfields: b.customfield ?? undefined, cc: orUndefined(b.cc), attachments: b.attachment,
    createdAt: b.created_at, slaPlanId: b.sla_plan || undefined, sendUserEmail: b.send_user_email === 1, sendOperatorsEmail: b.send_operators_email === 1,
  };
}

export function toUpdateInput(b: Record<string, any>): UpdateTicketInput {
  return {
    brandId: b.brand, userId: b.user, departmentId: b.department, departmentEmailId: b.department_email === undefined ? undefined : b.department_email || null,
    statusId: b.status, priorityId: b.priority, subject: b.subject, tagIds: list(b.tag), assignedTo: list(b.assignedto),
    watching: list(b.watching), link: orUndefined(b.link), unlink: orUndefined(b.unlink),
    slaPlanId: b.sla_plan === undefined ? undefined : b.sla_plan || null,
    replyDueTime: b.reply_due_time === undefined ? undefined : b.reply_due_time || null,
    resolveDueTime: b.resolve_due_time === undefined ? undefined : b.resolve_due_time || null,
    customfields: b.customfield ?? undefined, overwriteCustomfieldValues: b.overwrite_customfield_values === 1,
    cc: b.cc === undefined ? undefined : b.cc ?? [], locked: b.locked === undefined ? undefined : b.locked === 1,
  };
}

const listScope = (p: Record<string, any>): Condition => ({
  deleted_at: p.trashed === 1 ? { [Op.ne]: null } : null,
  merged_into_id: null,
});

/** Whether an operator sees a saved filter: its owner, or shared with all or with one of the operator's groups (one statement). */
async function operatorSeesFilter(filter: TicketFilter, operatorId: number): Promise<boolean> {
  if (filter.user_id !== null) return filter.user_id === operatorId;
  if (filter.all_groups === 1) return true;
  const shared = sqlFragment`SELECT 1 AS one FROM ticket_filters WHERE id = ${filter.id} AND id IN (${sharedWithGroupsOf(operatorId)})`;
  return (await select(sqlText(shared), shared.replacements)).length > 0;
}

/** Whether `{ field: option }` names an option of the ticket field, as the process keeps the fields and their options. */
async function isOptionOf(named: Record<number, number>): Promise<boolean> {
  const [[fieldId, optionId]] = Object.entries(named);
  return isOptionOfField('ticket', Number(fieldId), Number(optionId));
}

interface SavedFilter { filter: TicketFilter; conditions: TicketFilterCondition[] }

/**
 * A saved filter and its conditions, kept per process with the definitions (db/definitions.ts): a
 * change of either through the models makes them stale everywhere, and so do a custom field's
 * delete (its conditions go by a cascade) and an operator's (their private filters are deleted by
 * the model first: operators/service.ts). An id that names no filter is refused and not kept, so
 * requests for made-up ids cannot crowd the kept definitions out.
 */
const savedFilterOf = (id: number) => definitions.get(`ticketfilter.${id}`, async (transaction): Promise<SavedFilter> => {
  const [filter, conditions] = await Promise.all([
    TicketFilter.findByPk(id, { transaction }),
    TicketFilterCondition.findAll({ where: { filter_id: id }, transaction }),
  ]);
  if (!filter) throw invalid('filter');
  return { filter, conditions };
});

/**
 * `filter` (a saved ticket filter) with `filter_operator`: the filter's conditions stand for every
 * other filter. Run as an operator, only the tickets that operator sees; a private filter, or one
 * shared with some operator groups, needs the operator, who must see it. Conditions that are the
 * list's own filters (listFiltersOf), for every ticket, are the list of those filters instead.
 */
async function savedFilter(p: Record<string, any>): Promise<Condition | ListInstead | undefined> {
  if (p.filter === undefined) return undefined;
  const { filter, conditions: rows } = await savedFilterOf(p.filter);
  const restricted = filter.user_id !== null || filter.all_groups !== 1;
  if (p.filter_operator === undefined) {
    if (restricted) throw new ValidationError('The filter operator field is required when the filter is private or shared with some operator groups.');
  } else {
    const operator = await User.findOne({ attributes: ['id'], where: { id: p.filter_operator, type: 'operator' } });
    if (!operator) throw invalid('filter_operator');
    if (!(await operatorSeesFilter(filter, operator.id))) throw invalid('filter');
  }
  const [view, optionFields] = await Promise.all([
    p.filter_operator === undefined ? null : operatorView(p.filter_operator),
    plainOptionFields('ticket'),
  ]);
  // That list's count comes from the counters and its page from their plans (listPage.ts): a
  // filter of a status at 1M counted every ticket of the status, 90 ms. As an operator who sees
  // part of the tickets, the counters of their departments and their own and assigned tickets
  // elsewhere (listPage.ts, withinView; at 1M, an operator of a department of 999,000: 228 → 29 ms).
  // A condition naming an option deleted since matches nothing, where the list's `customfield`
  // refuses an option that is not the field's: such a filter runs as its conditions.
  const named = listFiltersOf(filter, rows, optionFields);
  const filters = named?.customfield && !(await isOptionOf(named.customfield as Record<number, number>)) ? null : named;
  const instead = filters && { ...Object.fromEntries(Object.entries(p).filter(([k]) => !SAVED_FILTER_REPLACES.has(k))), ...filters };
  if (instead && (view === null || onlyTheirs(view, filters))) return { instead };
  // Counted filters, or one option or tag beside them (their counters are by department too: migrations 076, 081).
  if (instead && view && countedApart(view) && (countedByCounters(filters) || (await oneLinked(filters)))) return { instead, within: { condition: view.condition, view } };
  const matches = filterConditionSql(filter, rows, Math.floor(Date.now() / 1000), await departmentTrees(rows));
  return view === null ? matches : sqlCondition`${matches} AND ${view.condition}`;
}

/** The list parameters a saved filter stands for (and itself): every other one applies to its list as given. */
const SAVED_FILTER_REPLACES = new Set([...NARROWING_PARAMS, 'filter_operator']);

/** A search of field terms only is the list of those filters (./search/asListFilters.ts). */
async function searchOfFilters(p: Record<string, any>): Promise<ListInstead | null | undefined> {
  const filters = await searchAsListFilters(p);
  if (!filters) return filters;
  const { search: _search, ...others } = p;
  return { instead: { ...others, ...filters } };
}

/** A saved filter stands for every other filter, the search included; else the search may be filters. */
const listOverride = (p: Record<string, any>) => (p.filter !== undefined ? savedFilter(p) : searchOfFilters(p));

const merge: CustomAction<Ticket> = {
  name: 'merge',
  method: 'POST',
  path: '/:id/merge',
  schema: Joi.object({ ids: field.idArray().min(1).required() }),
  message: 'Successfully updated the ticket!',
  run: ({ record, input, transaction }) => mergeTickets(record!, input.ids, transaction!),
};

/** `POST /ticket/{id}/restore`: takes a ticket out of the trash (a DELETE moved it there); answers the ticket. */
const restore: CustomAction<Ticket> = {
  name: 'restore',
  method: 'POST',
  path: '/:id/restore',
  schema: Joi.object({}),
  message: 'Successfully restored the ticket!',
  run: ({ record, transaction }) => restoreTicket(record!, transaction!),
};

/** `POST /ticket/{id}/split`: moves a message (and those after it, on request) into a new ticket (./split.ts); answers the new ticket. */
const split: CustomAction<Ticket> = {
  name: 'split',
  method: 'POST',
  path: '/:id/split',
  schema: Joi.object({
    message_id: field.id().required(),
    following: field.flag().default(0),
    user_id: field.id().required(),
    subject: field.string(),
  }),
  message: 'Successfully split the ticket!',
  run: ({ record, input, transaction }) => splitTicket(record!, {
    messageId: input.message_id, following: input.following === 1, operatorId: input.user_id, subject: input.subject ?? undefined,
  }, transaction!),
};

export const ticketResource: ResourceDef<Ticket, TicketRelations, KnownTicket> = {
  path: '/ticket',
  model: Ticket,
  label: 'ticket',
  sortable: [
    'number', 'subject', 'department_id', 'brand_id', 'channel_id', 'user_id', 'status_id', 'priority_id', 'due_time', 'resolved_time',
    'last_reply_time', 'created_at', 'updated_at', 'deleted_at',
  ],
  filters: ticketFilters,
  dates: true,
  listParams: ticketListParams,
  listScope,
  listOverride,
  // Counters kept by triggers (migration 018) and index-only pages: ./listPage.ts.
  listPage: listTicketPage,
  createSchema: ticketCreateSchema,
  updateSchema: ticketUpdateSchema,
  // The answer presents the ticket as written, with its user and (when nothing links to it) no links, read from nowhere.
  create: async (input, { transaction }) => {
    const { ticket, owner, unlinked } = await createTicket(toCreateInput(input), transaction);
    return new Written(ticket, { user: owner, unlinked });
  },
  update: (ticket, input, { transaction }) => updateTicket(ticket, toUpdateInput(input), transaction),
  destroy: (ticket, { transaction }) => trashTicket(ticket, transaction),
  messages: { deleted: 'Successfully moved the ticket to trash!' },
  load: loadTicketRelations,
  serialize: (ticket, rel) => serializeTicket(ticket, rel),
  custom: [merge, restore, split],
};

export const ticketRouter = resourceRouter(ticketResource);
