import { QueryTypes } from 'sequelize';
import { sequelize } from '../src/db/sequelize';
import { capture, explainOf, withoutSwitches } from './capture';
import { table } from './table';
import { TICKETS } from './env';
import { SMALL_DEPARTMENT, orderReference } from './tickets';
import { BUSY_CUSTOMER_EMAIL } from './data';

interface Target {
  ticket: { id: number; user_id: number; department_id: number; status_id: number; priority_id: number };
  organisationId: number;
  operatorId: number;
  busyCustomerId: number;
  /** The busy customer's organisation (a sixteenth of the tickets). */
  largeOrganisationId: number;
  /** An organisation of 1,000 people (about a twentieth of the tickets). */
  manyPeopleOrganisationId: number;
  smallDepartmentId: number;
  savedFilterId: number;
  /** A saved filter of one condition: the product of half the tickets. */
  optionFilterId: number;
  /** An options field every ticket holds one of (of half, three tenths, a fifth, a thousandth of them), and a text field. */
  productFieldId: number;
  productOptionIds: number[];
  referenceFieldId: number;
  /** Tags on a tenth and a thousandth of the tickets. */
  tagIds: number[];
  departmentOperatorId: number;
  largeDepartmentOperatorId: number;
  searchTerm: string;
  selectiveSearchTerm: string;
  commonSearchTerm: string;
}

const SORTABLE = [
  'id', 'number', 'subject', 'department_id', 'brand_id', 'channel_id', 'user_id', 'status_id', 'priority_id', 'due_time', 'resolved_time',
  'last_reply_time', 'created_at', 'updated_at', 'deleted_at',
];

/** The orders the load run measures by default (BENCH_ALL_ORDERS=1: all; bench/latency.ts times all of them). */
const SOME_ORDERS = ['subject', 'priority_id', 'due_time', 'last_reply_time', 'updated_at'];

/**
 * The ticket lists the benchmark measures: each filter of the spec alone and two together, every
 * sortable column both ways, deep pages (`start` half-way through the tickets) and keyset pages
 * (`after_id`), and search (a common word, a selective one).
 */
export function ticketListPaths(t: Target, all = true): Array<[string, string]> {
  const tk = t.ticket;
  const q = (s: string) => `/api/ticket/ticket?limit=50&${s}`;
  const deep = Math.floor(TICKETS / 2);
  return [
    ['list: department (with sub-departments)', q(`department=${tk.department_id}`)],
    // A thousandth of the tickets (bench/tickets.ts): its own index, not a walk of the order's.
    ['list: department, a small one', q(`department=${t.smallDepartmentId}`)],
    ['list: department, a small one + status', q(`department=${t.smallDepartmentId}&status=${tk.status_id}`)],
    // By latest activity: a range of its updated_at index (migration 097), a deep page from the day counters' edge.
    ['list: department, a small one, updated_at desc', q(`department=${t.smallDepartmentId}&order_column=updated_at&order_direction=desc`)],
    [`list: department, a small one, start=${Math.floor(TICKETS / 4000).toLocaleString('en-GB')}, updated_at desc`,
      q(`department=${t.smallDepartmentId}&start=${Math.floor(TICKETS / 4000)}&order_column=updated_at&order_direction=desc`)],
    ['list: brand', q('brand=1')],
    ['list: channel (two)', q('channel=1,2')],
    ['list: status', q(`status=${tk.status_id}`)],
    ['list: priority', q(`priority=${tk.priority_id}`)],
    // A tag on a tenth of the tickets (100,000 at 1M) and one on a thousandth: counted by migration 081's counters, paged by 082's list.
    ['list: tag, a tenth', q(`tag=${t.tagIds[0]}`)],
    ['list: tag, a tenth + status', q(`tag=${t.tagIds[0]}&status=${tk.status_id}`)],
    ['list: tag, a tenth, updated_at desc', q(`tag=${t.tagIds[0]}&order_column=updated_at&order_direction=desc`)],
    [`list: tag, a tenth, start=${Math.floor(TICKETS / 40).toLocaleString('en-GB')}`, q(`tag=${t.tagIds[0]}&start=${Math.floor(TICKETS / 40)}`)],
    [`list: tag, a tenth, start=${Math.floor(TICKETS / 40).toLocaleString('en-GB')}, updated_at desc`, q(`tag=${t.tagIds[0]}&start=${Math.floor(TICKETS / 40)}&order_column=updated_at&order_direction=desc`)],
    ['list: tag, a thousandth', q(`tag=${t.tagIds[1]}`)],
    ['list: tag, a tenth, subject asc', q(`tag=${t.tagIds[0]}&order_column=subject&order_direction=asc`)],
    ['list: tag, a tenth, number desc', q(`tag=${t.tagIds[0]}&order_column=number&order_direction=desc`)],
    ['list: tag, a tenth + priority, subject asc', q(`tag=${t.tagIds[0]}&priority=${tk.priority_id}&order_column=subject&order_direction=asc`)],
    // After an id (keyset paging): the tag's list from that ticket on, in the order's index (as the first page).
    ['list: tag, a tenth, after_id, subject asc', q(`tag=${t.tagIds[0]}&after_id=${tk.id}&order_column=subject&order_direction=asc`)],
    // Beside another counted filter: the tag's list walked, each ticket tested (or the filter's index when it holds fewer).
    ['list: tag, a tenth + priority, updated_at desc', q(`tag=${t.tagIds[0]}&priority=${tk.priority_id}&order_column=updated_at&order_direction=desc`)],
    ['list: tag, a tenth + department, a small one', q(`tag=${t.tagIds[0]}&department=${t.smallDepartmentId}`)],
    ['list: two tags (a tenth, a thousandth)', q(`tag=${t.tagIds[0]},${t.tagIds[1]}`)],
    ['list: user', q(`user=${tk.user_id}`)],
    // A customer with a sixteenth of the tickets (62,500 at 1M): its count from its counters (migration 035).
    ['list: user, a busy customer', q(`user=${t.busyCustomerId}`)],
    ['list: user, a busy customer + status', q(`user=${t.busyCustomerId}&status=${tk.status_id}`)],
    // Beside another counted filter than a status: the customer's counters (migration 092: before,
    // a COUNT of the customer's index entries).
    ['list: user, a busy customer + priority', q(`user=${t.busyCustomerId}&priority=${tk.priority_id}`)],
    [`list: user, a busy customer, start=${Math.floor(TICKETS / 32).toLocaleString('en-GB')}`, q(`user=${t.busyCustomerId}&start=${Math.floor(TICKETS / 32)}`)],
    // By latest activity: a range of the customer's updated_at index (migration 085).
    ['list: user, a busy customer, updated_at desc', q(`user=${t.busyCustomerId}&order_column=updated_at&order_direction=desc`)],
    // Several customers: their counters summed, the page a merge of each one's range in id order.
    ['list: user, a busy customer and another', q(`user=${t.busyCustomerId},${tk.user_id}`)],
    ['list: organisation', q(`organisation=${t.organisationId}`)],
    // The busy customer's organisation (62,500 tickets at 1M): counted from its own counters
    // (migration 091), the page a range of its own index (migration 086).
    ['list: organisation, a large one', q(`organisation=${t.largeOrganisationId}`)],
    ['list: organisation, a large one + status', q(`organisation=${t.largeOrganisationId}&status=${tk.status_id}`)],
    ['list: organisation, a large one, after_id', q(`organisation=${t.largeOrganisationId}&after_id=${tk.id}`)],
    // By latest activity: a range of its updated_at index (migration 086).
    ['list: organisation, a large one, updated_at desc', q(`organisation=${t.largeOrganisationId}&order_column=updated_at&order_direction=desc`)],
    // Beside a priority: counted from its counters (migration 091: before, a COUNT of its index
    // entries), the page a walk of its range (migration 086), past the middle from the far end.
    ['list: organisation, a large one + priority', q(`organisation=${t.largeOrganisationId}&priority=${tk.priority_id}`)],
    ['list: organisation, a large one + priority, updated_at desc', q(`organisation=${t.largeOrganisationId}&priority=${tk.priority_id}&order_column=updated_at&order_direction=desc`)],
    [`list: organisation, a large one + priority, start=${Math.floor(TICKETS / 100).toLocaleString('en-GB')}`, q(`organisation=${t.largeOrganisationId}&priority=${tk.priority_id}&start=${Math.floor(TICKETS / 100)}`)],
    // By subject: a range of their subject indexes (migration 090). The busy customer's tickets
    // cluster in a few subject families: before, the walk of the subject index passed 187,500
    // entries for the first page ascending.
    ['list: organisation, a large one, subject asc', q(`organisation=${t.largeOrganisationId}&order_column=subject`)],
    ['list: user, a busy customer, subject asc', q(`user=${t.busyCustomerId}&order_column=subject`)],
    // With a status: the status tested on each entry's ticket along the customer's range.
    ['list: user, a busy customer + status, subject asc', q(`user=${t.busyCustomerId}&status=${tk.status_id}&order_column=subject`)],
    // An order of no range of theirs: a walk of the order's index, bounded, else the sort
    // (listPage's walkedPage). It tests the customer on the index's entries (migration 087),
    // reading no ticket, so its bound is 8 entries per match.
    ['list: user, a busy customer, created_at asc', q(`user=${t.busyCustomerId}&order_column=created_at`)],
    // More people than a merge of their ranges takes: a range of its own index (migration 086).
    ['list: organisation of 1,000 people', q(`organisation=${t.manyPeopleOrganisationId}`)],
    ['list: organisation of 1,000 people, updated_at desc', q(`organisation=${t.manyPeopleOrganisationId}&order_column=updated_at&order_direction=desc`)],
    ['list: organisation of 1,000 people + department', q(`organisation=${t.manyPeopleOrganisationId}&department=${tk.department_id}`)],
    // The customer order: positioned by the members' counters, then their ranges of the customer index.
    ['list: organisation of 1,000 people, user_id desc', q(`organisation=${t.manyPeopleOrganisationId}&order_column=user_id&order_direction=desc`)],
    ['list: organisation of 1,000 people, user_id asc, start=20,000', q(`organisation=${t.manyPeopleOrganisationId}&order_column=user_id&start=20000`)],
    // Beside one tag or one operator: a range of the link list's index of them (migrations 083, 094), its count too.
    ['list: organisation, a large one + tag, a tenth', q(`organisation=${t.largeOrganisationId}&tag=${t.tagIds[0]}`)],
    ['list: user, a busy customer + assigned', q(`user=${t.busyCustomerId}&assigned=${t.operatorId}`)],
    ['list: watching', q('watching=1')],
    // An operator with the tickets of two busy years (about 20,000 of them at 1M): "my tickets".
    ['list: assigned (an operator)', q(`assigned=${t.operatorId}`)],
    ['list: assigned + status', q(`assigned=${t.operatorId}&status=${tk.status_id}`)],
    ['list: assigned, updated_at desc', q(`assigned=${t.operatorId}&order_column=updated_at&order_direction=desc`)],
    ['list: assigned, due_time asc', q(`assigned=${t.operatorId}&order_column=due_time&order_direction=asc`)],
    ['list: assigned + status, last_reply_time asc', q(`assigned=${t.operatorId}&status=${tk.status_id}&order_column=last_reply_time&order_direction=asc`)],
    ['list: assigned, subject asc', q(`assigned=${t.operatorId}&order_column=subject&order_direction=asc`)],
    ['list: assigned + status, user_id desc', q(`assigned=${t.operatorId}&status=${tk.status_id}&order_column=user_id&order_direction=desc`)],
    ['list: assigned, after_id, updated_at desc', q(`assigned=${t.operatorId}&after_id=${tk.id}&order_column=updated_at&order_direction=desc`)],
    ['list: assigned=-1 (unassigned)', q('assigned=-1')],
    ['list: user_email', q('user_email=nobody%40example.com')],
    // A customer's tickets by their address: their counters, the page a range of their index.
    ['list: user_email, a busy customer', q(`user_email=${encodeURIComponent(BUSY_CUSTOMER_EMAIL)}`)],
    ['list: user_email, a busy customer, updated_at desc', q(`user_email=${encodeURIComponent(BUSY_CUSTOMER_EMAIL)}&order_column=updated_at&order_direction=desc`)],
    ['list: user_email, a busy customer + priority', q(`user_email=${encodeURIComponent(BUSY_CUSTOMER_EMAIL)}&priority=${tk.priority_id}`)],
    ['list: internal', q('internal=1')],
    ['list: locked', q('locked=0')],
    // A saved filter (a status) alone, and run as an operator who sees the small department only.
    ['list: saved filter (a status)', q(`filter=${t.savedFilterId}`)],
    ['list: saved filter, as the small department\'s operator', q(`filter=${t.savedFilterId}&filter_operator=${t.departmentOperatorId}`)],
    ['list: saved filter, as the large department\'s operator', q(`filter=${t.savedFilterId}&filter_operator=${t.largeDepartmentOperatorId}`)],
    // A custom field: an option of half the tickets and of a thousandth, read from the option
    // index (migration 071) and counted by its counters (072); a part of one ticket's order
    // reference, from its grams (070).
    ['list: customfield, an option of half', q(`customfield[${t.productFieldId}]=${t.productOptionIds[0]}`)],
    ['list: customfield, an option of a thousandth', q(`customfield[${t.productFieldId}]=${t.productOptionIds[3]}`)],
    ['list: saved filter (an option of half)', q(`filter=${t.optionFilterId}`)],
    ['list: customfield, an option + status', q(`customfield[${t.productFieldId}]=${t.productOptionIds[0]}&status=${tk.status_id}`)],
    // Beside another counted filter (migration 076: the option's counters keep the list counters' columns).
    ['list: customfield, an option + department', q(`customfield[${t.productFieldId}]=${t.productOptionIds[0]}&department=${tk.department_id}`)],
    ['list: customfield, an option + priority + unassigned', q(`customfield[${t.productFieldId}]=${t.productOptionIds[0]}&priority=${tk.priority_id}&assigned=-1`)],
    ['list: saved filter (an option of half), as the large department\'s operator', q(`filter=${t.optionFilterId}&filter_operator=${t.largeDepartmentOperatorId}`)],
    ['list: customfield, a text contains', q(`customfield[${t.referenceFieldId}]=${orderReference(Math.ceil(TICKETS / 2))}`)],
    ['list: number', q(`number=B${Math.ceil(TICKETS / 2)}`)],
    ['list: created_at_min (a day)', q(`created_at_min=${Math.floor(Date.now() / 1000) - 86400}`)],
    // A whole UTC day and a year, in the id order and the column's own (issue 18: the page and the day counters).
    ['list: created_at, a day', q(dayRange('created_at', 1))],
    ['list: created_at, a day, created_at desc', q(`${dayRange('created_at', 1)}&order_column=created_at&order_direction=desc`)],
    ['list: created_at, a year', q(dayRange('created_at', 365))],
    ['list: created_at, a year, created_at asc', q(`${dayRange('created_at', 365)}&order_column=created_at`)],
    ['list: created_at, a year + status', q(`${dayRange('created_at', 365)}&status=${tk.status_id}`)],
    // With each other kind of counted filter (migration 028): an id, a department's tree, a flag's complement.
    ['list: created_at, a year + priority', q(`${dayRange('created_at', 365)}&priority=${tk.priority_id}`)],
    ['list: created_at, a year + department', q(`${dayRange('created_at', 365)}&department=${tk.department_id}`)],
    // A status and one other counted filter beside the dates: summed from the day counters per status (migration 054).
    ['list: created_at, a year + department + status', q(`${dayRange('created_at', 365)}&department=${tk.department_id}&status=${tk.status_id}`)],
    // A pair of counted filters: summed from the pairs' day counters (migration 055); the page the optimiser's (no index merge intersections).
    ['list: created_at, a year + department + priority, updated_at desc', q(`${dayRange('created_at', 365)}&department=${tk.department_id}&priority=${tk.priority_id}&order_column=updated_at&order_direction=desc`)],
    ['list: updated_at, a year + unassigned', q(`${dayRange('updated_at', 365)}&assigned=-1`)],
    ['list: updated_at_max, a year ago (stale)', q(`updated_at_max=${Math.floor(Date.now() / 1000) - 365 * 86400}`)],
    ['list: status + priority', q(`status=${tk.status_id}&priority=${tk.priority_id}`)],
    ['list: department + status', q(`department=${tk.department_id}&status=${tk.status_id}`)],
    ['list: user + status', q(`user=${tk.user_id}&status=${tk.status_id}`)],
    ['list: status, updated_at desc', q(`status=${tk.status_id}&order_column=updated_at&order_direction=desc`)],
    ...(all ? SORTABLE : SOME_ORDERS).flatMap((c) => (['asc', 'desc'] as const).map((d): [string, string] => [`list: order ${c} ${d}`, q(`order_column=${c}&order_direction=${d}`)])),
    [`list: start=${deep.toLocaleString('en-GB')}`, q(`start=${deep}`)],
    [`list: start=${deep.toLocaleString('en-GB')}, updated_at desc`, q(`start=${deep}&order_column=updated_at&order_direction=desc`)],
    // A value order (each value's tickets in id order): positioned by the value's day counters.
    [`list: start=${deep.toLocaleString('en-GB')}, priority_id desc`, q(`start=${deep}&order_column=priority_id&order_direction=desc`)],
    [`list: status, start=${Math.floor(deep / 5).toLocaleString('en-GB')}, department_id asc`, q(`status=${tk.status_id}&start=${Math.floor(deep / 5)}&order_column=department_id`)],
    [`list: department, start=${Math.floor(deep / 5).toLocaleString('en-GB')}, priority_id desc`, q(`department=${tk.department_id}&start=${Math.floor(deep / 5)}&order_column=priority_id&order_direction=desc`)],
    // A time order (migration 061): its times' days, or its NULL block (the data set has no due
    // times) by created_at day and id bound.
    [`list: start=${deep.toLocaleString('en-GB')}, last_reply_time asc`, q(`start=${deep}&order_column=last_reply_time`)],
    [`list: status, start=${Math.floor(deep / 5).toLocaleString('en-GB')}, due_time desc`, q(`status=${tk.status_id}&start=${Math.floor(deep / 5)}&order_column=due_time&order_direction=desc`)],
    // One other counted filter in a time order, with a status or not: positioned by its rows of those orders (migration 093).
    [`list: priority, start=${Math.floor(deep / 5).toLocaleString('en-GB')}, due_time desc`, q(`priority=${tk.priority_id}&start=${Math.floor(deep / 5)}&order_column=due_time&order_direction=desc`)],
    [`list: status + department, start=${Math.floor(deep / 10).toLocaleString('en-GB')}, last_reply_time asc`, q(`status=${tk.status_id}&department=${tk.department_id}&start=${Math.floor(deep / 10)}&order_column=last_reply_time`)],
    // A pair of them (two of priority, department, brand and channel), with a status or not:
    // positioned by the time orders' rows of the pair, differences from created_at's (migration 095).
    [`list: priority + channel, start=${Math.floor(deep / 20).toLocaleString('en-GB')}, last_reply_time desc`, q(`priority=${tk.priority_id}&channel=1&start=${Math.floor(deep / 20)}&order_column=last_reply_time&order_direction=desc`)],
    [`list: status + priority + department, start=${Math.floor(deep / 20).toLocaleString('en-GB')}, due_time asc`, q(`status=${tk.status_id}&priority=${tk.priority_id}&department=${tk.department_id}&start=${Math.floor(deep / 20)}&order_column=due_time`)],
    // The customer order (migration 062): from the customer's first ticket.
    [`list: start=${deep.toLocaleString('en-GB')}, user_id desc`, q(`start=${deep}&order_column=user_id&order_direction=desc`)],
    // Beside one other counted filter: positioned by its rows of the customer order (migration 093).
    [`list: department, start=${Math.floor(deep / 5).toLocaleString('en-GB')}, user_id asc`, q(`department=${tk.department_id}&start=${Math.floor(deep / 5)}&order_column=user_id`)],
    // A string order (migration 063): from the mark of the stretch the page starts in.
    [`list: start=${deep.toLocaleString('en-GB')}, subject asc`, q(`start=${deep}&order_column=subject`)],
    [`list: status, start=${Math.floor(deep / 5).toLocaleString('en-GB')}, number desc`, q(`status=${tk.status_id}&start=${Math.floor(deep / 5)}&order_column=number&order_direction=desc`)],
    // Another counted filter (a priority, department, brand, channel or flag) in a string order,
    // with a status or not: from the mark of the stretch, by the stretches' filter rows (migration 089).
    [`list: priority, start=${Math.floor(deep / 5).toLocaleString('en-GB')}, subject asc`, q(`priority=${tk.priority_id}&start=${Math.floor(deep / 5)}&order_column=subject`)],
    [`list: priority, start=${Math.floor(deep / 5).toLocaleString('en-GB')}, number desc`, q(`priority=${tk.priority_id}&start=${Math.floor(deep / 5)}&order_column=number&order_direction=desc`)],
    [`list: status + department, start=${Math.floor(deep / 5).toLocaleString('en-GB')}, subject desc`, q(`status=${tk.status_id}&department=${tk.department_id}&start=${Math.floor(deep / 5)}&order_column=subject&order_direction=desc`)],
    [`list: unassigned, start=${Math.floor(deep / 5).toLocaleString('en-GB')}, number asc`, q(`assigned=-1&start=${Math.floor(deep / 5)}&order_column=number`)],
    [`list: status, start=${Math.floor(deep / 5).toLocaleString('en-GB')}`, q(`status=${tk.status_id}&start=${Math.floor(deep / 5)}`)],
    [`list: priority, start=${Math.floor(deep / 5).toLocaleString('en-GB')}, updated_at asc`, q(`priority=${tk.priority_id}&start=${Math.floor(deep / 5)}&order_column=updated_at`)],
    [`list: department, start=${Math.floor(deep / 5).toLocaleString('en-GB')}`, q(`department=${tk.department_id}&start=${Math.floor(deep / 5)}`)],
    // A flag's complement (the unassigned): positioned by all tickets' day counters less the flag's.
    [`list: unassigned, start=${Math.floor(deep / 5).toLocaleString('en-GB')}, updated_at desc`, q(`assigned=-1&start=${Math.floor(deep / 5)}&order_column=updated_at&order_direction=desc`)],
    // A status and one other counted filter: positioned by the day counters per status (migration 054).
    [`list: department + status, start=${Math.floor(deep / 5).toLocaleString('en-GB')}`, q(`department=${tk.department_id}&status=${tk.status_id}&start=${Math.floor(deep / 5)}`)],
    // A pair of counted filters: positioned by the pairs' day counters (migration 055).
    [`list: department + priority, start=${Math.floor(deep / 5).toLocaleString('en-GB')}`, q(`department=${tk.department_id}&priority=${tk.priority_id}&start=${Math.floor(deep / 5)}`)],
    // Three counted filters and a status (no day counters position them): a walk of the wide
    // order's index, which tests them all on its entries (boundedWalks.perCovered), or the status's
    // tickets sorted, whichever reads less.
    [`list: status + priority + channel + unlocked, start=${Math.floor(TICKETS / 125).toLocaleString('en-GB')}, updated_at desc`,
      q(`status=${tk.status_id}&priority=${tk.priority_id}&channel=1&locked=0&start=${Math.floor(TICKETS / 125)}&order_column=updated_at&order_direction=desc`)],
    ['list: after_id (keyset), updated_at desc', q(`after_id=${tk.id}&order_column=updated_at&order_direction=desc`)],
    // Field terms only, a name among them: the list of those filters (src/ticket/tickets/search/asListFilters.ts).
    ['search: status: and a department by name (field terms only)', q(`search=${encodeURIComponent(`status:${tk.status_id} department:"${SMALL_DEPARTMENT}"`)}`)],
    ['search: one match', q(`search=${encodeURIComponent(t.selectiveSearchTerm)}`)],
    ['search: three common words', q(`search=${encodeURIComponent(t.searchTerm)}`)],
    ['search: one common word', q(`search=${encodeURIComponent(t.commonSearchTerm)}`)],
    // Issue 21's parsed search: two field terms and a common word.
    ['search: status: department: and a common word', q(`search=${encodeURIComponent(`status:${tk.status_id} department:${tk.department_id} ${t.commonSearchTerm}`)}`)],
  ];
}

/**
 * `<column>_min` and `_max` of `days` whole UTC days ending 100 days ago at midnight (a day of the
 * data set's two years, whatever moment the benchmark runs in the day).
 */
function dayRange(column: string, days: number): string {
  const end = (Math.floor(Date.now() / 1000 / 86400) - 100) * 86400;
  return `${column}_min=${end - days * 86400}&${column}_max=${end - 1}`;
}

/** BENCH_SKIP: comma-separated substrings of list titles left out (a common word's search at 1M takes minutes with InnoDB). */
export const skipped = (title: string) => (process.env.BENCH_SKIP ?? '').split(',').some((s) => s && title.includes(s));

/** Whether a plan reads more than its page: a full scan, or a sort of more rows than the page. */
function verdict(plan: Array<Record<string, any>>, reach: number): string {
  const problems: string[] = [];
  const bounded: string[] = [];
  for (const p of plan) {
    const rows = Number(p.rows ?? 0);
    const derivedPage = String(p.table).startsWith('<derived');
    // A materialised subquery (`<subquery<n>>`) is read whole by design: its rows are the set built.
    const materialised = String(p.table).startsWith('<subquery');
    if (p.type === 'ALL' && !derivedPage && !materialised && rows > 1000) problems.push(`full scan of ${p.table} (${rows} rows)`);
    // A sort chosen by cost (src/ticket/tickets/listPage.ts) reads at most √(reach × total) entries.
    if (/filesort/.test(String(p.Extra)) && rows > reach && !derivedPage) {
      if (rows <= Math.sqrt(reach * TICKETS)) bounded.push(`sort of ~${rows} rows (${p.table}) ≤ √(reach × total)`);
      else problems.push(`sort of ~${rows} rows (${p.table})`);
    }
  }
  if (problems.length) return `!! ${problems.join('; ')}`;
  return bounded.length ? `ok: ${bounded.join('; ')}` : 'ok';
}

/**
 * EXPLAIN of the statements each ticket list runs on tickets (the count and the page), captured
 * from the app itself so what is explained is exactly what it runs, with a verdict: `ok`, or what
 * reads more than the page (a full scan, a sort of more rows than the page). Returns the table and
 * the number of lists whose plan is not ok.
 */
export async function explainTicketLists(get: (path: string) => Promise<{ count?: number }>, t: Target): Promise<{ text: string; failing: number; counts: Map<string, number> }> {
  const rows: string[][] = [];
  const counts = new Map<string, number>();
  let failing = 0;
  for (const [title, path] of ticketListPaths(t).filter(([x]) => !skipped(x))) {
    const { statements, result } = await capture(() => get(path));
    counts.set(path, Number(result.count ?? 0));
    const params = new URL(`http://x${path}`).searchParams;
    const reach = Number(params.get('start') ?? 1) - 1 + Number(params.get('limit') ?? 50);
    // With SEARCH_ENGINE=mroonga a search's count, page ids and page rows are one statement of Groonga selects;
    // with SEARCH_ENGINE=groonga the server answers the count and ids, and the page's rows are read by id.
    // (A deep page's position is read with the counters, in a statement that starts with its WITH.)
    // The link lists' pages and counts (migrations 029-084), the customers' ranges and their
    // counters are the list's own statements too; the presenter's (tags, custom fields, people) are not.
    const main = statements.filter((s) => /^(SELECT|WITH)/i.test(withoutSwitches(s.sql))
      && /FROM (`tickets`|tickets (t WHERE t\.id IN|(c )?FORCE)|ticket_list_counts|ticket_day_counts|ticket_(tag|assignee)_list|ticket_(user|assignee|tag|option|organisation)_counts)|mroonga_command\(/.test(s.sql));
    let bad = false;
    for (const [n, st] of main.entries()) {
      const plan = await sequelize().query<Record<string, any>>(explainOf(st.sql), { replacements: st.params, type: QueryTypes.SELECT });
      const access = plan.map((p) => `${p.table}:${p.type}${p.key ? `(${p.key})` : ''}`).join(' ');
      const v = verdict(plan, reach);
      bad ||= v.startsWith('!!');
      const kind = /mroonga_command\(/.test(st.sql) ? 'count + page (Groonga)'
        : /operator_departments/.test(st.sql) ? "operator's reach (counters)"
        : /ticket_list_counts/.test(st.sql) ? (/ticket_day_/.test(st.sql) ? 'count + position (counters)' : 'count (counters)')
        : /ticket_day_counts/.test(st.sql) ? 'count (day counters)'
        : /FROM ticket_(user|assignee|tag|option|organisation)_counts/.test(st.sql) ? 'count (counters)'
        : /count\(/i.test(st.sql) ? 'count' : 'page';
      rows.push([n === 0 ? title : '', n === 0 ? String(result.count ?? '-') : '', kind, access, v]);
    }
    if (bad) failing++;
  }
  const text = table(['ticket list', 'count', 'statement', 'access per table (type(key))', 'verdict'], rows, [false, true, false, false, false]);
  return { text, failing, counts };
}
