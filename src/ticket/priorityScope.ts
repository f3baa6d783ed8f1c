import { sqlCondition } from '../db/sql';

/**
 * The priorities offered in a department: those linked to it, and those linked to no department
 * (offered everywhere, the way an empty `groups` means every operator group elsewhere in the spec).
 */
export const inDepartment = (departmentId: number) => sqlCondition`id IN (SELECT priority_id FROM priority_departments WHERE department_id = ${departmentId})
  OR id NOT IN (SELECT priority_id FROM priority_departments)`;
