import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The project's directory: the nearest folder above this module with a package.json (src/ or dist/src/). */
export function projectRoot(): string {
  let dir = __dirname;
  while (!existsSync(join(dir, 'package.json'))) {
    if (dirname(dir) === dir) throw new Error(`No package.json above ${__dirname}`);
    dir = dirname(dir);
  }
  return dir;
}
