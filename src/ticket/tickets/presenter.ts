import { config } from '../../config';
import {
  Brand, Channel, Department, SlaPlan, TicketAssignee, TicketLink, TicketPriority, TicketStatus, TicketTag, TicketTagLink,
  TicketWatcher, User, type CustomFieldValue, type Ticket,
} from '../../db/models';
import { loadCustomFieldValues, serializeCustomFieldValue } from '../../customfields/values';
import { loadById, loadLinked, loadMany } from '../../http/load';
import type { ReadContext } from '../../http/resource';
import { pick } from '../../http/serialize';
import { presentTranslated } from '../../http/translations';
import { USER_SUMMARY_FIELDS, formattedName, serializeUserSummary } from '../../user/people/presenter';
import { serializeChannel } from '../channel';
import { jsonList } from '../common';
import { DEPARTMENT_TRANSLATIONS, serializeDepartment } from '../department';
import { PRIORITY_TRANSLATIONS, serializePriority } from '../priority';
import { SLA_PLAN_TRANSLATIONS, loadSlaPlanRelations, serializeSlaPlan } from '../slaplan';
import { STATUS_TRANSLATIONS, serializeStatus } from '../status';
import { TAG_TRANSLATIONS, serializeTag } from '../tag';
import { ticketSettings } from '../ticketSettings';

/** A ticket's own columns on the wire, in the spec's order (`cc` is decoded in between). */
export const TICKET_FIELDS = [
  'id', 'number', 'department_id', 'department_email_id', 'brand_id', 'channel_id', 'user_id', 'status_id', 'priority_id',
  'sla_plan_id', 'subject', 'due_time', 'resolved_time',
] as const;
const TICKET_FLAGS = ['locked', 'merged', 'internal', 'created_at', 'updated_at', 'deleted_at'] as const;
/** Beyond the spec (SupportPal's real responses carry them). */
const TICKET_EXTRA_FIELDS = ['reply_due_time', 'resolve_due_time', 'reopened_time', 'last_reply_time', 'merged_into_id'] as const;

const OPERATOR_FIELDS = ['id', 'firstname', 'lastname', 'email', 'avatar'] as const;

/** An operator as a ticket lists it (assigned, watching). */
const operatorSummary = (u: User) => ({ ...pick(u, OPERATOR_FIELDS), formatted_name: formattedName(u) });

export interface TicketRelations {
  departments: Map<number, Record<string, any>>;
  channels: Map<number, Channel>;
  users: Map<number, User>;
  statuses: Map<number, Record<string, any>>;
  priorities: Map<number, Record<string, any>>;
  slaplans: Map<number, Record<string, any>>;
  tags: Map<number, TicketTag[]>;
  presentedTags: Map<number, Record<string, any>>;
  assigned: Map<number, TicketAssignee[]>;
  watching: Map<number, TicketWatcher[]>;
  operators: Map<number, User>;
  customfields: Map<number, CustomFieldValue[]>;
  links: Map<number, TicketLink[]>;
  /** The frontend and operator addresses of each brand. */
  urls: Map<number, { frontend: string; operator: string }>;
}

const distinct = <T extends { id: number }>(lists: Iterable<T[]>): T[] => [...new Map([...lists].flat().map((r) => [r.id, r])).values()];

/**
 * Everything a page of tickets embeds, one statement per relation whatever the page size: the
 * department, channel, user, status, priority and SLA plan (translated the way their own resources
 * present them), tags, assigned and watching operators, custom field values, linked tickets, and
 * the brands' addresses.
 */
export async function loadTicketRelations(tickets: Ticket[], ctx: ReadContext): Promise<TicketRelations> {
  const ids = tickets.map((t) => t.id);
  const col = <K extends keyof Ticket>(k: K) => tickets.map((t) => t[k] as unknown as number | null);
  const [departments, channels, users, statuses, priorities, plans, brands, settings, tags, assigned, watching, customfields, links] = await Promise.all([
    loadById(Department, col('department_id')),
    loadById(Channel, col('channel_id')),
    loadById(User, col('user_id'), { attributes: [...USER_SUMMARY_FIELDS, 'type'] }),
    loadById(TicketStatus, col('status_id')),
    loadById(TicketPriority, col('priority_id')),
    loadById(SlaPlan, col('sla_plan_id')),
    loadById(Brand, col('brand_id'), { attributes: ['id', 'system_url'] }),
    ticketSettings(),
    loadLinked(TicketTagLink, 'ticket_id', 'tag_id', ids, TicketTag),
    loadMany(TicketAssignee, 'ticket_id', ids, { order: [['ticket_id', 'ASC'], ['user_id', 'ASC']] }),
    loadMany(TicketWatcher, 'ticket_id', ids, { order: [['ticket_id', 'ASC'], ['user_id', 'ASC']] }),
    loadCustomFieldValues(ids, 'ticket'),
    loadMany(TicketLink, 'ticket_id', ids, { order: [['ticket_id', 'ASC'], ['linked_ticket_id', 'ASC']] }),
  ]);
  const operatorIds = [...assigned.values(), ...watching.values()].flat().map((l) => l.user_id);
  const [presentedDepartments, presentedStatuses, presentedPriorities, presentedPlans, planRelations, presentedTags, operators] = await Promise.all([
    presentTranslated(DEPARTMENT_TRANSLATIONS, [...departments.values()], serializeDepartment, ctx.lang),
    presentTranslated(STATUS_TRANSLATIONS, [...statuses.values()], serializeStatus, ctx.lang),
    presentTranslated(PRIORITY_TRANSLATIONS, [...priorities.values()], serializePriority, ctx.lang),
    presentTranslated(SLA_PLAN_TRANSLATIONS, [...plans.values()], () => ({}), ctx.lang),
    loadSlaPlanRelations([...plans.values()]),
    presentTranslated(TAG_TRANSLATIONS, distinct(tags.values()), serializeTag, ctx.lang),
    loadById(User, operatorIds, { attributes: [...OPERATOR_FIELDS] }),
  ]);
  // A plan's translated name and description over its presentation (schedule, targets).
  const slaplans = new Map([...plans.values()].map((p) => [p.id, { ...serializeSlaPlan(p, planRelations), ...presentedPlans.get(p.id) }]));
  const fallback = config().appUrl;
  const urls = new Map([...brands.values()].map((b) => {
    const base = (b.system_url || fallback).replace(/\/+$/, '');
    return [b.id, { frontend: base, operator: `${base}/${settings.adminFolder}` }];
  }));
  return {
    departments: presentedDepartments, channels, users, statuses: presentedStatuses, priorities: presentedPriorities, slaplans,
    tags, presentedTags, assigned, watching, operators, customfields, links, urls,
  };
}

/** A ticket as its resource shows it (list, show, create, update, merge). */
export function serializeTicket(t: Ticket, rel: TicketRelations): Record<string, any> {
  const url = rel.urls.get(t.brand_id) ?? { frontend: config().appUrl, operator: `${config().appUrl}/admin` };
  const user = rel.users.get(t.user_id);
  const channel = rel.channels.get(t.channel_id);
  const operators = (links: Array<{ user_id: number }> | undefined) =>
    (links ?? []).map((l) => rel.operators.get(l.user_id)).filter((u): u is User => !!u).map(operatorSummary);
  return {
    ...pick(t, TICKET_FIELDS),
    cc: jsonList(t.cc),
    ...pick(t, TICKET_FLAGS),
    // The frontend view of the ticket; the token lets a user without an account open it.
    frontend_url: `${url.frontend}/tickets/view/${encodeURIComponent(t.number)}?token=${t.token}`,
    operator_url: `${url.operator}/ticket/view/${t.id}`,
    token: t.token,
    department: rel.departments.get(t.department_id) ?? null,
    channel: channel ? serializeChannel(channel) : null,
    user: user ? serializeUserSummary(user) : null,
    status: rel.statuses.get(t.status_id) ?? null,
    priority: rel.priorities.get(t.priority_id) ?? null,
    slaplan: t.sla_plan_id ? rel.slaplans.get(t.sla_plan_id) ?? null : null,
    ...pick(t, TICKET_EXTRA_FIELDS),
    tags: (rel.tags.get(t.id) ?? []).map((tag) => ({ ...rel.presentedTags.get(tag.id), pivot: { ticket_id: t.id, tag_id: tag.id } })),
    assigned: operators(rel.assigned.get(t.id)),
    watching: operators(rel.watching.get(t.id)),
    customfields: (rel.customfields.get(t.id) ?? []).map((v) => serializeCustomFieldValue(v, 'ticket_id')),
    linked: (rel.links.get(t.id) ?? []).map((l) => l.linked_ticket_id),
  };
}

