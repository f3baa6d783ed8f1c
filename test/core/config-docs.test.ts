/** docs/configuration.md is what the configuration schema generates: regenerate it with `npm run docs:config`. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, configSchema, loadDotEnv } from '../../src/config';
import { startupErrorMessage } from '../../src/lib/exitOnStartupError';
import { configurationMarkdown } from '../../src/configDocs';

describe('docs/configuration.md', () => {
  it('is up to date with src/config.ts (run `npm run docs:config`)', () => {
    expect(readFileSync(join(__dirname, '../../docs/configuration.md'), 'utf8')).toBe(configurationMarkdown());
  });

  it('describes every variable of the schema', () => {
    const keys = (configSchema.describe() as { keys: Record<string, { flags?: { description?: string } }> }).keys;
    const undescribed = Object.entries(keys).filter(([, d]) => !d.flags?.description).map(([k]) => k);
    expect(undescribed).toEqual([]);
    for (const name of Object.keys(keys)) expect(configurationMarkdown()).toContain(`| \`${name}\` |`);
  });

  it('shows types, defaults and choices from the schema', () => {
    const md = configurationMarkdown();
    expect(md).toContain('| `PORT` | integer 0–65535 | `3000` | web port |');
    expect(md).toMatch(/\| `LOG_LEVEL` \| `fatal`, `error`, `warn`, `info`, `debug`, `trace`, `silent` \| `info` \|/);
    expect(md).toMatch(/\| `APP_URL` \| URL \(http:, https:\) \| `http:\/\/127\.0\.0\.1:\$PORT` \|/);
    expect(md).toMatch(/\| `MAIL_REPLY_SUBADDRESS` \| `1` or `0` \| `0` \|/);
  });
});

describe('.env', () => {
  const { mkdtempSync, writeFileSync: write } = require('node:fs') as typeof import('node:fs');
  const dir = mkdtempSync(join(require('node:os').tmpdir(), 'helpdesk-dotenv-'));
  const file = join(dir, '.env');
  const probe = `HELPDESK_DOTENV_PROBE_${process.pid}`;

  it('is loaded when present, and a variable of the environment wins', () => {
    write(file, `# a comment\n${probe}=from-file\n${probe}_KEPT="from file"\n`);
    const env: NodeJS.ProcessEnv = { NODE_ENV: 'development', [`${probe}_KEPT`]: 'from-environment' };
    expect(loadDotEnv(file, env)).toBe(true);
    expect(env).toEqual({ NODE_ENV: 'development', [probe]: 'from-file', [`${probe}_KEPT`]: 'from-environment' });
  });

  it('reads comments, blank lines, `export NAME=value` and quoted values over several lines', () => {
    write(file, `# settings\n\nexport ${probe}_A=1\n${probe}_B="two\nlines # not a comment"\n  ${probe}_C = 'x' # note\n${probe}_D=\n`);
    const env: NodeJS.ProcessEnv = { NODE_ENV: 'development' };
    expect(loadDotEnv(file, env)).toBe(true);
    expect(env).toEqual({ NODE_ENV: 'development', [`${probe}_A`]: '1', [`${probe}_B`]: 'two\nlines # not a comment', [`${probe}_C`]: 'x', [`${probe}_D`]: '' });
  });

  it('refuses a line that is not NAME=value, a comment or blank, naming the file and the line, and loads nothing', () => {
    // parseEnv made `my test database\nDATABASE_URL` one name: DATABASE_URL was dropped, and the default database used.
    write(file, `# my settings\n${probe}_A=1\nmy test database\nDATABASE_URL=mariadb://root@127.0.0.1:3306/helpdesk_qa4\n`);
    const env: NodeJS.ProcessEnv = { NODE_ENV: 'development' };
    let error: unknown;
    try {
      loadDotEnv(file, env);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(startupErrorMessage(error)).toBe(`Invalid configuration: ${file} line 3 is not NAME=value, a comment or blank`);
    expect(env).toEqual({ NODE_ENV: 'development' });
  });

  it('is not loaded under tests, nor when missing', () => {
    write(file, `${probe}=from-file\n`);
    const env: NodeJS.ProcessEnv = { NODE_ENV: 'test' };
    expect(loadDotEnv(file, env)).toBe(false);
    expect(env).toEqual({ NODE_ENV: 'test' });
    expect(loadDotEnv(join(dir, 'missing.env'), { NODE_ENV: 'development' })).toBe(false);
  });

  it('has an example naming only real variables', () => {
    const example = readFileSync(join(__dirname, '../../.env.example'), 'utf8');
    const named = [...example.matchAll(/^#? ?([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]);
    expect(named.length).toBeGreaterThan(5);
    const keys = Object.keys((configSchema.describe() as { keys: object }).keys);
    expect(named.filter((n) => !keys.includes(n))).toEqual([]);
  });
});
