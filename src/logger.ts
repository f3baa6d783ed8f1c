import pino from 'pino';
import { config, type Config } from './config';
import { exitOnStartupError } from './lib/exitOnStartupError';
import { prettyStream, resolveLogFormat } from './logFormat';

/** Paths that may hold secrets anywhere in a logged object: never written to a log. */
export const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  '*.password',
  '*.smtp_password',
  '*.token',
  '*.simpleauth_key',
  'password',
  'smtp_password',
  'token',
  // OAuth2 (src/oauth): the API's fields and the token endpoint's.
  '*.oauth_client_secret',
  '*.oauth_refresh_token',
  '*.oauth_access_token',
  '*.accessToken',
  '*.access_token',
  '*.refresh_token',
  '*.client_secret',
  'oauth_client_secret',
  'oauth_refresh_token',
  'accessToken',
];

// Every process imports the logger before its main() reads the configuration: a bad variable is
// reported here, in one line, instead of as a stack trace from a module being loaded.
let cfg: Config;
try {
  cfg = config();
} catch (err) {
  exitOnStartupError(err);
}

/**
 * Long-running processes log to stdout; command-line tools (PROCESS_NAME=cli) log to stderr, so
 * that their stdout holds only their output (`token create` prints the token alone). JSON lines,
 * or pretty ones on a terminal (LOG_FORMAT, see logFormat.ts).
 */
const toStderr = process.env.PROCESS_NAME === 'cli';
const out = toStderr ? process.stderr : process.stdout;
const pretty = resolveLogFormat(cfg.logFormat, out.isTTY === true) === 'pretty';

export const logger = pino({
  level: cfg.env === 'test' && !process.env.LOG_LEVEL ? 'silent' : cfg.logLevel,
  redact: { paths: REDACT, censor: '[redacted]' },
  base: { pid: process.pid, proc: process.env.PROCESS_NAME ?? 'web' },
  // Written synchronously, one write(2) a line, as Node writes to a pipe itself. pino's default
  // writes through the libuv threadpool: while that is busy (DNS look-ups, files, crypto), a
  // process that exits right after logging wrote its last lines out of order (test/cli/start.test.ts).
}, pretty ? prettyStream(out) : pino.destination({ dest: toStderr ? 2 : 1, sync: true }));
