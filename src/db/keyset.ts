import { sqlCondition, trusted, type BoundCondition } from './sql';

/**
 * Keyset paging: the rows after an anchor row in a list's order, `(column, id)` past the anchor's
 * own, an index range (the same cost on the last page as on the first, where `start` walks every
 * row before it). NULLs come first ascending and last descending, as MariaDB orders them.
 * `alias` and `column` are quoted identifiers from the models and the list's checked sortable
 * columns, never a request's; `idColumn`, the table's column of the id (a ticket's link list
 * names it `ticket_id`), `column` when the order is the id's.
 */
export function keysetCondition(alias: string, column: string, desc: boolean, value: unknown, id: number, idColumn = 'id'): BoundCondition {
  const idCol = trusted(`${alias}.\`${idColumn}\``);
  if (column === `\`${idColumn}\``) return desc ? sqlCondition`${idCol} < ${id}` : sqlCondition`${idCol} > ${id}`;
  const c = trusted(`${alias}.${column}`);
  if (value === null) {
    return desc ? sqlCondition`${c} IS NULL AND ${idCol} < ${id}` : sqlCondition`(${c} IS NULL AND ${idCol} > ${id}) OR ${c} IS NOT NULL`;
  }
  return desc
    ? sqlCondition`${c} < ${value} OR (${c} = ${value} AND ${idCol} < ${id}) OR ${c} IS NULL`
    : sqlCondition`${c} > ${value} OR (${c} = ${value} AND ${idCol} > ${id})`;
}
