process.env.PROCESS_NAME ??= 'cli';
import { runCommand } from './command';
import { ATTACHMENTS_USAGE, attachmentsCommand } from './attachmentsCommand';

runCommand(['move', 'sweep'], ATTACHMENTS_USAGE, attachmentsCommand);
