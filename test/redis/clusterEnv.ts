// Imported first by cluster.test.ts, before any module reads the configuration: the app's Redis is
// a three-node cluster of the test's own (on these ports, made by the test).
import { freePortsSync } from '../helpers/ports';

export const CLUSTER_PORTS = freePortsSync(3);
process.env.REDIS_CLUSTER_NODES = CLUSTER_PORTS.map((p) => `127.0.0.1:${p}`).join(',');
