// `./env` must stay the first import (see run.ts).
import { TICKETS } from './env';
import { execute, select } from '../src/db/select';
import { sequelize } from '../src/db/sequelize';
import { searchEngine } from '../src/ticket/tickets/search/engine';
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
 * Mroonga's tables are not transactional: the rollback leaves the index as the inserts left it,
 * so the ticket's document is written again at the end (its first message's text changed and put
 * back: the triggers write the thread anew each time).
 */
const MESSAGES = Number(process.env.THREAD_MESSAGES ?? 2500);
const STEP = Number(process.env.THREAD_STEP ?? 250);

async function main() {
  wire();
  if (process.env.SEARCH_ENGINE === 'mroonga') await searchEngine().prepare();
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const [{ id: ticketId }] = await select<{ id: number }>('SELECT id FROM tickets WHERE deleted_at IS NULL AND merged_into_id IS NULL ORDER BY id DESC LIMIT 1');
  const [first] = await select<{ id: number; text: string }>('SELECT id, text FROM ticket_messages WHERE ticket_id = ? AND is_draft = 0 ORDER BY id LIMIT 1', [ticketId]);
  const columns = (await select<{ c: string }>(
    "SELECT COLUMN_NAME AS c FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'ticket_messages' AND COLUMN_NAME NOT IN ('id', 'text') ORDER BY ORDINAL_POSITION",
  )).map((r) => `\`${r.c}\``).join(', ');
  log(`thread writes: ${TICKETS.toLocaleString('en-GB')} tickets, ticket ${ticketId}, ${MESSAGES} messages of ${first.text.length + 6} bytes or so; triggers: ${(await mroongaTriggers()).length ? 'the Mroonga index\'s and the rest' : 'without the Mroonga index'}`);
  log('messages before   µs a message');
  const t = await sequelize().transaction();
  try {
    for (let done = 0; done < MESSAGES; done += STEP) {
      const started = process.hrtime.bigint();
      for (let i = 0; i < STEP; i++) {
        await execute(`INSERT INTO ticket_messages (text, ${columns}) SELECT CONCAT(text, ' ', ?), ${columns} FROM ticket_messages WHERE id = ?`, [done + i, first.id], t);
      }
      log(`${String(done).padStart(15)}  ${(Number(process.hrtime.bigint() - started) / 1000 / STEP).toFixed(0).padStart(14)}`);
    }
  } finally {
    await t.rollback();
    // The ticket's document as its messages are (see above).
    await execute('UPDATE ticket_messages SET text = CONCAT(text, \'.\') WHERE id = ?', [first.id], undefined);
    await execute('UPDATE ticket_messages SET text = ? WHERE id = ?', [first.text, first.id], undefined);
  }
  await sequelize().close();
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
