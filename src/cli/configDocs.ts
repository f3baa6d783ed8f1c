import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configurationMarkdown } from '../configDocs';
import { projectRoot } from '../lib/projectRoot';

/** `npm run docs:config`: writes docs/configuration.md from the configuration schema. */
const path = join(projectRoot(), 'docs', 'configuration.md');
writeFileSync(path, configurationMarkdown());
process.stdout.write(`Wrote ${path}\n`);
