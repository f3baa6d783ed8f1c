import { readFileSync } from 'node:fs';
import { rootCertificates, type ConnectionOptions } from 'node:tls';
import { config } from '../config';
import type { IncomingDecision } from '../db/models/IncomingMail';

/** What one poll of a mailbox did: mails fetched, and how many of each decision. */
export interface PollSummary {
  fetched: number;
  decisions: Partial<Record<IncomingDecision, number>>;
}

export function tally(summary: PollSummary, decision: IncomingDecision): void {
  summary.fetched++;
  summary.decisions[decision] = (summary.decisions[decision] ?? 0) + 1;
}

let extraCa: string | null | undefined;

/**
 * TLS for mailbox connections: certificates are always verified, against Node's roots plus the
 * PEM file MAILBOX_TLS_CA_FILE names (a company CA, or a test server's self-signed certificate).
 */
export function tlsOptions(): ConnectionOptions {
  const file = config().mailbox.tlsCaFile;
  if (extraCa === undefined) extraCa = file ? readFileSync(file, 'utf8') : null;
  return extraCa ? { ca: [...rootCertificates, extraCa] } : {};
}

/** Forgets the CA file read (tests that change it). */
export const resetTlsOptions = () => {
  extraCa = undefined;
};
