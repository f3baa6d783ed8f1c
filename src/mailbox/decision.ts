import type { IncomingDecision } from '../db/models/IncomingMail';

/** What the ingestion decided for a mail (./ingest.ts), as its ledger line records it. */
export interface Decision {
  decision: IncomingDecision;
  reason: string | null;
  ticketId?: number | null;
  messageId?: number | null;
  /** The key that marks the mail imported. */
  imported?: boolean;
  /** Refused before it was read: its sender gets a non-delivery notice (./refusal.ts). */
  answer?: boolean;
}

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
