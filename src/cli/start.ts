process.env.PROCESS_NAME ??= 'start';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { config } from '../config';
import { sequelize } from '../db/sequelize';
import { exitOnStartupError } from './exitOnStartupError';
import { ensureFirstToken, prepareDatabase } from './setup';

const root = join(__dirname, '..', '..', '..');

/** The Procfile's processes: `name: command` per line. */
export function readProcfile(path = join(root, 'Procfile')): Array<{ name: string; command: string }> {
  return readFileSync(path, 'utf8').split('\n')
    .map((l) => /^([A-Za-z0-9_-]+):\s*(.+)$/.exec(l.trim()))
    .filter((m): m is RegExpExecArray => !!m)
    .map((m) => ({ name: m[1], command: m[2] }));
}

/**
 * `npm start`: prepares the database (create, migrate, seed, first token), then runs every
 * process of the Procfile on this machine, like a Procfile runner. One process ending takes the
 * others down, so a half-running system never goes unnoticed.
 */
async function main() {
  config();
  await prepareDatabase();
  const token = await ensureFirstToken();
  await sequelize().close();
  if (token) {
    process.stdout.write(`\nA first API token was created. It is shown only this once; keep it:\n\n  ${token}\n\n`
      + `Try: curl -u '${token}:x' http://127.0.0.1:${config().port}/api/core/brand\n\n`);
  }

  const children = new Map<string, ChildProcess>();
  let stopping = false;
  const stopAll = (signal: NodeJS.Signals) => {
    stopping = true;
    for (const child of children.values()) child.kill(signal);
  };
  for (const { name, command } of readProcfile()) {
    const child = spawn(command, { cwd: root, shell: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PROCESS_NAME: name } });
    children.set(name, child);
    const prefix = (chunk: Buffer) => chunk.toString().split('\n').filter(Boolean).map((l) => `${name.padEnd(17)}| ${l}\n`).join('');
    child.stdout!.on('data', (c: Buffer) => process.stdout.write(prefix(c)));
    child.stderr!.on('data', (c: Buffer) => process.stderr.write(prefix(c)));
    child.on('exit', (code, signal) => {
      children.delete(name);
      if (!stopping) {
        process.stderr.write(`${name} exited (${signal ?? code}); stopping the others\n`);
        process.exitCode = 1;
        stopAll('SIGTERM');
      }
      if (!children.size) process.exit();
    });
  }
  process.on('SIGINT', () => stopAll('SIGTERM'));
  process.on('SIGTERM', () => stopAll('SIGTERM'));
}

main().catch(exitOnStartupError);
