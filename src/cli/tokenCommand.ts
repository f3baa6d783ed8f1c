import { readOptions, type Io } from './args';
import { ApiToken } from '../db/models';
import { createToken, revokeToken } from '../auth/tokens';
import { ScopeError, parseScopes } from '../auth/scopes';
import { now } from '../db/entity';

export const TOKEN_USAGE = `usage:
  npm run --silent token -- create --name NAME [--scopes S,S] [--expires-in 90d]
                                                 prints the new token (alone, once)
      scopes: read, write, or core|user|ticket|selfservice:read|write (write implies read);
              no --scopes: full access. expires-in: a number of h (hours), d (days) or w (weeks).
  npm run --silent token -- list                 lists tokens (never their values)
  npm run --silent token -- revoke ID|NAME       deletes a token (a number is an id; a name, every token of that name)
`;

const UNIT_SECONDS: Record<string, number> = { h: 3600, d: 86400, w: 7 * 86400 };

/** `90d` → seconds; null when it is not a positive number of h, d or w (at most 10 years). */
export function parseDuration(text: string): number | null {
  const m = /^(\d{1,6})([hdw])$/.exec(text.trim());
  const seconds = m ? Number(m[1]) * UNIT_SECONDS[m[2]] : 0;
  return seconds > 0 && seconds <= 3650 * 86400 ? seconds : null;
}

const fmt = (t: number | null) => (t ? new Date(t * 1000).toISOString() : '-');

/** `token create|list|revoke`; returns the exit code. The database must be prepared. */
export async function tokenCommand(argv: string[], io: Io): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'create') {
    const options = readOptions(rest, ['--name', '--scopes', '--expires-in'], io, 'token create', TOKEN_USAGE);
    if (!options) return 2;
    const name = options['--name'];
    if (!name || name.length > 100) {
      io.err('token create needs --name NAME (at most 100 characters)\n');
      return 2;
    }
    // `revoke 12` reads 12 as an id: a token named 12 could never be revoked by its name.
    if (/^\d+$/.test(name)) {
      io.err('token create: --name must not be only digits (revoke reads a number as a token id)\n');
      return 2;
    }
    const scopesArg = options['--scopes'];
    let scopes: string[] | null = null;
    try {
      if (scopesArg !== undefined) scopes = parseScopes(scopesArg);
    } catch (err) {
      if (!(err instanceof ScopeError)) throw err;
      io.err(`token create: ${err.message}\n`);
      return 2;
    }
    const expiresArg = options['--expires-in'];
    const lifetime = expiresArg === undefined ? null : parseDuration(expiresArg);
    if (expiresArg !== undefined && lifetime === null) {
      io.err('token create: --expires-in needs a number of hours, days or weeks, such as 12h, 90d or 8w (at most 10 years)\n');
      return 2;
    }
    const { token } = await createToken(name, undefined, { scopes, expiresAt: lifetime === null ? null : now() + lifetime });
    io.out(`${token}\n`);
    return 0;
  }
  if (command === 'list') {
    const rows = await ApiToken.findAll({ order: [['id', 'ASC']] });
    io.out('id\tname\tcreated\tlast used\tscopes\texpires\n');
    for (const r of rows) {
      const scopes = r.scopes ? (JSON.parse(r.scopes) as string[]).join(',') : 'full access';
      const expired = r.expires_at !== null && r.expires_at <= now() ? ' (expired)' : '';
      io.out(`${r.id}\t${r.name}\t${fmt(r.created_at)}\t${fmt(r.last_used_at)}\t${scopes}\t${fmt(r.expires_at)}${expired}\n`);
    }
    return 0;
  }
  if (command === 'revoke') {
    if (!rest[0]) {
      io.err('token revoke needs an id or a name\n');
      return 2;
    }
    const n = await revokeToken(rest[0]);
    if (!n) {
      io.err(`token revoke: no token has the ${/^\d+$/.test(rest[0]) ? 'id' : 'name'} ${rest[0]}\n`);
      return 1;
    }
    io.out(`Revoked ${n} token${n === 1 ? '' : 's'}.\n`);
    return 0;
  }
  io.err(TOKEN_USAGE);
  return 2;
}
