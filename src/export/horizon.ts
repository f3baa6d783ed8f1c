import { config } from '../config';
import { now } from '../db/entity';
import { errnoOf } from '../db/errors';
import { select } from '../db/select';
import { logger } from '../logger';

/** MariaDB: the statement needs the PROCESS privilege (information_schema.INNODB_TRX). */
const ER_SPECIFIC_ACCESS_DENIED = 1227;
/** How long a database user without PROCESS is not asked again (it may be granted meanwhile). */
const UNPRIVILEGED_RETRY_MS = 60_000;
/** An open transaction older than this holding the export back is worth an operator's look. */
const STUCK_SECONDS = 60;
const WARN_EVERY_MS = 60_000;

let unprivilegedUntil = 0;
let warnedAt = -Infinity;

/**
 * How many seconds the oldest transaction still open on this database (any connection whose
 * database is this one, but the asking one) has been running, by MariaDB's clock; 0 when none is.
 * `trx_started` is in the server's system time zone whatever the session's, hence the conversion
 * of the current time to it. Read on the primary (the caller's concern: see readPage's caller).
 * null when the database user lacks the PROCESS privilege.
 */
async function oldestOpenTransaction(): Promise<{ age: number; thread: number } | null> {
  if (Date.now() < unprivilegedUntil) return null;
  try {
    const [oldest] = await select<{ age: number | null; thread: number }>(
      `SELECT TIMESTAMPDIFF(SECOND, t.trx_started, CONVERT_TZ(UTC_TIMESTAMP(), '+00:00', 'SYSTEM')) AS age, t.trx_mysql_thread_id AS thread
         FROM information_schema.INNODB_TRX t JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id
        WHERE p.DB = DATABASE() AND p.ID <> CONNECTION_ID()
        ORDER BY t.trx_started LIMIT 1`,
    );
    return { age: Math.max(0, Number(oldest?.age ?? 0)), thread: Number(oldest?.thread ?? 0) };
  } catch (err) {
    if (errnoOf(err) !== ER_SPECIFIC_ACCESS_DENIED) throw err;
    unprivilegedUntil = Date.now() + UNPRIVILEGED_RETRY_MS;
    logger.warn(
      'The database user lacks the PROCESS privilege: the export cannot see open transactions and holds back EXPORT_SETTLE_SECONDS only, so a write transaction open longer than that can be skipped by its readers (GRANT PROCESS ON *.* TO the user; docs/integrations.md)',
    );
    return null;
  }
}

/**
 * The export's horizon (UNIX seconds): the changes stamped up to it have all committed, so a
 * reader may pass them. A transaction stamps its rows with times from when it runs and commits
 * later; the horizon stays `EXPORT_SETTLE_SECONDS` before the start of the oldest transaction
 * still open on this database (and before now), so a reader reaches a second only once every
 * transaction that can have stamped it has ended, however long it runs. The settle seconds cover
 * what the open transactions cannot tell: a time taken an instant before its transaction began,
 * clocks of other hosts, whole seconds. Without the PROCESS privilege, now minus the settle
 * seconds only (the transactions must then be shorter than that).
 */
export async function exportHorizon(): Promise<number> {
  const at = now();
  const settle = config().exportSettleSeconds;
  const oldest = await oldestOpenTransaction();
  if (oldest && oldest.age > STUCK_SECONDS && Date.now() - warnedAt > WARN_EVERY_MS) {
    warnedAt = Date.now();
    logger.warn({ connectionId: oldest.thread, seconds: oldest.age }, 'A transaction open this long holds the export back until it ends (its readers see nothing newer): find the connection in SHOW PROCESSLIST');
  }
  return at - settle - (oldest?.age ?? 0);
}
