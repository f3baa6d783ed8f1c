import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeOptionsOf, readProcfile, shellCommand } from '../../src/cli/procfile';

const dir = mkdtempSync(join(tmpdir(), 'helpdesk-procfile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function procfile(text: string): string {
  const path = join(dir, `Procfile-${Math.random().toString(36).slice(2)}`);
  writeFileSync(path, text);
  return path;
}

describe('the Procfile', () => {
  it('is read as name: command lines; the node options of a process are those before its script', () => {
    const path = procfile('web: node --max-old-space-size=64 --no-warnings dist/src/server.js --port 1\n\n# a note\nworker: node dist/w.js\nshell: sh run.sh\n');
    expect(readProcfile(path).map((p) => p.name)).toEqual(['web', 'worker', 'shell']);
    expect(nodeOptionsOf('web', path)).toEqual(['--max-old-space-size=64', '--no-warnings']);
    expect(nodeOptionsOf('worker', path)).toEqual([]);
    expect(() => nodeOptionsOf('shell', path)).toThrow('is not `node [options] <script>`');
    expect(() => nodeOptionsOf('mailer', path)).toThrow('The Procfile has no mailer process');
  });

  it("gives the web process options node accepts, with a bounded heap (the benchmark's RSS)", () => {
    const options = nodeOptionsOf('web');
    const bound = Number(options.map((o) => /^--max-old-space-size=(\d+)$/.exec(o)?.[1]).find(Boolean));
    expect(bound).toBeGreaterThan(0);
    // The heap's limit is the old space's bound plus the young generation: three semi-spaces of
    // 16 MB, 48 MB in all (--max-semi-space-size; Node.js 24's default of 64 MB would put it 192 MB
    // above the bound, 26's 32 MB 96).
    const limit = Number(execFileSync(process.execPath, [...options, '-p', "require('v8').getHeapStatistics().heap_size_limit"], { encoding: 'utf8' })) / 2 ** 20;
    expect(limit).toBeGreaterThanOrEqual(bound);
    expect(limit).toBeLessThan(bound + 64);
  });

  it('hands a simple line to the shell with exec (the program is the process), any other as written', () => {
    expect(shellCommand('node --max-old-space-size=1024 dist/src/server.js')).toBe('exec node --max-old-space-size=1024 dist/src/server.js');
    expect(shellCommand('node dist/w.js --name "$NAME"')).toBe('exec node dist/w.js --name "$NAME"');
    for (const line of ['npm run migrate && node dist/src/server.js', 'node a.js; node b.js', 'node a.js | tee log', 'node a.js > log', '(cd dist && node a.js)', 'node $(which a)', 'node `which a`', 'NODE_ENV=production node dist/src/server.js']) {
      expect(shellCommand(line)).toBe(line);
    }
  });
});
