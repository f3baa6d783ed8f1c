import { configSchema } from './config';

/**
 * docs/configuration.md, generated from the configuration schema (src/config.ts): every variable,
 * its type and limits, its default and its description. `npm run docs:config` writes it; a test
 * fails when the file differs from what this returns.
 */
interface KeyDescription {
  type: string;
  flags?: { default?: unknown; description?: string; only?: boolean };
  rules?: Array<{ name: string; args?: Record<string, any> }>;
  allow?: unknown[];
  truthy?: unknown[];
  falsy?: unknown[];
  metas?: Array<{ default?: string }>;
}

const code = (v: unknown) => `\`${String(v)}\``;
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function typeOf(d: KeyDescription): string {
  if (d.type === 'boolean') return `${code(d.truthy?.[0] ?? 'true')} or ${code(d.falsy?.[0] ?? 'false')}`;
  if (d.flags?.only && d.allow) return d.allow.filter((v) => v !== '').map(code).join(', ');
  const rules = d.rules ?? [];
  const min = rules.find((r) => r.name === 'min')?.args?.limit;
  const max = rules.find((r) => r.name === 'max')?.args?.limit;
  if (d.type === 'number') {
    const integer = rules.some((r) => r.name === 'integer') ? 'integer' : 'number';
    return min !== undefined && max !== undefined ? `${integer} ${min}–${max}` : min !== undefined ? `${integer} ≥ ${min}` : integer;
  }
  const uri = rules.find((r) => r.name === 'uri')?.args?.options?.scheme as string[] | undefined;
  if (uri) return `URL (${uri.map((s) => `${s}:`).join(', ')})`;
  const pattern = rules.find((r) => r.name === 'pattern')?.args?.regex;
  if (pattern) return `text matching ${code(pattern)}`;
  if (min !== undefined) return `text, at least ${min} characters`;
  return 'text';
}

function defaultOf(d: KeyDescription): string {
  const meta = d.metas?.find((m) => m.default !== undefined)?.default;
  if (meta !== undefined) return meta === 'none' ? 'none' : code(meta).replace(/`(.*) \((.*)\)`/, '`$1` ($2)');
  const value = d.flags?.default;
  if (value === undefined) return 'none';
  if (value === '') return 'empty';
  if (typeof value === 'boolean') return code(value ? '1' : '0');
  return code(value);
}

export function configurationMarkdown(): string {
  const keys = (configSchema.describe() as { keys: Record<string, KeyDescription> }).keys;
  const rows = Object.entries(keys).map(([name, d]) =>
    `| ${code(name)} | ${cell(typeOf(d))} | ${cell(defaultOf(d))} | ${cell(d.flags?.description ?? '')} |`);
  return `<!-- Generated from src/config.ts by \`npm run docs:config\`; do not edit by hand (a test fails when it is stale). -->
# Configuration

Every process reads its settings from the environment (and from a \`.env\` file in the project's
directory when there is one: see \`.env.example\`; a variable already set in the environment wins).
Each is validated when the process starts: a bad value stops it with one line on stderr that names
the variable (\`Invalid configuration: PORT must be a number\`) and exit code 1. A \`.env\` line that
is not \`NAME=value\` (\`export NAME=value\` and quoted values over several lines too), a \`#\`
comment or blank stops it the same way, naming the file and the line.

| variable | type | default | meaning |
| --- | --- | --- | --- |
${rows.join('\n')}
`;
}
