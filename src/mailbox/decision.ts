import type { IncomingDecision } from '../db/models/IncomingMail';

/** What the ingestion decided for a mail (./ingest.ts), as its ledger line records it. */
export interface Decision {
  decision: IncomingDecision;
  reason: string | null;
  ticketId?: number | null;
  messageId?: number | null;
  /** A ticket or a reply was written for the mail. */
  imported?: boolean;
  /** Refused before it was read: its sender gets a non-delivery notice (./refusal.ts). */
  answer?: boolean;
}

/**
 * Whether the mail's line keeps the import key it claimed: every decision taken for good. A copy
 * of the mail delivered again, or read again from its mailbox, is then a duplicate, not refused
 * (and its sender told) a second time. An `error` gives the key up: the mail may be imported once
 * what failed is mended.
 */
export const keepsImportKey = (d: Decision): boolean => d.decision !== 'error' && d.decision !== 'duplicate';

export const decided = (decision: IncomingDecision, reason: string | null, extra: Partial<Decision> = {}): Decision => ({ decision, reason, ...extra });

/**
 * A mail refused by a rule of the ticket service (a ValidationError) once its import was under
 * way: its transaction is rolled back (what the import wrote goes with it) and the refusal is
 * recorded in a transaction of its own, as a savepoint would have left it.
 */
export class RejectedImport extends Error {
  constructor(readonly decision: Decision) {
    super(decision.reason ?? 'rejected');
  }
}
