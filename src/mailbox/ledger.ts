import { Op, QueryTypes, type Transaction } from 'sequelize';
import { now } from '../db/entity';
import { IncomingMail } from '../db/models';
import type { IncomingDecision } from '../db/models/IncomingMail';
import { sequelize } from '../db/sequelize';

/**
 * The lines of the ingestion ledger (`incoming_mails`), written for many mails in one statement.
 * An import first claims its lines (`claimLines`: the import keys under their unique index, so a
 * second import of the same mail waits there, before it has done any work), then writes what was
 * decided into them (`settleLines`) in the same transaction.
 */
export interface LedgerLine {
  departmentEmailId: number | null;
  remoteUid: string | null;
  messageId: string | null;
  /** The key that marks the mail imported (unique), or null. */
  importKey: string | null;
  fromAddress: string | null;
  subject: string | null;
  decision: IncomingDecision;
  reason: string | null;
  ticketId: number | null;
  ticketMessageId: number | null;
  size: number;
}

const COLUMNS = 'department_email_id, remote_uid, message_id, import_key, from_address, subject, decision, reason, ticket_id, ticket_message_id, size, created_at, updated_at';

const values = (l: LedgerLine, at: number) => [
  l.departmentEmailId, l.remoteUid, l.messageId, l.importKey, l.fromAddress, l.subject, l.decision, l.reason, l.ticketId, l.ticketMessageId, l.size, at, at,
];

/** Inserts the lines (one statement) and returns their ids, in order. A key another import holds fails it (UniqueConstraintError). */
export async function claimLines(lines: LedgerLine[], t: Transaction): Promise<number[]> {
  if (!lines.length) return [];
  const at = now();
  // An array of arrays binds as `(…), (…)`: every value escaped by Sequelize, none in the SQL text.
  const rows = await sequelize().query<{ id: number }>(`INSERT INTO incoming_mails (${COLUMNS}) VALUES :rows RETURNING id`, {
    replacements: { rows: lines.map((l) => values(l, at)) }, transaction: t, type: QueryTypes.SELECT,
  });
  return rows.map((r) => r.id);
}

/**
 * Writes the decisions into lines claimed in `t` (one statement). In their order: a key given up
 * by an earlier line (a mail not imported) is free for a later line of the same mail.
 */
export async function settleLines(lines: Array<{ id: number; line: LedgerLine }>, t: Transaction): Promise<void> {
  if (!lines.length) return;
  const at = now();
  await sequelize().query(
    `INSERT INTO incoming_mails (id, ${COLUMNS}) VALUES :rows ON DUPLICATE KEY UPDATE import_key = VALUES(import_key), decision = VALUES(decision),
      reason = VALUES(reason), ticket_id = VALUES(ticket_id), ticket_message_id = VALUES(ticket_message_id), updated_at = VALUES(updated_at)`,
    { replacements: { rows: lines.map(({ id, line }) => [id, ...values(line, at)]) }, transaction: t, type: QueryTypes.INSERT },
  );
}

/**
 * Whether the mailbox is done with a mail so decided, and may delete it (`delete_downloaded`) or
 * flag it: every decision but `error` (an import that failed in a way no rule foresaw), which
 * leaves the mail in the mailbox for a person to look at. IMAP and POP3 alike.
 */
export const settled = (decision: IncomingDecision): boolean => decision !== 'error';

/**
 * Whether `delete_downloaded` may delete a settled mail so decided: not a person's mail refused by
 * a rule (`spam`, `rejected`: a spam rule, a locked ticket, over the size limit...), of which the
 * help desk keeps only the ledger's line. Such a mail stays in the mailbox, flagged \Seen, the one
 * copy a person can still find if the rule was wrong. Imported mails, duplicates, loops and
 * bounces (machine mail, which marks its delivery) are deleted.
 */
export const deletable = (decision: IncomingDecision): boolean => settled(decision) && decision !== 'spam' && decision !== 'rejected';

/** The decisions the ledger holds for these remote uids (IMAP `<uidvalidity>:<uid>`, POP3 UIDL) of a mailbox: the latest line of each. */
export async function decisionsOf(departmentEmailId: number, remoteUids: string[]): Promise<Map<string, IncomingDecision>> {
  const decisions = new Map<string, IncomingDecision>();
  for (let i = 0; i < remoteUids.length; i += 1000) {
    const rows = await IncomingMail.findAll({
      attributes: ['remote_uid', 'decision'], order: [['id', 'ASC']],
      where: { department_email_id: departmentEmailId, remote_uid: { [Op.in]: remoteUids.slice(i, i + 1000) } },
    });
    for (const r of rows) if (r.remote_uid) decisions.set(r.remote_uid, r.decision);
  }
  return decisions;
}
