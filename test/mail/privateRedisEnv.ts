// Imported first by redis-outage.test.ts: points the app at a Redis the test owns, before any
// module reads the configuration.
import { freePortsSync } from '../helpers/ports';

export const [PRIVATE_REDIS_PORT] = freePortsSync(1);
process.env.REDIS_URL = `redis://127.0.0.1:${PRIVATE_REDIS_PORT}`;
