import { select } from '../../db/select';
import { joined, sqlCondition, sqlFragment, trusted, type BoundCondition } from '../../db/sql';
import { everyDepartment } from './departmentsBelow';

/**
 * The tickets an operator sees: those of the operator's departments (directly, or through an
 * operator group of the department), those assigned to the operator, the operator's own internal
 * tickets; every ticket for a member of an administrator group. A saved filter run as an operator
 * (the list's `filter_operator`) and the filters' `ticket_count` are narrowed by it.
 *
 * One statement first reads the operator's departments, whether the operator is an administrator,
 * and from the list's counters how many listed tickets those three sources hold at most (`seen`,
 * migrations 018, 029 and 035) beside all listed tickets (`total`). The condition then takes one
 * of two forms:
 * - a twentieth of the listed tickets or fewer: the set of their ids, read through each source's
 *   own index and joined to the filter's matches (a semi-join the optimiser materialises): the
 *   count and the page read about the set. At a million tickets, a filter of a status: the
 *   operator of a department of 1,000, count 20 ms and page 10 ms (in the other form 550 ms and
 *   130 ms); an operator with 20,000 tickets assigned, 125 ms and 30 ms (670 ms and 22 ms; in
 *   `updated_at` order the set's page sorts the matches, 125 ms);
 * - more: a test of each ticket the filter's conditions read (the departments as ids, the
 *   assignments a subquery): the page walks the order until it holds a page, about
 *   reach × total / seen tickets, and the count reads every match of the filter's conditions. As
 *   a set, an operator of a department of 999,000 took 8 s for the page and the count (the
 *   optimiser tested each of the status's tickets against the set).
 *
 * Conditions the list's counters hold are counted apart instead (countedApart): the counters in
 * the operator's departments plus their own and assigned tickets outside them
 * (seenOutsideDepartments), the filters' ticket_count and the saved filter's list alike.
 */

/** A set of at most `1 / share` of the listed tickets: the set's form (each form's costs above; tests change it). */
export const visibleSet = { share: 20 };

interface ViewRow {
  administrator: number | null;
  departments: string | null;
  inDepartments: string | number;
  theirs: string | number;
  total: string | number;
}

/** The tickets of which the operator is the user, and those assigned to them: statements selecting their ids. */
const ownOrAssigned = (operatorId: number) => [
  sqlFragment`SELECT id FROM tickets WHERE user_id = ${operatorId}`,
  sqlFragment`SELECT ticket_id FROM ticket_assignees WHERE user_id = ${operatorId}`,
];

/** Tickets whose id is in the union of `sources`; the derived table keeps the UNION out of the IN: an IN over a UNION is never a semi-join. */
const inSet = (sources: BoundCondition[]) => sqlCondition`id IN (SELECT id FROM (${joined(sources, ' UNION ')}) AS seen)`;

/**
 * The tickets the operator sees outside their departments: their own and those assigned to them
 * there (the set of their ids, read through the user's and the assignees' indexes). With the
 * counters of their departments, a count of what they see (filter.ts, countTicketsMatchingMany).
 */
export function seenOutsideDepartments(view: OperatorView): BoundCondition {
  const set = inSet(ownOrAssigned(view.operatorId));
  return view.departments.length ? sqlCondition`${set} AND department_id NOT IN (${view.departments})` : set;
}

/**
 * The count of what the operator sees among tickets of counted filters (countedApart): the rows of
 * a table of counters by department (the list's, or an option's: migration 076) that `counters`
 * selects within the operator's departments, plus `outsideCount` of the tickets they see outside
 * them (seenOutsideDepartments), one expression.
 */
export function countWithinView(view: OperatorView, counters: DepartmentCounters, outsideCount: (outside: BoundCondition) => BoundCondition): BoundCondition {
  const inDepartments = view.departments.length
    ? sqlCondition`SELECT COALESCE(SUM(n), 0) FROM ${trusted(counters.table)} WHERE ${counters.where} AND department_id IN (${view.departments})`
    : sqlCondition`SELECT 0`;
  return sqlCondition`SELECT (${inDepartments}) + (${outsideCount(seenOutsideDepartments(view))})`;
}

/** Counters with a department column (the list's, an option's or a tag's: migrations 076, 081) and the condition on their rows. */
export interface DepartmentCounters { table: 'ticket_list_counts' | 'ticket_option_counts' | 'ticket_tag_counts'; where: BoundCondition }

/**
 * Whether a count of what the operator sees under counted filters may be the counters of their
 * departments plus a count of their own and assigned tickets outside them: while those are a
 * twentieth of the tickets or fewer (that count reads each of them).
 */
export const countedApart = (view: OperatorView): boolean => view.theirs * visibleSet.share <= view.total;

/**
 * Whether the list filters of a saved filter (conditions.ts, listFiltersOf) match only tickets the
 * operator sees: those assigned to the operator, or of which the operator is the user. Then what
 * the operator sees narrows nothing ("my tickets" counts from the assignee's counters).
 */
export const onlyTheirs = (view: OperatorView, filters: Record<string, unknown>): boolean =>
  filters.assigned === view.operatorId || filters.user === view.operatorId;

/** What an operator sees, read by operatorView. */
export interface OperatorView {
  operatorId: number;
  /** The operator's departments (directly or through a group). */
  departments: number[];
  /** Listed tickets of which the operator is the user or an assignee, at most (their counters). */
  theirs: number;
  /** Listed tickets in all. */
  total: number;
  /** The tickets the operator sees, as a condition on `tickets` (the forms above). */
  condition: BoundCondition;
}

/**
 * What `operatorId` sees (one statement): its `condition` on `tickets`; null: every ticket (an
 * administrator, or an operator of every department).
 */
export async function operatorView(operatorId: number): Promise<OperatorView | null> {
  const departments = `SELECT department_id FROM operator_departments WHERE user_id = :op
    UNION SELECT dg.department_id FROM department_groups dg JOIN user_groups ug ON ug.group_id = dg.group_id WHERE ug.user_id = :op`;
  const [r] = await select<ViewRow>(
    `SELECT
       (SELECT MAX(g.administrator) FROM user_groups ug JOIN \`groups\` g ON g.id = ug.group_id WHERE ug.user_id = :op) AS administrator,
       (SELECT GROUP_CONCAT(department_id) FROM (${departments}) d) AS departments,
       (SELECT COALESCE(SUM(n), 0) FROM ticket_list_counts WHERE state = 0 AND department_id IN (${departments})) AS inDepartments,
       (SELECT COALESCE(SUM(n), 0) FROM ticket_assignee_counts WHERE user_id = :op AND state = 0)
         + (SELECT COALESCE(SUM(n), 0) FROM ticket_user_counts WHERE user_id = :op AND state = 0) AS theirs,
       (SELECT COALESCE(SUM(n), 0) FROM ticket_list_counts WHERE state = 0) AS total`,
    { op: operatorId },
  );
  const ids = r.departments ? r.departments.split(',').map(Number) : [];
  if (Number(r.administrator) === 1 || (await everyDepartment(ids))) return null;
  const theirs = Number(r.theirs);
  const total = Number(r.total);
  const view = (condition: BoundCondition): OperatorView => ({ operatorId, departments: ids, theirs, total, condition });
  if ((Number(r.inDepartments) + theirs) * visibleSet.share <= total) {
    return view(inSet([...(ids.length ? [sqlFragment`SELECT id FROM tickets WHERE department_id IN (${ids})`] : []), ...ownOrAssigned(operatorId)]));
  }
  const own = sqlCondition`user_id = ${operatorId} OR id IN (SELECT ticket_id FROM ticket_assignees WHERE user_id = ${operatorId})`;
  return view(ids.length ? sqlCondition`department_id IN (${ids}) OR ${own}` : own);
}
