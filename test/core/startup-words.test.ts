/**
 * What a process says when the database is not there yet, not migrated, or does not answer, and
 * the port variable a listen error names: real errors of the driver and of a listen.
 */
import { createServer, type Server } from 'node:net';
import * as mariadb from 'mariadb';
import { config } from '../../src/config';
import { startupErrorMessage, withPortSetting } from '../../src/lib/exitOnStartupError';
import { mariadbProblem } from '../../src/lib/serviceErrors';
import { select } from '../../src/db/select';
import { useApi } from '../helpers/app';
import { silentServer } from '../helpers/silentServer';

useApi();
const server = () => new URL(config().database.url);
const connectError = (opts: mariadb.ConnectionConfig) => {
  const url = server();
  return mariadb.createConnection({ host: url.hostname, port: Number(url.port || 3306), user: decodeURIComponent(url.username || 'root'), password: decodeURIComponent(url.password), ...opts })
    .then((c) => { void c.end(); throw new Error('connected'); }, (err: unknown) => err);
};

describe('MariaDB without the database or its tables', () => {
  it('a missing database: run `npm run seed`', async () => {
    const name = `${config().database.name}_none`;
    const err = await connectError({ database: name });
    expect(mariadbProblem(err, `mariadb://root:pw@db:3306/${name}`)).toBe(
      `MariaDB at mariadb://root:****@db:3306/${name} (DATABASE_URL) has no database \`${name}\`: run \`npm run seed\` first (it creates the database, migrates it and adds the records a new install needs).`);
  });

  it('a missing table, as sequelize reports it: the database is not migrated', async () => {
    const err = await select('SELECT name FROM no_such_table_here').then(() => null, (e: unknown) => e);
    expect(mariadbProblem(err, 'mariadb://root@db/helpdesk')).toBe(
      'MariaDB at mariadb://root@db/helpdesk (DATABASE_URL) has no table `no_such_table_here`: the database is not migrated; run `npm run seed` (it migrates, and adds the records a new install needs).');
  });
});

describe('MariaDB that does not answer', () => {
  it('names DATABASE_URL and how long the driver waited', async () => {
    const silent = await silentServer();
    try {
      const { port } = silent;
      const err = await mariadb.createConnection({ host: '127.0.0.1', port, connectTimeout: 300 }).then(() => null, (e: unknown) => e);
      expect(mariadbProblem(err, `mariadb://root@127.0.0.1:${port}/x`)).toMatch(new RegExp(
        `^MariaDB at mariadb://root@127\\.0\\.0\\.1:${port}/x \\(DATABASE_URL\\) is unreachable \\(timed out after \\d+ ms\\): check that MariaDB is running and listening there, or set DATABASE_URL\\.$`));
    } finally {
      silent.close();
    }
  });
});

describe('an address to listen on that is not this machine\'s', () => {
  const listenError = (host: string) => new Promise<unknown>((resolve) => {
    createServer().once('error', resolve).listen(0, host);
  });
  it('names HOST, or the host variable beside the server\'s own port variable', async () => {
    // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never an address of this machine.
    expect(startupErrorMessage(withPortSetting(await listenError('192.0.2.1'), 'PORT'))).toBe('Startup failed: 192.0.2.1 is not an address of this machine (set HOST).');
    expect(startupErrorMessage(withPortSetting(await listenError('192.0.2.1'), 'METRICS_PORT'))).toBe('Startup failed: 192.0.2.1 is not an address of this machine (set METRICS_HOST).');
    expect(startupErrorMessage(withPortSetting(await listenError('not-a-host.invalid'), 'MAIL_CATCHER_PORT')))
      .toBe('Startup failed: not-a-host.invalid does not resolve to an address (set MAIL_CATCHER_HOST).');
  });
});

describe('a port in use', () => {
  it('names PORT, or the variable the server says is its own', async () => {
    const holder: Server = await new Promise((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => resolve(s));
    });
    try {
      const { port } = holder.address() as { port: number };
      const listenError = () => new Promise<unknown>((resolve) => {
        createServer().once('error', resolve).listen(port, '127.0.0.1');
      });
      expect(startupErrorMessage(await listenError())).toBe(`Startup failed: port ${port} on 127.0.0.1 is already in use (set PORT to a free port).`);
      expect(startupErrorMessage(withPortSetting(await listenError(), 'MAIL_CATCHER_PORT')))
        .toBe(`Startup failed: port ${port} on 127.0.0.1 is already in use (set MAIL_CATCHER_PORT to a free port).`);
    } finally {
      holder.close();
    }
  });
});
