import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/lib/projectRoot';

const root = projectRoot();

/**
 * A compiled copy of the processes (src, workers, migrations) in a temporary directory of the
 * test's own: process tests run the entry points as the Procfile does, without touching `dist/`
 * (which another run or `npm start` may be using). `build()` compiles (call it in beforeAll),
 * `remove()` deletes the directory (afterAll); `dir` may hold the test's other files.
 */
export function privateBuild(name: string) {
  const dir = mkdtempSync(join(tmpdir(), `helpdesk-${name}-`));
  const dist = join(dir, 'dist');
  return {
    dir,
    dist,
    build(): void {
      const tsconfig = join(dir, 'tsconfig.json');
      writeFileSync(tsconfig, JSON.stringify({
        extends: join(root, 'tsconfig.build.json'),
        compilerOptions: { outDir: dist, typeRoots: [join(root, 'node_modules', '@types')], incremental: false },
        include: ['src', 'workers', 'migrations'].map((d) => join(root, d)),
      }));
      execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', tsconfig], { stdio: 'inherit' });
    },
    remove: (): void => rmSync(dir, { recursive: true, force: true }),
  };
}
