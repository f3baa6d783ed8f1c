import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { config } from '../src/config';
import { sequelize } from '../src/db/sequelize';
import { searchEngine } from '../src/ticket/tickets/search/engine';
import { syncGroongaIndex } from '../src/ticket/tickets/search/groongaIndex';
import { groongaCommand } from '../src/ticket/tickets/search/groongaServer';

/**
 * With SEARCH_ENGINE=groonga, the benchmark's search server: the one at SEARCH_GROONGA_URL when
 * it answers, else a `groonga` it starts there (Debian's groonga-bin), its database kept in the
 * temporary directory per data set (`helpdesk-bench-groonga/<database>`), so that the next run
 * only catches up (fillSearchServer). Before the database's preparation, which makes the server's
 * tables. Returns what stops the server it started (nothing for one it found, or for another engine).
 */
export async function startSearchServer(log: (line: string) => void): Promise<() => Promise<void>> {
  const cfg = config();
  if (cfg.searchEngine !== 'groonga') return async () => {};
  const url = new URL(cfg.searchGroongaUrl);
  const answers = () => groongaCommand('status', {}).then(() => true, () => false);
  if (await answers()) return async () => {};
  const dir = join(tmpdir(), 'helpdesk-bench-groonga', cfg.database.name);
  mkdirSync(dir, { recursive: true });
  const db = join(dir, 'db');
  log(`  starting groonga on ${url.host} (database ${dir})...`);
  const gqtp = url.protocol === 'gqtp:';
  const child = spawn('groonga', [
    '-s', '--protocol', gqtp ? 'gqtp' : 'http', '--bind-address', url.hostname, '--port', url.port || (gqtp ? '10043' : '10041'), ...(existsSync(db) ? [] : ['-n']), db,
  ], { stdio: 'ignore' });
  // Not left behind by a run that fails.
  process.once('exit', () => child.kill('SIGTERM'));
  const started = Date.now();
  while (!(await answers())) {
    if (child.exitCode !== null) throw new Error(`groonga exited at start (code ${child.exitCode}): is groonga-bin installed, and ${url.host} free?`);
    if (Date.now() - started > 30_000) throw new Error(`groonga did not answer on ${url.host}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
}

/**
 * Brings the search engine's index up to date with the data set, as `npm start` does before the
 * web process starts: Mroonga's tables and triggers (filled from the tickets on a data set's first
 * run with it), the search server's documents (the first run fills them from the tickets' change
 * stream, as a new server is filled: docs/performance.md, Search). Without it `bench/latency.ts`
 * with SEARCH_ENGINE=mroonga on a data set seeded with another engine answered its searches 500.
 */
export async function fillSearchServer(log: (line: string) => void): Promise<void> {
  sequelize(); // the models, which the index's reads use
  await searchEngine().prepare();
  if (config().searchEngine !== 'groonga') return;
  const started = Date.now();
  const { changes } = await syncGroongaIndex();
  log(`  search server: ${changes.toLocaleString('en-GB')} ticket changes written in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
