// Imported first by cluster-failover.test.ts, before any module reads the configuration: the app's
// Redis is a cluster of the test's own (three masters on the first three ports, a replica each on
// the others, made by the test), and the scheduler sweeps the outbox every 200 ms, re-adding what
// was published but is not processed 2 s later (a job that died with a master).
import { freePortsSync } from '../helpers/ports';

export const CLUSTER_PORTS = freePortsSync(6);
Object.assign(process.env, {
  REDIS_CLUSTER_NODES: CLUSTER_PORTS.slice(0, 3).map((p) => `127.0.0.1:${p}`).join(','),
  OUTBOX_SWEEP_EVERY_MS: '200', OUTBOX_SWEEP_AFTER_MS: '0', OUTBOX_REPUBLISH_AFTER_MS: '2000',
});
