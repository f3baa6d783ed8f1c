import { QueryTypes, type QueryInterface } from 'sequelize';
import { up as recount049 } from '../../migrations/049_recount_ticket_lists';
import { COUNTED } from '../../migrations/025_ticket_list_assigned';
import { fillLinkLists } from '../../migrations/094_link_list_organisations';
import { fillOrganisationCounts } from '../../migrations/091_ticket_organisation_counts';
import * as m092 from '../../migrations/092_ticket_user_counts_by_filter';
import { sequelize } from '../../src/db/sequelize';

const rows = (sql: string) => sequelize().query<Record<string, unknown>>(sql, { type: QueryTypes.SELECT });

/**
 * Every ticket list counter row that counts something, and the operators' list copies and the
 * `assigned` flags, as the tables hold them: equal to what migration 049's recount rebuilds from
 * the tickets when the triggers kept them exact (recount).
 */
export const counterState = async () => ({
  list: await rows('SELECT * FROM ticket_list_counts WHERE n <> 0 ORDER BY state, status_id, priority_id, department_id, brand_id, channel_id, internal, locked, assigned, slot'),
  // The day counters per day and status (or value): a past day's rows may be folded into one
  // (migration 051), which a recount spreads over the slots again. (lo_id and hi_id are bounds
  // the triggers widen and never narrow: not compared.)
  days: await rows('SELECT col, state, day, status_id, SUM(n) AS n FROM ticket_day_counts GROUP BY col, state, day, status_id HAVING n <> 0 ORDER BY col, state, day, status_id'),
  dayFilters: await rows('SELECT col, state, dim, val, day, status_id, SUM(n) AS n FROM ticket_day_filter_counts GROUP BY col, state, dim, val, day, status_id HAVING n <> 0 ORDER BY col, state, dim, val, day, status_id'),
  assignees: await rows('SELECT * FROM ticket_assignee_counts WHERE n <> 0 ORDER BY user_id, state, status_id, slot'),
  users: await rows(`SELECT * FROM ticket_user_counts WHERE n <> 0 ORDER BY user_id, state, ${COUNTED.join(', ')}, slot`),
  organisations: await rows(`SELECT * FROM ticket_organisation_counts WHERE n <> 0 ORDER BY organisation_id, state, ${COUNTED.join(', ')}, slot`),
  assigneeList: await rows('SELECT * FROM ticket_assignee_list ORDER BY user_id, ticket_id'),
  assigned: await rows('SELECT id, assigned FROM tickets ORDER BY id'),
});

/**
 * The recount an upgrade runs: migration 049, then the later migrations' fills of what 049 fills
 * (083's columns of the link lists, which 049's fill of 031's leaves at their defaults on today's
 * schema, and 084's state of the trash in them), and 091's counters, which 049 did not know.
 * 049 fills the customers' counters as migration 035 made them: they are made so for it (092's
 * down), and widened and filled again after (092's up), as an upgrade runs them.
 */
export async function recount(qi: QueryInterface): Promise<void> {
  await m092.down(qi);
  await recount049(qi);
  await m092.up(qi);
  await fillLinkLists(qi);
  await fillOrganisationCounts(qi);
}
