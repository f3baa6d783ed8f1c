import { config } from '../../../config';
import { select } from '../../../db/select';
import { Ticket } from '../../../db/models';
import { comparePositions, cursorExpired, decodeCursor, encodeCursor, readChanges, startAt, type ChangeSource, type Position } from '../../../export/changes';
import { housekeeping } from '../../../scheduler/task';
import { FILTER_COLUMNS } from './columns';
import { DOCUMENT, IS_LISTED } from './document';
import { filterWords } from './filterStart';
import { createGroongaTables, groongaCommand, groongaTables } from './groongaServer';

/**
 * The Groonga server's documents (SEARCH_ENGINE=groonga, ./groonga.ts), written from the tickets'
 * change stream (src/export/changes.ts: what the incremental export reads), from the position
 * kept on the server beside them. Each page of changes names tickets changed (a reply, an edit,
 * a merge and a trash each move the ticket's updated_at) or deleted (a tombstone); each is written
 * again as the database holds it now, with the ticket each one is merged into: a listed ticket's
 * document is loaded, any other's removed. Writing a document twice is harmless, so a run that
 * fails or overlaps another is caught up by the next; the stream never passes a change that is
 * not committed yet, nor one committed late. Without a position (a new server, or its tables made
 * again), or with one older than the tombstones' retention, every document is written afresh.
 */

/** Changes per page (each page: two reads of the stream, one of the documents, one load). */
const PAGE = 1000;
/** Keys per delete command. */
const DELETE_CHUNK = 200;

const TICKETS: ChangeSource = { resource: 'tickets', model: Ticket, attributes: ['id', 'updated_at'] };

async function savedPosition(): Promise<Position | null> {
  const [result] = await groongaCommand<Array<Array<unknown>>>('select', {
    table: groongaTables().state, filter: '_key == "tickets"', output_columns: 'value', cache: 'no',
  });
  const row = result.slice(2)[0] as [string] | undefined;
  return row ? decodeCursor(row[0], 'tickets') : null;
}

const savePosition = (p: Position) => groongaCommand('load', { table: groongaTables().state }, [{ _key: 'tickets', value: encodeCursor(p, 'tickets') }]);

/** Writes the documents of these tickets (and of those they are merged into) again, as the database holds them now. */
async function writeDocuments(ids: number[]): Promise<void> {
  const t = groongaTables();
  const docs = await select<Record<string, unknown>>(
    `SELECT t.id AS _key, ${DOCUMENT} AS body, ${FILTER_COLUMNS.map((c) => `t.${c}`).join(', ')}, ${filterWords('t')} AS filter_words
      FROM (SELECT id FROM tickets WHERE id IN (:ids) UNION SELECT merged_into_id FROM tickets WHERE id IN (:ids) AND merged_into_id IS NOT NULL) c
      STRAIGHT_JOIN tickets t ON t.id = c.id WHERE ${IS_LISTED}`,
    { ids },
  );
  if (docs.length) await groongaCommand('load', { table: t.documents }, docs.map((d) => ({ ...d, body: String(d.body ?? '') })));
  const listed = new Set(docs.map((d) => Number(d._key)));
  const gone = ids.filter((id) => !listed.has(id));
  for (let i = 0; i < gone.length; i += DELETE_CHUNK) {
    await groongaCommand('delete', { table: t.documents, filter: `in_values(_key, ${gone.slice(i, i + DELETE_CHUNK).join(', ')})` });
  }
}

/** What a run wrote, and up to which second (UNIX) the documents hold every change. */
export interface IndexRun { changes: number; completeUpTo: number }

/** Writes what changed since the saved position, to the end of the stream. */
async function catchUp(): Promise<IndexRun> {
  // A server started afresh while the processes run (its tables gone) is made and filled again.
  await createGroongaTables();
  let from = await savedPosition();
  if (!from || cursorExpired(from)) {
    // From the beginning: every document again (a deleted ticket's tombstone may be gone).
    await groongaCommand('truncate', { target_name: groongaTables().documents });
    from = startAt(0);
  }
  let changes = 0;
  for (;;) {
    const page = await readChanges(TICKETS, from, PAGE);
    const ids = [...new Set(page.items.map((i) => Number(i.row ? i.row.id : i.tombstone!.record_id)))];
    if (ids.length) await writeDocuments(ids);
    changes += page.items.length;
    // At the end, the position moves to the second the stream is complete up to, changes or not:
    // a help desk that changes nothing for longer than the tombstones are kept does not make
    // its position expire (and every document be written again).
    const done: Position = { t: page.endTime, k: 1, id: 0, s: from.s };
    const next = page.endOfStream && comparePositions(done, page.next) > 0 ? done : page.next;
    if (comparePositions(next, from) > 0) await savePosition(next);
    from = next;
    if (page.endOfStream) return { changes, completeUpTo: page.endTime };
  }
}

let running: Promise<IndexRun> | undefined;

/**
 * Brings the Groonga server's documents up to date with the tickets (one run at a time in a
 * process: a call during a run waits for it). Nothing to do with another engine.
 */
export async function syncGroongaIndex(): Promise<IndexRun> {
  if (config().searchEngine !== 'groonga') return { changes: 0, completeUpTo: 0 };
  running ??= catchUp().finally(() => { running = undefined; });
  return running;
}

export const searchIndexJob = housekeeping('search.index', {
  // Every second with the Groonga server (how far the search lags behind, beside EXPORT_SETTLE_SECONDS); hourly, doing nothing, otherwise.
  every: () => (config().searchEngine === 'groonga' ? 1000 : 3600_000),
  counted: 'changes',
  message: 'ticket changes written to the search server',
  work: async () => (await syncGroongaIndex()).changes,
});
