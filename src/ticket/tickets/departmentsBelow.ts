import { select } from '../../db/select';
import { cachedValue, configVersion } from '../configCache';
import type { DepartmentTrees } from './conditions';

/**
 * A department and every department below it, as ids: the ticket list's `department` filter and a
 * saved filter's `department` condition (conditions.ts).
 *
 * The departments' tree is configuration, kept per process under the config version (which a
 * change of a department bumps): a list reads it from there, not in its statements. As a recursive
 * subquery in the statement (`department_id IN (WITH RECURSIVE tree ...)`) the optimiser could
 * not tell how many tickets it matches, and walked the primary key testing every ticket's
 * department for the page: 240-360 ms at a million tickets for a department of five of them. With
 * the ids written in, it reads the department's own index, as it does for a priority.
 */

/** What no department's id is: the filter of departments that do not exist matches no ticket. */
const NO_DEPARTMENT = 0;

interface Tree {
  exists: Set<number>;
  /** The departments right below each (by parent id). */
  below: Map<number, number[]>;
}

async function tree(): Promise<Tree> {
  return cachedValue('department-tree', await configVersion(), async (transaction) => {
    const rows = await select<{ id: number; parent_id: number | null }>('SELECT id, parent_id FROM departments ORDER BY id', [], { transaction });
    const below = new Map<number, number[]>();
    for (const { id, parent_id: parent } of rows) {
      if (parent === null) continue;
      const list = below.get(parent) ?? [];
      list.push(id);
      below.set(parent, list);
    }
    return { exists: new Set(rows.map((r) => r.id)), below };
  });
}

/**
 * The ids of `roots` that exist and of every department below them, in ascending order; [0] (no
 * department's) when there are none, so that the condition stays a list of ids.
 */
export async function departmentsBelow(roots: readonly number[]): Promise<number[]> {
  const { exists, below } = await tree();
  const found = new Set<number>();
  const queue = roots.filter((id) => exists.has(id));
  // A parent loop (written around the API) ends here as the recursive subquery's UNION ended it.
  while (queue.length) {
    const id = queue.pop()!;
    if (found.has(id)) continue;
    found.add(id);
    queue.push(...(below.get(id) ?? []));
  }
  return found.size ? [...found].sort((a, b) => a - b) : [NO_DEPARTMENT];
}

/** Whether `ids` hold every department there is (a ticket's department is one of them: a foreign key). */
export async function everyDepartment(ids: readonly number[]): Promise<boolean> {
  const { exists } = await tree();
  const given = new Set(ids);
  return [...exists].every((id) => given.has(id));
}

/** The departments below each department that saved filters' conditions name (conditions.ts, conditionSql). */
export async function departmentTrees(conditions: ReadonlyArray<{ item: string; value: string | null }>): Promise<DepartmentTrees> {
  const roots = [...new Set(conditions.filter((c) => c.item === 'department').map((c) => Number(c.value)))];
  return new Map(await Promise.all(roots.map(async (id) => [id, await departmentsBelow([id])] as const)));
}
