#!/usr/bin/env node
/**
 * Builds dist/ once, and again only when a source changed. `npm ci` runs it (the `prepare` script);
 * `npm start`, `npm run token`, `migrate` and `seed` run it first and it returns at once on a built
 * checkout. It compares a fingerprint of the inputs (every source file's path, size and mtime, the
 * tsconfig files and package-lock.json) with the one stored in dist/ by the last build; when they
 * differ it says so and runs `tsc -p tsconfig.build.json` (incremental: its build info holds each file's hash, so a file changed while a build ran is compiled the next time, which `tsc -b`'s timestamp check would miss).
 *
 *   node scripts/build.js [--root DIR] [--force]
 *
 * Plain JavaScript: it runs before anything is compiled.
 */
'use strict';
const { createHash } = require('node:crypto');
const { spawnSync } = require('node:child_process');
const { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } = require('node:fs');
const { join, relative } = require('node:path');

const SOURCE_DIRS = ['src', 'workers', 'migrations', 'bench'];
const SOURCE_FILES = ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];
const STAMP = join('dist', '.build-fingerprint');

function walk(dir, out) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory()) walk(path, out);
    else if (e.isFile() && e.name.endsWith('.ts')) out.push(path);
  }
  return out;
}

/** A hash of every input's path, size and modification time. */
function fingerprint(root) {
  const files = SOURCE_DIRS.flatMap((d) => walk(join(root, d), []))
    .concat(SOURCE_FILES.map((f) => join(root, f)).filter((f) => existsSync(f)))
    .sort();
  const hash = createHash('sha256');
  for (const f of files) {
    const s = statSync(f);
    hash.update(`${relative(root, f)}\0${s.size}\0${s.mtimeMs}\n`);
  }
  return hash.digest('hex');
}

/** Builds when the inputs differ from the last build's; returns whether it built. */
function ensureBuilt(root, { force = false, log = (t) => process.stderr.write(t) } = {}) {
  const stamp = join(root, STAMP);
  const now = fingerprint(root);
  const before = existsSync(stamp) ? readFileSync(stamp, 'utf8').trim() : null;
  if (!force && before === now) return false;
  let tsc;
  try {
    tsc = require.resolve('typescript/bin/tsc', { paths: [root, __dirname] });
  } catch {
    // A production install (`npm ci --omit=dev`) has no compiler: it runs a dist/ built elsewhere.
    log('Not building: TypeScript is not installed (npm ci --omit=dev); using dist/ as it is.\n');
    return false;
  }
  log(before === null
    ? 'Building: compiling the TypeScript sources into dist/ (first build, about a minute on a slow machine)...\n'
    : 'Building: sources changed since the last build, compiling what changed into dist/...\n');
  const started = Date.now();
  const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    log('Build failed (tsc reported the errors above).\n');
    process.exit(result.status || 1);
  }
  mkdirSync(join(root, 'dist'), { recursive: true });
  writeFileSync(stamp, `${now}\n`);
  log(`Built in ${((Date.now() - started) / 1000).toFixed(1)} s.\n`);
  return true;
}

module.exports = { ensureBuilt, fingerprint };

if (require.main === module) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--root');
  const root = at >= 0 ? args[at + 1] : join(__dirname, '..');
  ensureBuilt(root, { force: args.includes('--force') });
}
