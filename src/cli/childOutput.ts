import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { prettyLine, type LogFormat } from '../logFormat';

/**
 * One line of a child process's output as `npm start` writes it. The children log JSON lines
 * (they carry the process's name in `proc`); a line that is not one (a start-up error on stderr)
 * becomes one, so that piped output is nothing but JSON lines, and a terminal gets every line in
 * the same pretty form, the process named once.
 */
export function childLine(line: string, from: { name: string; pid: number | undefined; stream: 'stdout' | 'stderr' }, format: LogFormat): string {
  let json = line;
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    entry = undefined;
  }
  if (!entry || typeof entry !== 'object' || Array.isArray(entry)) {
    json = JSON.stringify({ level: from.stream === 'stderr' ? 50 : 30, time: Date.now(), pid: from.pid, proc: from.name, msg: line });
  }
  return format === 'json' ? `${json}\n` : prettyLine(json);
}

/**
 * Writes a child's stream to `out` line by line (a line split across two reads stays one).
 * Resolves once the stream has ended and its last line is written: a child's last lines may still
 * be in the pipe when it has exited.
 */
export function relayLines(stream: Readable, out: NodeJS.WritableStream, from: { name: string; pid: number | undefined; stream: 'stdout' | 'stderr' }, format: LogFormat): Promise<void> {
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  lines.on('line', (line) => {
    if (line.trim()) out.write(childLine(line, from, format));
  });
  return new Promise((resolve) => lines.once('close', () => resolve()));
}
