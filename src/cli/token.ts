process.env.PROCESS_NAME ??= 'cli';
import { runCommand } from './command';
import { TOKEN_USAGE, tokenCommand } from './tokenCommand';

runCommand(['create', 'list', 'revoke'], TOKEN_USAGE, tokenCommand);
