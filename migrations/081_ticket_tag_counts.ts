import type { QueryInterface } from 'sequelize';
import { createTriggers, dropTriggers, type TriggerSql } from './triggers';
import { countLinks, linkRow, linkedFillSql, linkedTableSql, linkedTriggerSql, type LinkedCounts } from './072_ticket_option_counts';
import { WIDE } from './076_ticket_option_counts_by_filter';

export const name = '081_ticket_tag_counts';

/**
 * One tag's tickets at a million tickets: `tag=<id>` (alone, or with `status`, `department`,
 * `priority`...: "open billing tickets", a team's queue by label) COUNTed the tag's links, reading
 * each ticket's row for its state and filters (a tag on a tenth of a million tickets: 100,000 of
 * them, on every page).
 *
 * `ticket_tag_counts`: per tag, state (listed, trashed), the columns the list's own counters keep
 * (migration 025's: status, priority, department, brand, channel, internal, locked, assigned) and
 * slot (ticket id MOD 8), the number of tickets with the tag, merged ones not counted: the
 * counters of an option of a ticket field (migrations 072 and 076), over `ticket_tag_links`. A
 * list of one tag and any of those filters sums the tag's rows that match them
 * (src/ticket/tickets/listPage.ts). Kept by triggers:
 * - on `ticket_tag_links`: a tag added to or taken from a ticket (or a link moved) counts for or
 *   against its ticket's state, columns and slot;
 * - on `tickets`: a change of state, merge or one of those columns moves each of the ticket's tags
 *   from the old row to the new; BEFORE a ticket's delete, its tags leave (InnoDB's cascade to
 *   the links runs no trigger);
 * - on `ticket_tags`: a tag's delete cascades to its links, and its rows go with it.
 *
 * Write cost: a tag added or removed writes one row; a change of those columns, trash or merge of
 * a tagged ticket two per tag; of an untagged ticket, a look-up of its links (none).
 */

export const TAG_COUNTS: LinkedCounts = {
  table: 'ticket_tag_counts', keys: [['tag_id', 'INT UNSIGNED']], links: 'ticket_tag_links', owner: 'ticket_id',
  names: { links: 'ticket_tag_links', tickets: 'tag' }, ticketDelete: 'BEFORE',
};

const TRIGGER_SQL: TriggerSql = {
  ...linkedTriggerSql(TAG_COUNTS, WIDE),
  // The app adds and removes links; a link changed in place (by hand) moves between rows too.
  ticket_tag_links_counts_update: `AFTER UPDATE ON ticket_tag_links FOR EACH ROW
    IF NEW.ticket_id <> OLD.ticket_id OR NEW.tag_id <> OLD.tag_id THEN
      ${countLinks(TAG_COUNTS, WIDE, linkRow(TAG_COUNTS, 'OLD'), 't', -1)};
      ${countLinks(TAG_COUNTS, WIDE, linkRow(TAG_COUNTS, 'NEW'), 't', 1)};
    END IF`,
  ticket_tags_counts_delete: 'AFTER DELETE ON ticket_tags FOR EACH ROW DELETE FROM ticket_tag_counts WHERE tag_id = OLD.id',
};

/** The triggers that keep the counts (the benchmark drops them for its bulk load, then fills the counts). */
export const createTagCountTriggers = (q: QueryInterface): Promise<void> => createTriggers(q, TRIGGER_SQL);

export const dropTagCountTriggers = (q: QueryInterface): Promise<void> => dropTriggers(q, TRIGGER_SQL);

/** The counts from the links themselves (after the triggers: nothing else writes while migrations run). */
export async function fillTagCounts(q: QueryInterface): Promise<void> {
  await q.sequelize.query('DELETE FROM ticket_tag_counts');
  await q.sequelize.query(linkedFillSql(TAG_COUNTS, WIDE));
}

export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(linkedTableSql(TAG_COUNTS, WIDE));
  await createTagCountTriggers(q);
  await fillTagCounts(q);
}

export async function down(q: QueryInterface): Promise<void> {
  await dropTagCountTriggers(q);
  await q.dropTable('ticket_tag_counts');
}
