import { ApiToken } from '../db/models';
import { createToken, revokeToken } from '../auth/tokens';
import { sequelize } from '../db/sequelize';
import { exitOnStartupError } from './exitOnStartupError';
import { prepareDatabase } from './setup';

const USAGE = `usage:
  npm run --silent token -- create --name NAME   prints the new token (alone, once)
  npm run --silent token -- list                 lists tokens (never their values)
  npm run --silent token -- revoke ID|NAME       deletes a token
`;

const fmt = (t: number | null) => (t ? new Date(t * 1000).toISOString() : '-');

async function main(argv: string[]) {
  const [command, ...rest] = argv;
  if (!['create', 'list', 'revoke'].includes(command)) {
    process.stderr.write(USAGE);
    process.exitCode = 2;
    return;
  }
  await prepareDatabase();
  try {
    if (command === 'create') {
      const i = rest.indexOf('--name');
      const name = i >= 0 ? rest[i + 1] : undefined;
      if (!name || name.length > 100) {
        process.stderr.write('token create needs --name NAME (at most 100 characters)\n');
        process.exitCode = 2;
        return;
      }
      const { token } = await createToken(name);
      process.stdout.write(`${token}\n`);
    } else if (command === 'list') {
      const rows = await ApiToken.findAll({ order: [['id', 'ASC']] });
      process.stdout.write('id\tname\tcreated\tlast used\n');
      for (const r of rows) process.stdout.write(`${r.id}\t${r.name}\t${fmt(r.created_at)}\t${fmt(r.last_used_at)}\n`);
    } else {
      if (!rest[0]) {
        process.stderr.write('token revoke needs an id or a name\n');
        process.exitCode = 2;
        return;
      }
      const n = await revokeToken(rest[0]);
      process.stdout.write(`Revoked ${n} token${n === 1 ? '' : 's'}.\n`);
      if (!n) process.exitCode = 1;
    }
  } finally {
    await sequelize().close();
  }
}

main(process.argv.slice(2)).catch(exitOnStartupError);
