/**
 * The tickets merged into others, found from their targets (`s.merged_into_id = k.id`) by the
 * index on `merged_into_id`. The column is NULL for nearly every ticket, so its statistics give
 * each value half the table and the optimizer scans every ticket instead: in a locking read or an
 * INSERT ... SELECT that locked every ticket of the help desk (a person's delete held up every
 * ticket write until its commit). A join from the targets that uses it names it.
 */
export const BY_MERGE_TARGET = 'FORCE INDEX (tickets_merged_into_id)';
