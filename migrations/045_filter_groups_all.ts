import type { QueryInterface } from 'sequelize';

export const name = '045_filter_groups_all';

/**
 * A shared ticket filter without operator groups is seen by every operator (src/ticket/filter.ts,
 * as a canned response with none): a write that leaves it without groups stores `all_groups` 1.
 * Those saved before with `all_groups` 0 and no groups were seen by no operator; they get the same.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`UPDATE ticket_filters f SET f.all_groups = 1
    WHERE f.user_id IS NULL AND f.all_groups = 0 AND NOT EXISTS (SELECT 1 FROM ticket_filter_groups g WHERE g.filter_id = f.id)`);
}

/** Nothing to undo: 0 without groups meant no operator, which no write stores any more. */
export async function down(): Promise<void> {
  // A filter seen by every operator stays so.
}
