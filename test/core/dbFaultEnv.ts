// Imported first by db-faults.test.ts, before any module reads the configuration: the database is
// reached through a TCP proxy of the test (on this port) that can drop packets or refuse
// connections, with short timeouts.
import { freePortsSync } from '../helpers/ports';

const [port] = freePortsSync(1);
process.env.DB_FAULT_PROXY_PORT = String(port);
const url = new URL(process.env.DATABASE_URL!);
process.env.DB_FAULT_UPSTREAM = `${url.hostname}:${url.port || 3306}`;
url.host = `127.0.0.1:${port}`;
process.env.DATABASE_URL = url.toString();
process.env.DATABASE_CONNECT_TIMEOUT_MS = '1000';
process.env.DATABASE_SOCKET_TIMEOUT_MS = '2000';
process.env.DATABASE_ACQUIRE_TIMEOUT_MS = '3000';
