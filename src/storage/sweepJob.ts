import { config } from '../config';
import { housekeeping } from '../scheduler/task';
import { sweepDirectory } from './moveAttachments';

/** Files younger than this are spared: they may belong to a transaction that has not committed yet (the CLI's default too). */
const GRACE_SECONDS = 3600;

/**
 * The directory store's files no upload names (an upload removed by uploadPrune.ts, a rolled-back
 * transaction's file, a crash's temporary file), removed once a day when a directory is
 * configured: what `npm run attachments -- sweep` does by hand. Returns how many were removed.
 */
export async function sweepAttachmentsDirectory(): Promise<number> {
  if (!config().attachmentStorage.dir) return 0;
  return (await sweepDirectory(GRACE_SECONDS)).removed;
}

export const directorySweepJob = housekeeping('attachments.sweep', {
  every: () => 86_400_000, counted: 'removed', message: 'files no upload names removed from the attachments directory', work: sweepAttachmentsDirectory,
});
