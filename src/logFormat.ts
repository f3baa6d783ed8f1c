/**
 * Log lines for people: `12:00:01.234 INFO  web | web process listening port=3000`. pino writes
 * JSON; on a terminal each line is rewritten here (a small stand-in for pino-pretty, which the
 * project does not depend on). Files, pipes and log collectors keep the JSON.
 */
export type LogFormat = 'json' | 'pretty';

/** `auto` is pretty on a terminal, JSON anywhere else. */
export function resolveLogFormat(setting: 'auto' | LogFormat, isTTY: boolean): LogFormat {
  return setting === 'auto' ? (isTTY ? 'pretty' : 'json') : setting;
}

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** Shown in the line's head, or not at all. */
const HEAD = new Set(['level', 'time', 'pid', 'hostname', 'proc', 'msg', 'err']);

const value = (v: unknown): string => (typeof v === 'string' ? (/^[^\s"=]+$/.test(v) ? v : JSON.stringify(v)) : JSON.stringify(v));

/** One pino JSON line as a pretty line (and an error's stack below it); anything else as it is. */
export function prettyLine(line: string): string {
  let e: Record<string, any>;
  try {
    e = JSON.parse(line);
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  const d = new Date(e.time ?? Date.now());
  const time = `${d.toTimeString().slice(0, 8)}.${String(d.getMilliseconds()).padStart(3, '0')}`;
  const rest = { ...e };
  let msg = String(e.msg ?? '');
  // The request lines (http/requestLog.ts): `GET /api/core/brand 200 12ms`.
  if (e.req?.method && e.res?.statusCode !== undefined) {
    msg = `${e.req.method} ${e.req.url} ${e.res.statusCode} ${e.responseTime ?? '?'}ms`;
    delete rest.req;
    delete rest.res;
    delete rest.responseTime;
  }
  const pairs = Object.entries(rest).filter(([k]) => !HEAD.has(k)).map(([k, v]) => `${k}=${value(v)}`);
  if (e.err) pairs.push(`err=${value(e.err.message ?? e.err)}`);
  const head = `${time} ${(LEVELS[e.level] ?? String(e.level)).padEnd(5)} ${e.proc ?? '-'} | ${msg}`;
  const stack = typeof e.err?.stack === 'string' ? `\n${e.err.stack.split('\n').map((l: string) => `    ${l.trim()}`).join('\n')}` : '';
  return `${[head, ...pairs].join(' ')}${stack}\n`;
}

/** A pino destination that writes pretty lines to `out`. */
export const prettyStream = (out: NodeJS.WritableStream) => ({ write: (line: string) => void out.write(prettyLine(line)) });
