import { freePortsSync } from '../helpers/ports';
import { testPrefix } from '../helpers/testPrefix';

// Imported first by read-replicas.test.ts: points the app at a primary and a replica the test
// starts on these ports, before any module reads the configuration.
export const [PRIMARY_PORT, REPLICA_PORT] = freePortsSync(2);
export const REPLICA_DB = `${testPrefix()}replicas`;
export const MAX_LAG = 8;
process.env.DATABASE_URL = `mariadb://root@127.0.0.1:${PRIMARY_PORT}/${REPLICA_DB}`;
process.env.DATABASE_READ_URLS = `mariadb://root@127.0.0.1:${REPLICA_PORT}/${REPLICA_DB}`;
process.env.DATABASE_READ_CHECK_MS = '100';
process.env.DATABASE_READ_MAX_LAG_SECONDS = String(MAX_LAG);
process.env.DATABASE_READ_YOUR_WRITES_SECONDS = '30';
