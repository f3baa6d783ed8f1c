import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../lib/projectRoot';

/** The Procfile's processes: `name: command` per line. */
export function readProcfile(path = join(projectRoot(), 'Procfile')): Array<{ name: string; command: string }> {
  return readFileSync(path, 'utf8').split('\n')
    .map((l) => /^([A-Za-z0-9_-]+):\s*(.+)$/.exec(l.trim()))
    .filter((m): m is RegExpExecArray => !!m)
    .map((m) => ({ name: m[1], command: m[2] }));
}

/** The options the Procfile gives `node` for a process (`web: node --flag dist/src/server.js` gives `['--flag']`). */
export function nodeOptionsOf(name: string, path?: string): string[] {
  const entry = readProcfile(path).find((p) => p.name === name);
  if (!entry) throw new Error(`The Procfile has no ${name} process`);
  const [cmd, ...args] = entry.command.split(/\s+/);
  const script = args.findIndex((a) => !a.startsWith('-'));
  if (cmd !== 'node' || script < 0) throw new Error(`The Procfile's ${name} process is not \`node [options] <script>\`: ${entry.command}`);
  return args.slice(0, script);
}

/**
 * How `npm start` hands a Procfile line to the shell. A simple command (no operator, redirection,
 * subshell, command substitution or leading `NAME=value`) runs with `exec`, so the program
 * replaces the shell: the exit code and signal `npm start` reports are the program's own (a
 * graceful stop is code 0, not the shell's death by SIGTERM). Any other line runs as written.
 */
export const shellCommand = (command: string): string => (/[;&|<>()`\n]|^\s*[A-Za-z_][A-Za-z0-9_]*=/.test(command) ? command : `exec ${command}`);
