// Imported first by redis-restart.test.ts, before any module reads the configuration: a Redis
// of the test's own, and schedules fast enough to watch.
import { freePortsSync } from '../helpers/ports';

export const [RESTART_REDIS_PORT] = freePortsSync(1);
process.env.REDIS_URL = `redis://127.0.0.1:${RESTART_REDIS_PORT}`;
process.env.OUTBOX_SWEEP_EVERY_MS = '200';
process.env.OUTBOX_SWEEP_AFTER_MS = '0';
process.env.OUTBOX_REPUBLISH_AFTER_MS = '1000';
