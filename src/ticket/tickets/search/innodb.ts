import { sqlCondition } from '../../../db/sql';
import type { SearchEngine } from './engine';

/**
 * The default engine: InnoDB's FULLTEXT indexes of `tickets.subject` and `ticket_messages.text`
 * (migration 011). One derived set of ticket ids, each part an index look-up (the number's unique
 * key, the two FULLTEXT indexes), joined to tickets by primary key: the cost follows the matches,
 * not the table (the same parts joined with OR make MariaDB scan every ticket). Every word must be
 * in the subject or in one message. A common word is slow at scale: InnoDB returns all its
 * matches before anything else runs (docs/performance.md, Search).
 */
export const innodbSearch: SearchEngine = {
  name: 'innodb',
  textCondition: (term, booleanQuery) => sqlCondition`id IN (SELECT id FROM (
      SELECT COALESCE(merged_into_id, id) AS id FROM tickets WHERE number = ${term}
      UNION SELECT COALESCE(merged_into_id, id) FROM tickets WHERE MATCH (subject) AGAINST (${booleanQuery} IN BOOLEAN MODE)
      UNION SELECT ticket_id FROM ticket_messages WHERE is_draft = 0 AND MATCH (text) AGAINST (${booleanQuery} IN BOOLEAN MODE)
    ) AS matches)`,
  // Nothing of its own to make (migration 011). A Mroonga index present is left alone: another
  // process (a server, a tool) may be searching it right now, and its triggers keep it current
  // for a switch back (docs/performance.md, Search, removing it).
  prepare: async () => {},
};
