import { GALERA_DB as DB, NODE1_PORT, NODE2_PORT } from './galeraEnv';
import request from 'supertest';
import { buildApp } from '../../src/app';
import { createToken } from '../../src/auth/tokens';
import { config } from '../../src/config';
import { ensureDatabase } from '../../src/db/ensureDatabase';
import { migrate } from '../../src/db/migrator';
import { sequelize } from '../../src/db/sequelize';
import { closeQueues } from '../../src/queue/producer';
import { closeCounters } from '../../src/redis/windowCounter';
import { seed } from '../../src/seed/seed';
import { expectSuccess } from '../helpers/envelope';
import { newEmail } from '../helpers/app';
import { MariadbServer } from '../helpers/mariadbServer';
import { freePort } from '../helpers/ports';

/**
 * The schema on a two-node Galera cluster (Debian's galera-4) of the test's own, on private
 * ports, with the strictest checks Galera has: `wsrep_mode` REQUIRED_PRIMARY_KEY (a table without
 * a primary key is refused) and STRICT_REPLICATION (writes to tables Galera does not replicate,
 * MyISAM or Aria, are refused). Every migration and the seed run there, from two processes at
 * once through both nodes, and the ticket counters' triggers are seen to replicate.
 */
let node1: MariadbServer;
let node2: MariadbServer;

beforeAll(async () => {
  const [g1, g2, ist1, ist2, sst1, sst2] = await Promise.all(Array.from({ length: 6 }, () => freePort()));
  const galera = (gcomm: number, ist: number, sst: number, join: string) => [
    '--wsrep-on=ON', '--wsrep-provider=/usr/lib/galera/libgalera_smm.so', `--wsrep-cluster-address=gcomm://${join}`,
    '--wsrep-cluster-name=helpdesk_test', `--wsrep-node-address=127.0.0.1:${gcomm}`,
    `--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:${gcomm};ist.recv_addr=127.0.0.1:${ist};gcache.size=16M`,
    `--wsrep-sst-receive-address=127.0.0.1:${sst}`, '--wsrep-sst-method=rsync',
    '--wsrep-mode=REQUIRED_PRIMARY_KEY,STRICT_REPLICATION',
    '--binlog-format=ROW', '--innodb-autoinc-lock-mode=2', '--default-storage-engine=InnoDB',
  ];
  node1 = new MariadbServer(1, NODE1_PORT, galera(g1, ist1, sst1, ''));
  node2 = new MariadbServer(2, NODE2_PORT, galera(g2, ist2, sst2, `127.0.0.1:${g1}`));
  await node1.start();
  await node2.start();
  const [size] = await node2.query("SHOW STATUS LIKE 'wsrep_cluster_size'");
  expect(size.Value).toBe('2');
});

afterAll(async () => {
  try {
    await closeQueues();
    closeCounters();
    await sequelize().close();
  } finally {
    await node2?.remove();
    await node1?.remove();
  }
});

/** Rows read on `node` once it applied everything committed anywhere in the cluster (causal read). */
async function rowsOn(node: MariadbServer, sql: string): Promise<any[]> {
  const c = await node.connect();
  try {
    await c.query('SET SESSION wsrep_sync_wait = 1');
    return await c.query(sql);
  } finally {
    await c.end();
  }
}

test('GET_LOCK holds on its node only (why the migrator locks with a row on Galera)', async () => {
  const c = await node1.connect();
  try {
    expect(Number((await c.query("SELECT GET_LOCK('hd_probe', 0) AS got"))[0].got)).toBe(1);
    expect(Number((await node2.query("SELECT GET_LOCK('hd_probe', 0) AS got"))[0].got)).toBe(1);
  } finally {
    await c.end();
  }
});

test('every migration and the seed run on the cluster, migrating through both nodes at once; each migration is applied once', async () => {
  expect(config().database.port).toBe(node1.port);
  await ensureDatabase();
  // Node 2 may not have applied the CREATE DATABASE yet (a loaded machine): a causal read there
  // waits until it has, before a migrator connects to it by the database's name.
  expect(await rowsOn(node2, `SELECT SCHEMA_NAME AS s FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = '${DB}'`)).toEqual([{ s: DB }]);
  await Promise.all([migrate(), migrate({ ...config().database, port: node2.port })]);
  await seed();
  const applied = (node: MariadbServer) => rowsOn(node, `SELECT name FROM ${DB}.migrations ORDER BY name`);
  const names = (await applied(node1)).map((r) => r.name);
  expect(names.length).toBeGreaterThan(10);
  expect(new Set(names).size).toBe(names.length);
  expect((await applied(node2)).map((r) => r.name)).toEqual(names);
  expect(await rowsOn(node1, `SELECT * FROM ${DB}.migration_lock`)).toEqual([]);
});

test('every table has a primary key and is InnoDB, and both nodes have the same tables and triggers', async () => {
  const tables = `SELECT TABLE_NAME AS t, ENGINE AS engine FROM information_schema.TABLES WHERE TABLE_SCHEMA = '${DB}' AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME`;
  const rows = await rowsOn(node2, tables);
  expect(rows.length).toBeGreaterThan(20);
  expect(rows.filter((r) => r.engine !== 'InnoDB')).toEqual([]);
  const withoutKey = await rowsOn(node2, `SELECT t.TABLE_NAME AS t FROM information_schema.TABLES t
    LEFT JOIN information_schema.TABLE_CONSTRAINTS k ON k.TABLE_SCHEMA = t.TABLE_SCHEMA AND k.TABLE_NAME = t.TABLE_NAME AND k.CONSTRAINT_TYPE = 'PRIMARY KEY'
    WHERE t.TABLE_SCHEMA = '${DB}' AND t.TABLE_TYPE = 'BASE TABLE' AND k.CONSTRAINT_NAME IS NULL`);
  expect(withoutKey).toEqual([]);
  expect(await rowsOn(node1, tables)).toEqual(rows);
  const triggers = `SELECT TRIGGER_NAME AS t FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = '${DB}' ORDER BY TRIGGER_NAME`;
  const names = (await rowsOn(node2, triggers)).map((r) => r.t);
  expect(names).toEqual(expect.arrayContaining(['tickets_list_counts_insert', 'tickets_list_counts_update', 'tickets_list_counts_delete']));
  expect((await rowsOn(node1, triggers)).map((r) => r.t)).toEqual(names);
});

test('a ticket made through node 1 moves the list counters (triggers) on node 2 alike', async () => {
  const app = buildApp();
  const { token } = await createToken('galera');
  const counted = async (node: MariadbServer) => Number((await rowsOn(node, `SELECT COALESCE(SUM(n), 0) AS n FROM ${DB}.ticket_list_counts`))[0].n);
  const before = await counted(node2);
  const [{ brand, department }] = await node1.query(`SELECT brand_id AS brand, department_id AS department FROM ${DB}.department_brands ORDER BY department_id LIMIT 1`);
  const [{ priority }] = await node1.query(`SELECT id AS priority FROM ${DB}.ticket_priorities ORDER BY id LIMIT 1`);
  const [{ status }] = await node1.query(`SELECT id AS status FROM ${DB}.ticket_statuses ORDER BY id LIMIT 1`);
  const created = expectSuccess(await request(app).post('/api/ticket/ticket').auth(token, 'x').type('form')
    .send({ brand, department, priority, status, subject: 'On a cluster', text: 'Hello', user_email: newEmail('galera') }), 'Successfully created new ticket!');
  expect(created.id).toBeGreaterThan(0);
  expect(await counted(node1)).toBe(before + 1);
  expect(await counted(node2)).toBe(before + 1);
  expect(await rowsOn(node2, `SELECT * FROM ${DB}.ticket_list_counts ORDER BY slot`)).toEqual(await rowsOn(node1, `SELECT * FROM ${DB}.ticket_list_counts ORDER BY slot`));
});
