import { customFieldFilter } from '../../customfields/values';
import { sqlCondition } from '../../db/sql';
import { DATE_PARAMS, flagFilter, idsFilter, type Filter } from '../../http/listQuery';
import { Joi, field } from '../../lib/validation';
import { unassigned } from './conditions';
import { departmentsBelow } from './departmentsBelow';
import { numberCondition, ticketSearchCondition, ticketSearchText } from './search/compile';

/**
 * The ticket list's filters and parameters: the one list that the list's schema, its conditions
 * (./resource.ts) and its page and count (./listPage.ts: which parameters the counters answer) read.
 */

export const ticketFilters: Record<string, Filter> = {
  /** The search language (./search/): words, "phrases", field:value terms, -exclusions, OR. */
  search: { schema: ticketSearchText(), where: ticketSearchCondition },
  /** A number also finds the ticket that a ticket of that number was merged into. */
  number: {
    schema: field.string(64),
    where: numberCondition,
  },
  /** A department and every department below it (their ids, from the tree kept per process: ./departmentsBelow.ts). */
  department: {
    schema: Joi.ids(),
    where: async (ids: number[]) => sqlCondition`department_id IN (${await departmentsBelow(ids)})`,
  },
  brand: idsFilter('brand_id'),
  channel: idsFilter('channel_id'),
  status: idsFilter('status_id'),
  priority: idsFilter('priority_id'),
  tag: { schema: Joi.ids(), where: (ids: number[]) => sqlCondition`id IN (SELECT ticket_id FROM ticket_tag_links WHERE tag_id IN (${ids}))` },
  user: idsFilter('user_id'),
  /** The customer's organisation, kept on the ticket (migration 086). */
  organisation: idsFilter('organisation_id'),
  watching: { schema: Joi.ids(), where: (ids: number[]) => sqlCondition`id IN (SELECT ticket_id FROM ticket_watchers WHERE user_id IN (${ids}))` },
  /** The ticket's user by address, primary or additional. */
  user_email: {
    schema: field.string(255),
    // person_emails holds every address a person has, primary and additional (kept by triggers).
    where: (email: string) => sqlCondition`user_id IN (SELECT user_id FROM person_emails WHERE email = ${email.toLowerCase()})`,
  },
  /** Operator ids; -1: tickets no operator is assigned to (`tickets.assigned`: a counted filter alone, ./listPage.ts). */
  assigned: {
    schema: Joi.ids(),
    where(ids: number[]) {
      const operators = ids.filter((id) => id > 0);
      const parts = [];
      if (operators.length) parts.push(sqlCondition`id IN (SELECT ticket_id FROM ticket_assignees WHERE user_id IN (${operators}))`);
      if (ids.includes(-1)) parts.push(unassigned());
      if (!parts.length) return null;
      return parts.length === 1 ? parts[0] : sqlCondition`${parts[0]} OR ${parts[1]}`;
    },
  },
  internal: flagFilter('internal'),
  locked: flagFilter('locked'),
  customfield: customFieldFilter('ticket'),
};

/** `trashed` 1: the tickets in the trash instead. Tickets merged into another are never listed (their numbers find the target). */
export const ticketListParams = {
  trashed: field.flag().default(0), filter: field.id(), filter_operator: field.id(),
};

/** Every list parameter that narrows the list: the filters, a saved `filter`, the dates. */
export const NARROWING_PARAMS: readonly string[] = [...Object.keys(ticketFilters), 'filter', ...DATE_PARAMS];
