process.env.PROCESS_NAME ??= 'cli';
import { runCommand } from './command';
import { BAN_USAGE, banCommand } from './banCommand';

runCommand(['list', 'delete'], BAN_USAGE, banCommand);
