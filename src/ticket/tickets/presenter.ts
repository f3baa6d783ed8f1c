import { config } from '../../config';
import {
  Brand, Channel, Department, SlaPlan, TicketPriority, TicketStatus, TicketTag, User, type CustomFieldValue, type Ticket,
} from '../../db/models';
import { loadCustomFieldValues, serializeCustomFieldValue } from '../../customfields/values';
import type { Model, ModelCtor } from 'sequelize-typescript';
import { loadById } from '../../db/load';
import { select } from '../../db/select';
import { cachedPresentations, cachedValue, configVersion } from '../configCache';
import type { ReadContext } from '../../http/resource';
import { flat } from '../../lib/flatString';
import { pick } from '../../lib/serialize';
import { presentTranslated } from '../../translations';
import { USER_SUMMARY_FIELDS, formattedName, serializeUserSummary } from '../../user/people/presenter';
import { serializeChannel } from '../channel';
import { jsonList } from '../common';
import { DEPARTMENT_TRANSLATIONS, serializeDepartment } from '../department';
import { PRIORITY_TRANSLATIONS, serializePriority } from '../priority';
import { SLA_PLAN_TRANSLATIONS, loadSlaPlanRelations, serializeSlaPlan } from '../slaplan';
import { STATUS_TRANSLATIONS, serializeStatus } from '../status';
import { TAG_TRANSLATIONS, serializeTag } from '../tag';
import { ticketSettings } from '../ticketSettings';

export const OPERATOR_FIELDS = ['id', 'firstname', 'lastname', 'email', 'avatar'] as const;

/** An operator as a ticket lists it (assigned, watching). */
function operatorSummary(u: User): Record<string, any> {
  const out = pick(u, OPERATOR_FIELDS);
  out.formatted_name = formattedName(u);
  return out;
}

export interface TicketRelations {
  departments: Map<number, Record<string, any>>;
  channels: Map<number, Record<string, any>>;
  users: Map<number, User>;
  statuses: Map<number, Record<string, any>>;
  priorities: Map<number, Record<string, any>>;
  slaplans: Map<number, Record<string, any>>;
  /** Per ticket, the ids of its tags, assigned and watching operators, and linked tickets, in order. */
  tags: Map<number, number[]>;
  presentedTags: Map<number, Record<string, any>>;
  assigned: Map<number, number[]>;
  watching: Map<number, number[]>;
  operators: Map<number, User>;
  customfields: Map<number, CustomFieldValue[]>;
  links: Map<number, number[]>;
  /** The frontend and operator addresses of each brand. */
  urls: Map<number, { frontend: string; operator: string }>;
}

type LinkKind = 'tags' | 'assigned' | 'watching' | 'links';

/**
 * The tags, assigned and watching operators and linked tickets of a page of tickets, in ONE
 * statement: per kind, per ticket, the linked ids in ascending order.
 */
async function loadTicketLinks(ids: number[]): Promise<Record<LinkKind, Map<number, number[]>>> {
  const out: Record<LinkKind, Map<number, number[]>> = { tags: new Map(), assigned: new Map(), watching: new Map(), links: new Map() };
  if (!ids.length) return out;
  const rows = await select<{ k: LinkKind; t: number; v: number }>(
    `SELECT 'tags' AS k, ticket_id AS t, tag_id AS v FROM ticket_tag_links WHERE ticket_id IN (:ids)
     UNION ALL SELECT 'assigned', ticket_id, user_id FROM ticket_assignees WHERE ticket_id IN (:ids)
     UNION ALL SELECT 'watching', ticket_id, user_id FROM ticket_watchers WHERE ticket_id IN (:ids)
     UNION ALL SELECT 'links', ticket_id, linked_ticket_id FROM ticket_links WHERE ticket_id IN (:ids)
     ORDER BY t, v`,
    { ids },
  );
  for (const row of rows) {
    const [t, v] = [Number(row.t), Number(row.v)];
    const list = out[row.k].get(t);
    if (list) list.push(v);
    else out[row.k].set(t, [v]);
  }
  return out;
}

/**
 * A ticket's department: the department resource's fields, plus `parent`, the name the spec's
 * ticket object gives the parent's id (its department resource says `parent_id`; both are there).
 */
const embeddedDepartment = (d: Department) => ({ ...serializeDepartment(d), parent: d.parent_id ?? null });

/** The records of `ids` of `model`, presented by `present` (one statement for the records, whatever their number). */
const presentAll = async <M extends Model & { id: number }>(model: ModelCtor<M>, ids: number[], present: (rows: M[]) => Promise<Map<number, Record<string, any>>>) =>
  present([...(await loadById(model, ids)).values()]);

/**
 * The configuration a page of tickets embeds (department, channel, status, priority and SLA
 * plan, translated the way their own resources present them, and the brands' addresses), from
 * the config cache (../configCache.ts) where it holds them, else one statement per relation.
 */
async function loadTicketConfig(tickets: Ticket[], lang: string | undefined) {
  const col = <K extends keyof Ticket>(k: K) => tickets.map((t) => t[k] as unknown as number | null);
  const v = await configVersion();
  const settings = () => cachedValue('ticket-settings', v, () => ticketSettings());
  const [departments, channels, statuses, priorities, slaplans, urls] = await Promise.all([
    cachedPresentations('department', col('department_id'), lang, v, (ids) =>
      presentAll(Department, ids, (rows) => presentTranslated(DEPARTMENT_TRANSLATIONS, rows, embeddedDepartment, lang))),
    cachedPresentations('channel', col('channel_id'), undefined, v, (ids) =>
      presentAll(Channel, ids, async (rows) => new Map(rows.map((c) => [c.id, serializeChannel(c)])))),
    cachedPresentations('status', col('status_id'), lang, v, (ids) =>
      presentAll(TicketStatus, ids, (rows) => presentTranslated(STATUS_TRANSLATIONS, rows, serializeStatus, lang))),
    cachedPresentations('priority', col('priority_id'), lang, v, (ids) =>
      presentAll(TicketPriority, ids, (rows) => presentTranslated(PRIORITY_TRANSLATIONS, rows, serializePriority, lang))),
    cachedPresentations('slaplan', col('sla_plan_id'), lang, v, (ids) => presentAll(SlaPlan, ids, async (plans) => {
      const [translated, relations] = await Promise.all([presentTranslated(SLA_PLAN_TRANSLATIONS, plans, () => ({}), lang), loadSlaPlanRelations(plans)]);
      // A plan's translated name and description over its presentation (schedule, targets).
      return new Map(plans.map((p) => [p.id, { ...serializeSlaPlan(p, relations), ...translated.get(p.id) }]));
    })),
    cachedPresentations('brand-urls', col('brand_id'), undefined, v, async (ids) => {
      const [brands, { adminFolder }] = await Promise.all([loadById(Brand, ids, { attributes: ['id', 'system_url'] }), settings()]);
      const fallback = config().appUrl;
      return new Map([...brands.values()].map((b) => {
        const base = (b.system_url || fallback).replace(/\/+$/, '');
        return [b.id, { frontend: base, operator: `${base}/${adminFolder}` }];
      }));
    }),
  ]);
  return { departments, channels, statuses, priorities, slaplans, urls };
}

/**
 * What the write that opened a ticket knows of it (createTicket): its user, and whether nothing
 * links to it yet (no tags, operators, custom field values or linked tickets).
 */
export interface KnownTicket {
  user: User;
  unlinked: boolean;
}

/**
 * Everything a page of tickets embeds, in a fixed number of statements whatever the page size
 * (the configuration records from the config cache): the department, channel, user, status,
 * priority and SLA plan, tags, assigned and watching operators and linked tickets (one statement),
 * custom field values, and the brands' addresses. `known` (by ticket id): what is not read again.
 */
export async function loadTicketRelations(tickets: Ticket[], ctx: ReadContext, known?: ReadonlyMap<number, KnownTicket>): Promise<TicketRelations> {
  const ids = tickets.filter((t) => !known?.get(t.id)?.unlinked).map((t) => t.id);
  const [configured, users, { tags, assigned, watching, links }, customfields] = await Promise.all([
    loadTicketConfig(tickets, ctx.lang),
    loadById(User, tickets.filter((t) => !known?.has(t.id)).map((t) => t.user_id), { attributes: [...USER_SUMMARY_FIELDS, 'type'] }),
    loadTicketLinks(ids),
    loadCustomFieldValues(ids, 'ticket'),
  ]);
  const operatorIds = [...assigned.values(), ...watching.values()].flat();
  const [presentedTags, operators] = await Promise.all([
    // Tags change through the API only, as the configuration does (src/wiring.ts watches them):
    // from the config cache a page of tagged tickets reads no tag or translation rows.
    configVersion().then((v) => cachedPresentations('tag', [...tags.values()].flat(), ctx.lang, v, (missing) =>
      presentAll(TicketTag, missing, (rows) => presentTranslated(TAG_TRANSLATIONS, rows, serializeTag, ctx.lang)))),
    loadById(User, operatorIds, { attributes: [...OPERATOR_FIELDS] }),
  ]);
  for (const [, k] of known ?? []) users.set(k.user.id, k.user);
  return { ...configured, users, tags, presentedTags, assigned, watching, operators, customfields, links };
}


/**
 * A ticket as its resource shows it (list, show, create, update, merge): its columns in the
 * spec's order, then what it embeds. One object literal, not spreads of picked fields: a page
 * presents fifty of these, and a literal of fixed shape is several times cheaper to build.
 */
export function serializeTicket(t: Ticket, rel: TicketRelations): Record<string, any> {
  const url = rel.urls.get(t.brand_id) ?? { frontend: config().appUrl, operator: `${config().appUrl}/admin` };
  const user = rel.users.get(t.user_id);
  const operators = (ids: number[] | undefined) =>
    (ids ?? []).map((id) => rel.operators.get(id)).filter((u): u is User => !!u).map(operatorSummary);
  return {
    id: t.id,
    number: t.number,
    department_id: t.department_id,
    department_email_id: t.department_email_id ?? null,
    brand_id: t.brand_id,
    channel_id: t.channel_id,
    user_id: t.user_id,
    status_id: t.status_id,
    priority_id: t.priority_id,
    sla_plan_id: t.sla_plan_id ?? null,
    subject: t.subject,
    due_time: t.due_time ?? null,
    resolved_time: t.resolved_time ?? null,
    cc: jsonList(t.cc),
    locked: t.locked,
    merged: t.merged,
    internal: t.internal,
    created_at: t.created_at,
    updated_at: t.updated_at,
    deleted_at: t.deleted_at ?? null,
    // The frontend view of the ticket; the token lets a user without an account open it.
    frontend_url: flat(url.frontend, '/tickets/view/', encodeURIComponent(t.number), '?token=', t.token),
    operator_url: flat(url.operator, '/ticket/view/', t.id),
    token: t.token,
    department: rel.departments.get(t.department_id) ?? null,
    channel: rel.channels.get(t.channel_id) ?? null,
    user: user ? serializeUserSummary(user) : null,
    status: rel.statuses.get(t.status_id) ?? null,
    priority: rel.priorities.get(t.priority_id) ?? null,
    slaplan: t.sla_plan_id ? rel.slaplans.get(t.sla_plan_id) ?? null : null,
    // Beyond the spec (SupportPal's real responses carry them).
    reply_due_time: t.reply_due_time ?? null,
    resolve_due_time: t.resolve_due_time ?? null,
    reopened_time: t.reopened_time ?? null,
    last_reply_time: t.last_reply_time ?? null,
    merged_into_id: t.merged_into_id ?? null,
    tags: (rel.tags.get(t.id) ?? []).filter((id) => rel.presentedTags.has(id)).map((id) => ({ ...rel.presentedTags.get(id), pivot: { ticket_id: t.id, tag_id: id } })),
    assigned: operators(rel.assigned.get(t.id)),
    watching: operators(rel.watching.get(t.id)),
    customfields: (rel.customfields.get(t.id) ?? []).map((v) => serializeCustomFieldValue(v, 'ticket_id')),
    linked: rel.links.get(t.id) ?? [],
  };
}
