import { freePortsSync } from '../helpers/ports';
import { testPrefix } from '../helpers/testPrefix';

// Imported first by galera.test.ts: points the app at the first node of a Galera cluster the test
// starts on these ports, before any module reads the configuration.
export const [NODE1_PORT, NODE2_PORT] = freePortsSync(2);
export const GALERA_DB = `${testPrefix()}galera`;
process.env.DATABASE_URL = `mariadb://root@127.0.0.1:${NODE1_PORT}/${GALERA_DB}`;
