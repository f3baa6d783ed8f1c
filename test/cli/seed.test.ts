/**
 * `npm run seed` takes no arguments: `--help` prints its usage (exit 0) and anything else is
 * refused (exit 2), neither touching the database. It read none, so `npm run seed -- --help`
 * created and migrated the database: an upgrade under a running release (found by a black-box
 * audit of the first hour).
 */
import * as mariadb from 'mariadb';
import { config } from '../../src/config';
import { SEED_USAGE, seedCommand } from '../../src/cli/seedCommand';

// A database name of its own (like the worker's, so a killed run's teardown drops it too), never created.
const name = `${config().database.name}9003`;
let conn: mariadb.Connection;

async function run(...argv: string[]) {
  let out = '';
  let err = '';
  const code = await seedCommand(argv, { out: (t) => { out += t; }, err: (t) => { err += t; } });
  return { code, out, err };
}
const databaseExists = async () => Number((await conn.query('SELECT COUNT(*) AS n FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [name]))[0].n) === 1;

beforeAll(async () => {
  const db = config().database;
  conn = await mariadb.createConnection({ host: db.host, port: db.port, user: db.user, password: db.password });
  await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
  // The command's database is this one (config() reads DATABASE_URL once: the test points it here).
  config().database.name = name;
});
afterAll(async () => {
  await conn?.query(`DROP DATABASE IF EXISTS \`${name}\``);
  await conn?.end();
});

it.each(['--help', '-h', 'help'])('`%s`: the usage on stdout, exit 0, nothing created', async (arg) => {
  expect(await run(arg)).toEqual({ code: 0, out: SEED_USAGE, err: '' });
  expect(await databaseExists()).toBe(false);
});

it.each([['bogus', 'bogus'], ['--help extra', '--help'], ['--force', '--force']])('`%s`: named, with the usage, on stderr, exit 2, nothing created', async (args, named) => {
  expect(await run(...args.split(' '))).toEqual({ code: 2, out: '', err: `Unexpected argument: ${named}.\n${SEED_USAGE}` });
  expect(await databaseExists()).toBe(false);
});
