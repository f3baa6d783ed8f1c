import { select } from '../../db/select';
import { joined, sqlCondition, sqlFragment, type BoundCondition } from '../../db/sql';
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
 */

/** A set of at most `1 / share` of the listed tickets: the set's form (each form's costs above; tests change it). */
export const visibleSet = { share: 20 };

interface OperatorView {
  administrator: number | null;
  departments: string | null;
  seen: string | number;
  total: string | number;
}

/**
 * What `operatorId` sees, as a condition on `tickets` (one statement); null: every ticket (an
 * administrator, or an operator of every department).
 */
export async function visibleToOperator(operatorId: number): Promise<BoundCondition | null> {
  const departments = `SELECT department_id FROM operator_departments WHERE user_id = :op
    UNION SELECT dg.department_id FROM department_groups dg JOIN user_groups ug ON ug.group_id = dg.group_id WHERE ug.user_id = :op`;
  const [r] = await select<OperatorView>(
    `SELECT
       (SELECT MAX(g.administrator) FROM user_groups ug JOIN \`groups\` g ON g.id = ug.group_id WHERE ug.user_id = :op) AS administrator,
       (SELECT GROUP_CONCAT(department_id) FROM (${departments}) d) AS departments,
       (SELECT COALESCE(SUM(n), 0) FROM ticket_list_counts WHERE state = 0 AND department_id IN (${departments}))
         + (SELECT COALESCE(SUM(n), 0) FROM ticket_assignee_counts WHERE user_id = :op AND state = 0)
         + (SELECT COALESCE(SUM(n), 0) FROM ticket_user_counts WHERE user_id = :op AND state = 0) AS seen,
       (SELECT COALESCE(SUM(n), 0) FROM ticket_list_counts WHERE state = 0) AS total`,
    { op: operatorId },
  );
  const ids = r.departments ? r.departments.split(',').map(Number) : [];
  if (Number(r.administrator) === 1 || (await everyDepartment(ids))) return null;
  const seen = Number(r.seen);
  const total = Number(r.total);
  if (seen * visibleSet.share <= total) {
    const sources = [
      ...(ids.length ? [sqlFragment`SELECT id FROM tickets WHERE department_id IN (${ids})`] : []),
      sqlFragment`SELECT id FROM tickets WHERE user_id = ${operatorId}`,
      sqlFragment`SELECT ticket_id FROM ticket_assignees WHERE user_id = ${operatorId}`,
    ];
    // The derived table keeps the UNION out of the IN: an IN over a UNION is never a semi-join.
    return sqlCondition`id IN (SELECT id FROM (${joined(sources, ' UNION ')}) AS seen)`;
  }
  const theirs = sqlCondition`user_id = ${operatorId} OR id IN (SELECT ticket_id FROM ticket_assignees WHERE user_id = ${operatorId})`;
  return ids.length ? sqlCondition`department_id IN (${ids}) OR ${theirs}` : theirs;
}
