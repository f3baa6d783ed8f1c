// Imported first by the directory-store tests, before any module reads the configuration: new
// attachments go to files under a private temporary directory (removed by the test file, after
// its files are moved back into the database: later files of the jest worker share the database,
// and a row must not name a file that is gone).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const attachmentsDir = mkdtempSync(join(tmpdir(), 'helpdesk-attachments-'));
process.env.ATTACHMENTS_STORAGE = 'directory';
process.env.ATTACHMENTS_DIR = attachmentsDir;
