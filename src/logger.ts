import pino from 'pino';
import { config } from './config';

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
];

/**
 * Long-running processes log JSON lines to stdout; command-line tools (PROCESS_NAME=cli) log to
 * stderr, so that their stdout holds only their output (`token create` prints the token alone).
 */
export const logger = pino({
  level: config().env === 'test' && !process.env.LOG_LEVEL ? 'silent' : config().logLevel,
  redact: { paths: REDACT, censor: '[redacted]' },
  base: { pid: process.pid, proc: process.env.PROCESS_NAME ?? 'web' },
}, process.env.PROCESS_NAME === 'cli' ? pino.destination(2) : undefined);
