import { ApiToken } from '../db/models';
import { createToken, revokeToken } from '../auth/tokens';

export const TOKEN_USAGE = `usage:
  npm run --silent token -- create --name NAME   prints the new token (alone, once)
  npm run --silent token -- list                 lists tokens (never their values)
  npm run --silent token -- revoke ID|NAME       deletes a token
`;

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

const fmt = (t: number | null) => (t ? new Date(t * 1000).toISOString() : '-');

/** `token create|list|revoke`; returns the exit code. The database must be prepared. */
export async function tokenCommand(argv: string[], io: Io): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'create') {
    const i = rest.indexOf('--name');
    const name = i >= 0 ? rest[i + 1]?.trim() : undefined;
    if (!name || name.length > 100) {
      io.err('token create needs --name NAME (at most 100 characters)\n');
      return 2;
    }
    const { token } = await createToken(name);
    io.out(`${token}\n`);
    return 0;
  }
  if (command === 'list') {
    const rows = await ApiToken.findAll({ order: [['id', 'ASC']] });
    io.out('id\tname\tcreated\tlast used\n');
    for (const r of rows) io.out(`${r.id}\t${r.name}\t${fmt(r.created_at)}\t${fmt(r.last_used_at)}\n`);
    return 0;
  }
  if (command === 'revoke') {
    if (!rest[0]) {
      io.err('token revoke needs an id or a name\n');
      return 2;
    }
    const n = await revokeToken(rest[0]);
    io.out(`Revoked ${n} token${n === 1 ? '' : 's'}.\n`);
    return n ? 0 : 1;
  }
  io.err(TOKEN_USAGE);
  return 2;
}
