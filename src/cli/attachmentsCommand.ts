import { config } from '../config';
import { humanSize } from '../storage/uploads';
import { moveAttachments, sweepDirectory, type MoveReport } from '../storage/moveAttachments';
import { readOptions, type Io } from './args';

export const ATTACHMENTS_USAGE = `usage:
  npm run --silent attachments -- move --to directory|database [--batch 100]
      moves the files of existing uploads into that store (ATTACHMENTS_DIR must be set either way),
      each verified by its SHA-256 where it lands; stop it at any time and run it again to go on.
      Set ATTACHMENTS_STORAGE to the same store first, so new files go there too.
  npm run --silent attachments -- sweep [--older-than 3600]
      removes files under ATTACHMENTS_DIR that no upload points at (and temporary files),
      when older than that many seconds
`;

function positive(text: string | undefined, fallback: number, max: number): number | null {
  if (text === undefined) return fallback;
  return /^\d{1,9}$/.test(text) && Number(text) >= 1 && Number(text) <= max ? Number(text) : null;
}

const line = (r: MoveReport) => `${r.moved}/${r.total} moved (${humanSize(r.bytes)})${r.failed ? `, ${r.failed} failed` : ''}\n`;

/** `attachments move|sweep`; returns the exit code (1 when some file could not be moved). The database must be prepared. */
export async function attachmentsCommand(argv: string[], io: Io): Promise<number> {
  const [command, ...rest] = argv;
  const options = command === 'move' || command === 'sweep'
    ? readOptions(rest, command === 'move' ? ['--to', '--batch'] : ['--older-than'], io, `attachments ${command}`, ATTACHMENTS_USAGE)
    : {};
  if (!options) return 2;
  if ((command === 'move' || command === 'sweep') && !config().attachmentStorage.dir) {
    io.err('ATTACHMENTS_DIR must be set (the directory store is one end of every move, and what the sweep cleans).\n');
    return 2;
  }
  if (command === 'move') {
    const to = options['--to'];
    const store = to === 'dir' || to === 'directory' ? 'directory' : to === 'database' || to === 'db' ? 'database' : null;
    const batch = positive(options['--batch'], 100, 10_000);
    if (!store || batch === null) {
      io.err(ATTACHMENTS_USAGE);
      return 2;
    }
    const report = await moveAttachments(store, {
      batch,
      progress: (r) => io.out(line(r)),
      failure: (hash, reason) => io.err(`${hash}: ${reason}\n`),
    });
    io.out(`Done: ${line(report)}`);
    return report.failed ? 1 : 0;
  }
  if (command === 'sweep') {
    const grace = positive(options['--older-than'], 3600, 365 * 86400);
    if (grace === null) {
      io.err(ATTACHMENTS_USAGE);
      return 2;
    }
    const report = await sweepDirectory(grace);
    io.out(`Removed ${report.removed} file${report.removed === 1 ? '' : 's'}, kept ${report.kept}.\n`);
    return 0;
  }
  io.err(ATTACHMENTS_USAGE);
  return 2;
}
