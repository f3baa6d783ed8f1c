// `./env` must stay the first import (see run.ts).
import { TICKETS } from './env';
import { execute, select } from '../src/db/select';
import { sequelize } from '../src/db/sequelize';
import { closeQueues } from '../src/queue/producer';
import { Ticket } from '../src/db/models';
import { searchEngine } from '../src/ticket/tickets/search/engine';
import { mergeTickets } from '../src/ticket/tickets/service';
import { wire } from '../src/wiring';
import { mroongaTriggers } from './tickets';

/**
 * `node dist/bench/threadWrites.js` (BENCH_TICKETS picks the data set, seeded by `npm run bench`):
 * what a message's insert costs as its ticket's thread grows. THREAD_MESSAGES (default 2,500)
 * messages go into one ticket, one statement each, in one transaction that is rolled back; the
 * time per message is printed for each THREAD_STEP (default 250) of them. The messages copy one of
 * the ticket's own (its columns), each with the text of the data set's messages and a number.
 * With SEARCH_ENGINE=mroonga the index is prepared first (its triggers, as this build writes
 * them); otherwise the database's triggers are measured as they are, whichever wrote them.
 *
 * Then, in the same transaction, 20 edits of the thread's last message and 20 of its first are
 * timed, and the ticket before it gets MERGE_MESSAGES (default 1,000) messages
 * the same way and is merged into the first with the MERGE_SOURCES - 1 (default 0) tickets before
 * it, as they are (the service's merge, one call): the time the merge takes.
 *
 * Mroonga's tables are not transactional: the rollback leaves the index as the writes left it,
 * so every ticket's document is written again at the end (their first message's text changed and
 * put back: the triggers write the thread anew each time).
 */
const MESSAGES = Number(process.env.THREAD_MESSAGES ?? 2500);
const STEP = Number(process.env.THREAD_STEP ?? 250);
const MERGED = Number(process.env.MERGE_MESSAGES ?? 1000);
const SOURCES = Number(process.env.MERGE_SOURCES ?? 1);
const EDITS = 20;

async function main() {
  wire();
  if (process.env.SEARCH_ENGINE === 'mroonga') await searchEngine().prepare();
  const log = (line: string) => process.stdout.write(`${line}\n`);
  // Tickets of one brand, all listed and none internal (what a merge takes).
  const [{ id: ticketId, brand, internal }] = await select<{ id: number; brand: number; internal: number }>(
    'SELECT id, brand_id AS brand, internal FROM tickets WHERE deleted_at IS NULL AND merged_into_id IS NULL ORDER BY id DESC LIMIT 1',
  );
  const sourceIds = (await select<{ id: number }>(
    `SELECT id FROM tickets WHERE id < ? AND brand_id = ? AND internal = ? AND deleted_at IS NULL AND merged_into_id IS NULL ORDER BY id DESC LIMIT ${SOURCES}`,
    [ticketId, brand, internal],
  )).map((r) => r.id);
  const sourceId = sourceIds[0];
  const firstOf = async (id: number) => (await select<{ id: number; text: string }>('SELECT id, text FROM ticket_messages WHERE ticket_id = ? AND is_draft = 0 ORDER BY id LIMIT 1', [id]))[0];
  const [first, sourceFirst] = [await firstOf(ticketId), await firstOf(sourceId)];
  const columns = (await select<{ c: string }>(
    "SELECT COLUMN_NAME AS c FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'ticket_messages' AND COLUMN_NAME NOT IN ('id', 'text') ORDER BY ORDINAL_POSITION",
  )).map((r) => `\`${r.c}\``).join(', ');
  log(`thread writes: ${TICKETS.toLocaleString('en-GB')} tickets, ticket ${ticketId}, ${MESSAGES} messages of ${first.text.length + 6} bytes or so; triggers: ${(await mroongaTriggers()).length ? 'the Mroonga index\'s and the rest' : 'without the Mroonga index'}`);
  log('messages before   µs a message');
  const t = await sequelize().transaction();
  const copy = (of: { id: number }, n: number) => execute(`INSERT INTO ticket_messages (text, ${columns}) SELECT CONCAT(text, ' ', ?), ${columns} FROM ticket_messages WHERE id = ?`, [n, of.id], t);
  try {
    for (let done = 0; done < MESSAGES; done += STEP) {
      const started = process.hrtime.bigint();
      for (let i = 0; i < STEP; i++) await copy(first, done + i);
      log(`${String(done).padStart(15)}  ${(Number(process.hrtime.bigint() - started) / 1000 / STEP).toFixed(0).padStart(14)}`);
    }
    // An edit of the thread's last message, then of its first (within the first piece: the whole thread).
    const [{ last }] = await select<{ last: number }>('SELECT MAX(id) AS last FROM ticket_messages WHERE ticket_id = ?', [ticketId], { transaction: t });
    for (const [which, id] of [['last', last], ['first', first.id]] as const) {
      const started = process.hrtime.bigint();
      for (let i = 0; i < EDITS; i++) await execute('UPDATE ticket_messages SET text = CONCAT(text, \' edited\') WHERE id = ?', [id], t);
      log(`an edit of the ${which} message: ${(Number(process.hrtime.bigint() - started) / 1000 / EDITS).toFixed(0)} µs`);
    }
    for (let i = 0; i < MERGED; i++) await copy(sourceFirst, i);
    const target = (await Ticket.findByPk(ticketId, { transaction: t, lock: t.LOCK.UPDATE }))!;
    const started = process.hrtime.bigint();
    await mergeTickets(target, sourceIds, t);
    log(`merge: ticket ${sourceId}'s ${MERGED + 1} messages or more${sourceIds.length > 1 ? ` and ${sourceIds.length - 1} tickets more` : ''} into ticket ${ticketId}'s ${MESSAGES + 1} or more: ${(Number(process.hrtime.bigint() - started) / 1e6).toFixed(0)} ms`);
  } finally {
    await t.rollback();
    // Every ticket's document as its messages are (see above).
    for (const m of [first, ...(await Promise.all(sourceIds.map(firstOf))).filter(Boolean)]) {
      await execute('UPDATE ticket_messages SET text = CONCAT(text, \'.\') WHERE id = ?', [m.id], undefined);
      await execute('UPDATE ticket_messages SET text = ? WHERE id = ?', [m.text, m.id], undefined);
    }
  }
  await Promise.allSettled([closeQueues(), sequelize().close()]);
}

main().then(() => process.exit(0), (err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
