/**
 * scripts/build.js: builds a project once (real tsc on a small project of this test's own), skips
 * the compiler when no input changed, and builds again when one did. And package.json runs it at
 * install and before every command.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const project = mkdtempSync(join(tmpdir(), 'helpdesk-buildjs-'));
afterAll(() => rmSync(project, { recursive: true, force: true }));

function build() {
  const started = Date.now();
  const r = spawnSync(process.execPath, [join(root, 'scripts/build.js'), '--root', project], { encoding: 'utf8' });
  return { code: r.status, stderr: r.stderr, stdout: r.stdout, ms: Date.now() - started };
}

function write(path: string, text: string) {
  mkdirSync(join(project, path, '..'), { recursive: true });
  writeFileSync(join(project, path), text);
}

beforeAll(() => {
  write('tsconfig.json', JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'commonjs', strict: true, outDir: 'dist', rootDir: '.', types: [] } }));
  write('tsconfig.build.json', JSON.stringify({ extends: './tsconfig.json', compilerOptions: { incremental: true }, include: ['src'] }));
  write('src/a.ts', 'export const answer: number = 1;\n');
});

describe('scripts/build.js', () => {
  it('builds a fresh checkout, saying so', () => {
    const r = build();
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^Building: compiling the TypeScript sources into dist\//);
    expect(readFileSync(join(project, 'dist/src/a.js'), 'utf8')).toContain('exports.answer = 1');
  });

  it('does not run the compiler again when nothing changed', () => {
    const before = statSync(join(project, 'dist/src/a.js')).mtimeMs;
    const r = build();
    expect(r).toMatchObject({ code: 0, stderr: '', stdout: '' });
    expect(statSync(join(project, 'dist/src/a.js')).mtimeMs).toBe(before);
  });

  it('builds again when a source changed', () => {
    write('src/a.ts', 'export const answer: number = 2;\n');
    const r = build();
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^Building: sources changed since the last build/);
    expect(readFileSync(join(project, 'dist/src/a.js'), 'utf8')).toContain('exports.answer = 2');
  });

  it('notices a file touched without a change of size (a checkout of another branch)', () => {
    const file = join(project, 'src/a.ts');
    const later = new Date(Date.now() + 5000);
    utimesSync(file, later, later);
    expect(build().stderr).toMatch(/^Building:/);
    expect(build().stderr).toBe('');
  });

  it('fails on a type error and builds again next time (no fingerprint stored)', () => {
    write('src/b.ts', 'export const wrong: number = "text";\n');
    const failed = build();
    expect(failed.code).not.toBe(0);
    expect(failed.stdout + failed.stderr).toContain('Build failed');
    write('src/b.ts', 'export const right: number = 3;\n');
    const fixed = build();
    expect(fixed.code).toBe(0);
    expect(fixed.stderr).toMatch(/^Building:/);
    expect(existsSync(join(project, 'dist/src/b.js'))).toBe(true);
  });
});

describe('package.json', () => {
  const scripts: Record<string, string> = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts;

  it('builds at install (npm ci runs prepare)', () => {
    expect(scripts.prepare).toBe('node scripts/build.js');
  });

  // `exec`: the shell npm runs a script in gives way to node, which then gets the signals npm passes on (test/cli/start.test.ts).
  it.each(['migrate', 'seed', 'token'])('%s builds only if needed, then runs the compiled command', (name) => {
    expect(scripts[name]).toBe(`node scripts/build.js && exec node dist/src/cli/${name}.js`);
  });

  it('start builds only if needed (prestart)', () => {
    expect(scripts.prestart).toBe('node scripts/build.js');
    expect(scripts.start).toBe('exec node dist/src/cli/start.js');
  });
});
